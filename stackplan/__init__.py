"""The offline engine: preview, check and price a stack without a cloud account or the Pulumi CLI.

The engine runs the project's Pulumi program, which lives at the project's root beside this package with its own
packages (``components``, ``policies``, ``pricing``, ``workloads``, ``collector``). Those are not installed for every
program of the environment (their names are generic): importing the engine puts the project's root on the path, as
Pulumi's language host does for the program it runs, so ``python -m stackplan`` and the ``stackplan`` command work
from any directory, and ``import pricing`` fails outside the project.
"""

import sys
from pathlib import Path

#: The project's root: the checkout holding Pulumi.yaml, the program (``__main__.py``), its packages and ``stacks/``.
PROJECT_ROOT = Path(__file__).resolve().parent.parent

if str(PROJECT_ROOT) not in sys.path:
    sys.path.append(str(PROJECT_ROOT))


def version() -> str:
    """The project's version, from its one home: pyproject.toml."""
    import tomllib

    with open(PROJECT_ROOT / "pyproject.toml", "rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])
