"""A house people can live in (issue 42): a user's own stack and the README's example outputs never disturb the
repository, and the program names itself as it was run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: Outputs the README's examples write, by the flag that names them (placeholders in capitals and paths outside the
#: working tree left out).
OUTPUT_FLAGS = ("--out", "--write-stack", "--emit-sql", "--write-baseline")


def _example_outputs() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.findall(rf"(?:{'|'.join(OUTPUT_FLAGS)}) ([^\s)`]+)", text)
    return sorted({p for p in found if not p.startswith("/") and not re.search(r"[A-Z]{3,}", p)})


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs the git checkout")
def test_every_output_the_readmes_examples_write_is_git_ignored():
    outputs = _example_outputs()
    assert "terraform/prod/" in outputs and "advice.html" in outputs  # the reader found the examples
    kept = [p for p in outputs
            if subprocess.run(["git", "check-ignore", "-q", "--no-index", p], cwd=REPO, check=False).returncode != 0]
    assert kept == [], f"not git-ignored: {kept}"


def test_the_version_line_names_the_program_as_it_was_run():
    module = subprocess.run([sys.executable, "-m", "stackplan", "--version"], capture_output=True, text=True,
                            cwd=REPO, check=True)
    assert module.stdout.startswith("python -m stackplan ")
    command = Path(sys.executable).parent / "stackplan"
    if command.exists():  # the editable install's console script (make install)
        installed = subprocess.run([str(command), "--version"], capture_output=True, text=True, check=True)
        assert installed.stdout.startswith("stackplan ") and not installed.stdout.startswith("stackplan -m")


def test_make_test_takes_args():
    makefile = (REPO / "Makefile").read_text()
    target = makefile[makefile.index("\ntest:"):].split("\n\n", 1)[0]
    assert '-m "not spark" $(ARGS)' in target
