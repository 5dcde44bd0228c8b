"""Shared fixtures: stack files written on the fly and plans of the shipped stacks (run once each)."""

from __future__ import annotations

import copy
import functools
import gc
import itertools
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

if TYPE_CHECKING:
    from dbx_ai_infra.dbxtypes.plan import Plan, Violation


def _runs_tests(config: pytest.Config) -> bool:
    """False in pytest-xdist's controller (``-n 2``: it starts the workers and runs no test), true in a worker and in
    a run without workers."""
    return hasattr(config, "workerinput") or not config.getoption("numprocesses", default=None)


def pytest_configure(config: pytest.Config) -> None:
    """The Terraform parse cache (`dbx_ai_infra.sources.tfcache`) in a temporary directory of this process, never the
    user's: tests write only under temporary directories (subprocesses inherit it).

    The provider SDK as the offline engine imports it, before a test module imports the components: the whole
    package would cost every test process about 3 s more (tests/test_pulumi_private.py checks the subset against
    it). Not in the xdist controller: importing it there (about 3 s) only held back the start of the workers."""
    import tempfile

    os.environ["STACKPLAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="stackplan-test-cache-")
    if _runs_tests(config):
        from dbx_ai_infra import pulumi_private
        from dbx_ai_infra.dbxtypes.vocabulary import PROGRAM_RESOURCE_TYPES

        pulumi_private.use_provider_subset("pulumi_databricks", PROGRAM_RESOURCE_TYPES)


def pytest_unconfigure(config: pytest.Config) -> None:
    cache = os.environ.get("STACKPLAN_CACHE_DIR", "")
    if Path(cache).name.startswith("stackplan-test-cache-"):
        shutil.rmtree(cache, ignore_errors=True)


#: The stacks the project ships, by name: tests about the shipped examples' own contents (their figures in the README,
#: their resources) enumerate these, so a stack a user adds to stacks/ never breaks them (`STACKS` holds every file).
SHIPPED: tuple[str, ...] = ("azure-prod", "dev", "estate", "gcp-dev", "new-workspace", "prod")


def __getattr__(name: str) -> Any:
    """``STACKS`` (every stack file under stacks/, the shipped ones and a user's own), read when a test module first
    imports it: each is previewed and checked like the others, as the README's "Adding a stack" promises."""
    if name == "STACKS":
        from dbx_ai_infra.dbxtypes.stack_files import available_stacks

        globals()["STACKS"] = stacks = tuple(available_stacks())
        return stacks
    raise AttributeError(name)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection loaded (the provider SDK, pydantic's schemas, every test module) lives until the worker ends:
    moved out of the garbage collector's sight, so that its full collections stop walking it again and again (about
    a tenth of the suite's time)."""
    gc.collect()
    gc.freeze()

BASE_CONFIG: dict[str, Any] = {
    "dbx-ai-infra:cloud": "aws",
    "dbx-ai-infra:gpu_family": "a10g",
    "dbx-ai-infra:single_user_name": "ml@example.com",
    "dbx-ai-infra:tags": {"workload": "genai", "cost_center": "ai-team"},
    # the test stack asks for the all-purpose training cluster beside its job (a job alone is the default), so the
    # tests see both
    "dbx-ai-infra:training": {"num_workers": 2, "model": {"params_billions": 1, "precision": "bf16"},
                              "job": {"python_file": "/Workspace/train.py"}, "all_purpose_cluster": True},
    "dbx-ai-infra:inference": {"min_workers": 2, "max_workers": 6, "model": {"params_billions": 7, "precision": "fp16"}},
    "dbx-ai-infra:dev": {"model": {"params_billions": 7, "precision": "fp16"}},
}

FAMILY_FOR_CLOUD = {"aws": "a10g", "azure": "a10g", "gcp": "l4"}


REPO = Path(__file__).resolve().parent.parent


def documentation() -> str:
    """What a reader of the project reads: the README (the front door), the docs site's pages (docs/, the reference
    pages included) and the contributor material (CONTRIBUTING.md, bench/RESULTS.md). Tests hold these to the
    program: a figure, a field or a rule that moved on makes them fail."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), REPO / "CONTRIBUTING.md",
             REPO / "bench" / "RESULTS.md"]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


def project_sources(*skip: str) -> list[Path]:
    """The repository's own Python files, but for the folders ``skip`` (paths from the repository's root, e.g.
    ``tests``, ``dbx_ai_infra/pulumi_private``): the tree is pruned as it is walked, so the virtual environments (tens
    of thousands of files) and .git are never listed."""
    found = []
    for folder, dirs, files in os.walk(REPO):
        here = Path(folder).relative_to(REPO)
        dirs[:] = [d for d in dirs if not (d.startswith(".venv") or d in (".git", "site-packages", "__pycache__")
                                           or (here / d).as_posix() in skip)]
        found += [Path(folder) / f for f in files if f.endswith(".py")]
    return sorted(found)


def make_dry_run(*args: str) -> str:
    """What ``make ARGS...`` would run, as make prints it (``make -n``: nothing runs, nothing is written); a target
    the Makefile does not have fails the test. Run outside any make of the caller's (``make test`` passes its own
    flags and variables down through MAKEFLAGS)."""
    if shutil.which("make") is None:
        pytest.skip("needs make")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    done = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(REPO), *args], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def with_at(base: dict[str, Any], at: tuple[str | int, ...], changes: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``base`` with ``changes`` made in the object at path ``at`` (keys, made when absent, and list
    indexes): each key set to its value, or deleted where the value is None."""
    out = copy.deepcopy(base)
    node: Any = out
    for step in at:
        node = node[step] if isinstance(step, int) else node.setdefault(step, {})
    for key, value in changes.items():
        if value is None:
            node.pop(key, None)
        else:
            node[key] = value
    return out


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with changes at paths (``aws_attributes__first_on_demand=1``: a key under a key, made
    when absent); None deletes the key."""
    for path, value in changes.items():
        *parents, last = path.split("__")
        base = with_at(base, tuple(parents), {last: value})
    return copy.deepcopy(base)


def tf_cluster(name: str, meta: str = "", runtime: str = "15.4.x-scala2.12", node_type: str = "i3.xlarge",
               workers: int | str = 1, tags: str = 'workload = "etl", cost_center = "data"') -> str:
    """A small Terraform ``databricks_cluster`` that every rule passes (tagged, auto-terminated, a runtime key):
    ``meta`` is a meta-argument line (``count = 2``, ``for_each = ...``), the rest its arguments."""
    return f'''resource "databricks_cluster" "{name}" {{
  {meta}
  cluster_name  = "{name}"
  spark_version = "{runtime}"
  node_type_id  = "{node_type}"
  num_workers   = {workers}
  autotermination_minutes = 30
  custom_tags = {{ {tags} }}
}}
'''


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``python -m stackplan ARGV`` in this process (`dbx_ai_infra.cli.cli.main`): its exit code and what it wrote to
    standard output and standard error."""
    from dbx_ai_infra.cli.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    """`run_cli` with ``--json``: the exit code and the document (``{}`` where nothing was written)."""
    code, out, _ = run_cli(capsys, *argv, "--json")
    return code, json.loads(out) if out.strip() else {}


def run_cli_doc(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    """`run_cli`, which must show no traceback: standard output read as JSON where it is a JSON object, else text."""
    code, out, err = run_cli(capsys, *argv)
    assert "Traceback" not in err, err
    return code, json.loads(out) if out.strip().startswith("{") else out, err


def config_for(cloud: str = "aws", **sections: Any) -> dict[str, Any]:
    """BASE_CONFIG on another cloud, with sections replaced (None removes one)."""
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:cloud"] = cloud
    config["dbx-ai-infra:gpu_family"] = FAMILY_FOR_CLOUD[cloud]
    for key, value in sections.items():
        full = f"dbx-ai-infra:{key}"
        if value is None:
            config.pop(full, None)
        else:
            config[full] = value
    return config



def stack_with(write_stack: Callable[..., Path], name: str = "test", **sections: Any) -> str:
    """The test stack (BASE_CONFIG) with sections replaced (None removes one), written as Pulumi.<name>.yaml."""
    return str(write_stack(config_for("aws", **sections), name=name))

@pytest.fixture
def write_stack(tmp_path: Path):
    def _write(config: dict[str, Any] | None = None, name: str = "test", text: str | None = None) -> Path:
        path = tmp_path / f"Pulumi.{name}.yaml"
        path.write_text(text if text is not None else yaml.safe_dump({"config": config}, sort_keys=False))
        return path
    return _write


#: Plans of the offline engine's runs in this test process, by everything a run reads (`_run_key`).
_RUNS: dict[str, Plan] = {}


def _run_key(stack: Any, program: Path, from_config: bool) -> str | None:
    """What one run of the program reads: the program, the stack's name, its file as the plan names it (relative
    to the working directory), its Pulumi config and the resolved stack it is handed (its spec, node types, limits:
    dataclasses and pydantic models, whose repr is every field). None where the program reads the process's Pulumi
    config instead (``from_config``), which the key cannot see."""
    import dbx_ai_infra.engine.engine

    if from_config:
        return None
    return json.dumps([str(program), stack.name, dbx_ai_infra.engine.engine.display_path(stack.path), stack.config,
                       repr(stack.resolved)], sort_keys=True, default=repr)


def _run_once_per_input(stack: Any, program: Path | None = None, *, from_config: bool = False) -> Plan:
    from dbx_ai_infra.engine.engine import PROGRAM

    program = PROGRAM if program is None else program
    key = _run_key(stack, program, from_config)
    if key is None:
        return _engine_run()(stack, program, from_config=from_config)
    if key not in _RUNS:
        _RUNS[key] = _engine_run()(stack, program, from_config=from_config)
    return _RUNS[key].model_copy(deep=True)


@functools.cache
def _engine_run() -> Any:
    """The engine's own `run_program` (not the reuse that the fixture below puts in its place), as it was when first
    asked for: by that fixture, before it replaces it."""
    import dbx_ai_infra.engine.engine

    return dbx_ai_infra.engine.engine.run_program


@pytest.fixture(autouse=True)
def _program_runs_once_per_input(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands a test runs in-process (through `dbx_ai_infra.engine.pipeline`) get the plan of an earlier run of the
    same program over the same stack in this process, a deep copy, instead of running it again: the program under
    Pulumi's mocks is deterministic (`tests/test_components.py` holds two runs to the same plan) and was 40% of the
    suite's time, over a few shipped stacks run hundreds of times (issue 23). A test about the run itself (what it
    reads or calls while it runs) is marked ``program_runs`` to run it every time; none needs to today: tests that
    call `run_program` directly and every ``python -m stackplan`` subprocess (the interrupt tests) run it anyway."""
    if request.node.get_closest_marker("program_runs") is None:
        import dbx_ai_infra.engine.engine

        _engine_run()
        monkeypatch.setattr(dbx_ai_infra.engine.engine, "run_program", _run_once_per_input)


@functools.cache
def _plan_of(stack: str) -> dict[str, Any]:
    from dbx_ai_infra.stackspec import load_stack

    return _engine_run()(load_stack(stack)).to_json()


@pytest.fixture
def plan_of():
    """Plan of a stack name or file (cached per process: treat as read-only)."""
    return _plan_of


@pytest.fixture
def judge_export(tmp_path: Path) -> Callable[..., list[Violation]]:
    """``judge_export(obj, config=None)``: the violations of an export given as JSON data (a cluster, a list,
    ``{"clusters": [...]}``, jobs, pools, pages), judged as ``check --cluster-json FILE`` judges that file
    (`dbx_ai_infra.sources.audit.audit_export_path`: the stream, or the whole document where the stream declines);
    each call writes its own file under ``tmp_path``."""
    from dbx_ai_infra.sources.audit import audit_export_path

    written = itertools.count()

    def judge(obj: Any, config: Any = None) -> list[Violation]:
        path = tmp_path / f"export-{next(written)}.json"
        path.write_text(json.dumps(obj), encoding="utf-8")
        return audit_export_path(str(path), config).violations

    return judge


def resources(plan: dict[str, Any], type_suffix: str) -> list[dict[str, Any]]:
    return [r for r in plan["resources"] if r["type"].endswith(type_suffix)]


def cluster(plan: dict[str, Any], role: str) -> dict[str, Any]:
    found = [r for r in resources(plan, "cluster:Cluster") if r["inputs"]["customTags"]["workload_type"] == role]
    assert len(found) == 1, f"expected one {role} cluster, got {len(found)}"
    return found[0]["inputs"]


# Hypothesis: a CI-sized run by default; `make test-slow` sets HYPOTHESIS_PROFILE=slow.

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("slow", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` run under ``make test-slow`` only (HYPOTHESIS_PROFILE=slow): not in CI's suite."""
    if os.environ.get("HYPOTHESIS_PROFILE") == "slow":
        return
    skip = pytest.mark.skip(reason="slow: run by make test-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
