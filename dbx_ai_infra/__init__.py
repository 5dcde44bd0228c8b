"""dbx-ai-infra: Databricks compute and storage for AI workloads, and the offline engine that previews, checks and
prices them (docs/ARCHITECTURE.md has the map of the package)."""

from __future__ import annotations

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
