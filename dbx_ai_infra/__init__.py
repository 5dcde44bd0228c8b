"""dbx-ai-infra: Databricks compute and storage for AI workloads, and the offline engine that previews, checks and
prices them (docs/ARCHITECTURE.md has the map of the package)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: The installed package's directory: its data files (templates, price and catalog data, the shipped stacks) are here.
PACKAGE_DIR = Path(__file__).resolve().parent


def installed_version(distribution: str) -> str | None:
    """The version of ``distribution`` installed in this interpreter (its metadata), None when it is not installed.
    (Read when asked: importing ``importlib.metadata`` is a start-up cost a run that does not ask must not pay.)"""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def version() -> str:
    """The distribution's version, as installed (pyproject.toml is its one home); a checkout run without an install
    says so rather than guess a number."""
    return installed_version("dbx-ai-infra") or "0+unknown (not installed: pip install -e .)"


def write_whole(path: str | os.PathLike[str], data: bytes) -> bool:
    """Write ``path`` whole or not at all: a temporary file beside it (``.tmp-*``, its directory made if need be)
    renamed into place, removed on any failure or interruption. False when it cannot be written: for a cache, whose
    entry is then simply not kept."""
    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            return False
        raise
    return True
