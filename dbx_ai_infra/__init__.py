"""dbx-ai-infra: Databricks compute and storage for AI workloads, and the offline engine that previews, checks and
prices them (docs/ARCHITECTURE.md has the map of the package)."""

from pathlib import Path

#: The installed package's directory: its data files (templates, price and catalog data, the shipped stacks) are here.
PACKAGE_DIR = Path(__file__).resolve().parent


def version() -> str:
    """The distribution's version, as installed (pyproject.toml is its one home)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        return installed_version("dbx-ai-infra")
    except PackageNotFoundError:  # a checkout run without an install: say so rather than guess a number
        return "0+unknown (not installed: pip install -e .)"
