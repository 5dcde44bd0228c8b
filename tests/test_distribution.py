"""Issue 56, item 1: one distribution a user can install. The wheel carries the whole package (the Pulumi program,
templates, data files, the shipped stacks), declares the pinned requirements as its dependencies, and runs from any
directory when installed as a plain (not editable) package, with nothing of the checkout on the path.

CI proves the same with `pip install .` into a fresh virtualenv (.ci/install-check); this test builds the wheel from
a copy of the tracked files, so that it writes only under its temporary directory."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The distribution's wheel, built without network from a copy of the tracked files."""
    root = tmp_path_factory.mktemp("dist")
    src = root / "src"
    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (REPO / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-cache-dir", "-w", str(root / "wheels"), str(src)], check=True, capture_output=True)
    (built,) = (root / "wheels").glob("dbx_ai_infra-*.whl")
    return built


def _pins(requirements: Path) -> list[str]:
    lines = (line.split("#")[0].strip() for line in requirements.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("-")]


def test_the_wheel_carries_the_program_its_data_and_the_shipped_stacks(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files", "dbx_ai_infra", "stackplan", "stacks"],
                             capture_output=True, text=True, check=True).stdout.split()
    expected = {f"dbx_ai_infra/{name}" if name.startswith("stacks/") else name for name in tracked}
    assert expected <= names, sorted(expected - names)
    assert "dbx_ai_infra/program.py" in names and "dbx_ai_infra/stacks/Pulumi.dev.yaml" in names
    assert {n.split("/")[0] for n in names if not n.startswith("dbx_ai_infra-")} == {"dbx_ai_infra", "stackplan"}


def test_the_wheel_depends_on_the_pinned_requirements_and_names_the_command(wheel):
    archive = zipfile.ZipFile(wheel)
    meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    text = archive.read(meta).decode()
    required = [v.replace(" ", "") for v in re.findall(r"^Requires-Dist: ([^;\n]+)$", text, re.M)]
    assert required == [p.replace(" ", "") for p in _pins(REPO / "requirements.txt")]
    extras = {e: [v.replace(" ", "") for v in re.findall(rf"^Requires-Dist: (.+?) ?; extra == \"{e}\"$", text, re.M)]
              for e in ("databricks", "spark")}
    assert extras == {e: [p.replace(" ", "") for p in _pins(REPO / f"requirements-{e}.txt")] for e in extras}
    points = next(n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt"))
    assert "stackplan = dbx_ai_infra.__main__:run" in archive.read(points).decode()


def test_the_installed_package_runs_from_any_directory_without_the_checkout(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-cache-dir", "--target",
                    str(site), str(wheel)], check=True, capture_output=True)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(REPO / "stacks" / "Pulumi.dev.yaml", work / "my-stack.yaml")
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONPATH": str(site)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-P", *args], cwd=work, env=env, capture_output=True, text=True)

    where = run("-c", "import dbx_ai_infra, sys; print(dbx_ai_infra.__file__); print(sys.path)")
    assert where.stdout.startswith(str(site)) and repr(str(REPO)) not in where.stdout, where.stdout
    preview = run("-m", "stackplan", "preview", "--stack", "./my-stack.yaml", "--json")
    assert preview.returncode == 0, preview.stderr
    plan = json.loads(preview.stdout)
    assert plan["stack"] == "my-stack" and plan["resources"]
    shipped = run("-m", "stackplan", "cost", "--stack", "dev", "--json")  # a shipped stack, by its name
    assert shipped.returncode == 0, shipped.stderr
    assert json.loads(shipped.stdout)["stack"] == "dev"


def test_python_m_stackplan_without_the_dependencies_says_how_to_run_it():
    """Issue 56 item 8: the system's Python (here the test's own with its site-packages left out, -S) runs `python -m
    stackplan` from the checkout: one line naming what is missing and the two ways to run it, exit 2, no traceback."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STACKPLAN_DEBUG")}
    done = subprocess.run([sys.executable, "-S", "-B", "-m", "stackplan", "preview", "--stack", "dev"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: stackplan needs its dependencies") and "Traceback" not in done.stderr
    assert "make install" in line and ".venv/bin/python -m stackplan" in line and "pip install ." in line
    from dbx_ai_infra.engine.needs import requirements

    assert "pulumi" in requirements() and ", ".join(requirements()) in line  # every runtime requirement is missing


def test_the_requirements_python_m_stackplan_checks_are_the_runtime_pins():
    """The runtime requirements are requirements.txt's pins (an extra's are not needed to run), and this virtualenv,
    made by `make install`, has every one of them, so that `python -m stackplan` runs here."""
    from dbx_ai_infra.engine.needs import missing_requirements, requirement_name, requirements

    assert requirements() == [requirement_name(pin) for pin in _pins(REPO / "requirements.txt")]
    assert requirement_name('pyspark==4.0.1; extra == "spark"') is None and requirement_name("# a note") is None
    assert requirement_name("ruamel.yaml==0.19.1") == "ruamel.yaml" and missing_requirements() == []


def test_a_dependency_missing_where_a_command_imports_it_says_how_to_run_it(monkeypatch, capsys):
    """The requirements are read when an import fails, not before every run: a command that imports what this Python
    lacks (advise's DuckDB) gets the same one line and exit 2; an import error of what is installed stays a bug."""
    from dbx_ai_infra.cli import cli
    from dbx_ai_infra.engine import needs

    monkeypatch.setattr(needs, "missing_requirements", lambda: ["duckdb"])
    assert cli._failed(ModuleNotFoundError("No module named 'duckdb'", name="duckdb")) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("error: stackplan needs its dependencies") and "lacks 1: duckdb" in line
    assert cli._failed(ValueError("not an import")) == 3  # any other failure: an internal error, as before
    monkeypatch.setattr(needs, "missing_requirements", lambda: [])
    assert cli._failed(ImportError("cannot import name 'x'")) == 3
    assert "internal error" in capsys.readouterr().err
