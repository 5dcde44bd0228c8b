"""The commands of ``python -m stackplan``: each takes the parsed arguments, builds its typed report document
(`dbx_ai_infra.reports.reportdoc`) through the pipeline (`dbx_ai_infra.engine.pipeline`), writes it in the asked format
(the registry, `dbx_ai_infra.reports.formats`) and returns its exit code (`dbx_ai_infra.engine.exits`).

Each command declares itself (`dbx_ai_infra.cli.commands.args.Command`: its arguments, its usage checks, where its work
lives) in a light module, listed here by name; ``dbx_ai_infra/cli/cli.py`` only builds the parser from them and
dispatches. A new command is its declaration, its work, and a line here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dbx_ai_infra.cli.commands.args import Command

#: The commands in ``--help``'s order: (the declaring module under this package, the declaration's name).
COMMANDS: tuple[tuple[str, str], ...] = (
    ("stacks_cli", "PREVIEW"),
    ("stacks_cli", "CHECK"),
    ("stacks_cli", "COST"),
    ("workspace_cli", "AUDIT"),
    ("workspace_cli", "DRIFT"),
    ("advise_cli", "ADVISE"),
    ("export_cli", "EXPORT_POLICIES"),
    ("export_cli", "EXPORT_TERRAFORM"),
    ("advise_cli", "SAMPLE_USAGE"),
)


def declared() -> list[Command]:
    """Every command's declaration, in order (their modules imported now: argparse and the format registry only)."""
    return [getattr(importlib.import_module(f"{__name__}.{module}"), name) for module, name in COMMANDS]
