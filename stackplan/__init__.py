"""The offline engine: preview, check and price a stack without a cloud account or the Pulumi CLI."""


def version() -> str:
    """The project's version, from its one home: pyproject.toml."""
    import tomllib
    from pathlib import Path

    with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])
