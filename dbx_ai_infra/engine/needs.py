"""What the command line needs of the interpreter that runs it: the distribution's runtime requirements, installed.
Standard library only, so that a Python without them (the system's, outside the project's virtualenv) is told how to
run the command instead of failing on an import (issue 56 item 8). It is read when an import fails
(`dbx_ai_infra.__main__.run`, `dbx_ai_infra.cli.cli`), not before every run: reading every requirement's metadata
was about 45 ms of each run's start-up (issue 53, item 5)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from dbx_ai_infra import installed_version

#: The distribution whose requirements these are (pyproject.toml's [project] name).
DISTRIBUTION = "dbx-ai-infra"
#: The checkout's requirement file, read when the distribution is not installed in this interpreter.
CHECKOUT_REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements.txt"


def requirement_name(line: str) -> str | None:
    """The distribution a requirement line names (``pulumi==3.272.0`` -> ``pulumi``), or None for a comment, an
    option, a blank line or a requirement of an extra (``pyspark==4.0.1; extra == "spark"``)."""
    line = line.split("#", 1)[0].strip()
    if not line or line.startswith("-") or re.search(r"\bextra\s*==", line):
        return None
    return re.split(r"[\s<>=!~;\[@]", line, maxsplit=1)[0] or None


def requirements() -> list[str]:
    """The runtime requirements: the installed distribution's (its metadata), else the checkout's requirements.txt;
    none when neither is there (nothing to check)."""
    from importlib import metadata

    try:
        declared = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        try:
            declared = CHECKOUT_REQUIREMENTS.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
    return [name for line in declared if (name := requirement_name(line))]


def missing_requirements() -> list[str]:
    """The runtime requirements this interpreter does not have installed, in the order they are declared."""
    return [name for name in requirements() if installed_version(name) is None]


def how_to_run(missing: list[str]) -> str:
    """The one line that says what is missing and how to run the command instead."""
    return (f"error: stackplan needs its dependencies, and this Python ({sys.executable}) lacks {len(missing)}: "
            f"{', '.join(missing)}. Fix: run `make install` in the checkout, then `.venv/bin/python -m stackplan ...` "
            "(or `make preview STACK=dev`); or install the package with its dependencies, `pip install .`, and run "
            "`stackplan ...`.")


def missing_line(exc: BaseException) -> str | None:
    """The line that says how to run the command when ``exc``, an import that failed, is a runtime requirement this
    interpreter lacks; None for any other failure (an import error of a requirement that is installed is a bug)."""
    if not isinstance(exc, ImportError):
        return None
    missing = missing_requirements()
    return how_to_run(missing) if missing else None
