"""``python -m stackplan``: argument parsing and dispatch. Each command declares its arguments and usage checks
(`dbx_ai_infra.cli.commands`, listed in ``COMMANDS``); its work builds a report through `dbx_ai_infra.engine.pipeline`
and writes it through the format registry, `dbx_ai_infra.reports.formats`.

Exit codes: a public contract, stated once in `dbx_ai_infra.engine.exits` (``--help`` prints them).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from dbx_ai_infra import version
from dbx_ai_infra.cli.commands import declared
from dbx_ai_infra.cli.commands.args import EXIT_CODES, Command
from dbx_ai_infra.dbxtypes.errors import InputError, ProgramError
from dbx_ai_infra.dbxtypes.text import printable
from dbx_ai_infra.engine.crash import internal_error_line
from dbx_ai_infra.engine.exits import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_VIOLATIONS
from dbx_ai_infra.engine.interrupts import MESSAGE, cleanup_partial_outputs, exit_on_signal
from dbx_ai_infra.engine.needs import missing_line
from dbx_ai_infra.engine.output import check_out, same_outputs, write_stdout
from dbx_ai_infra.sources.workspace import WorkspaceUnavailable


def invoked_as() -> str:
    """How the user ran the program: ``stackplan`` (the installed command, pyproject's [project.scripts]) or
    ``python -m stackplan``."""
    return "stackplan" if Path(sys.argv[0]).name == "stackplan" else "python -m stackplan"


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that ``--help`` or ``--version`` that cannot be written to standard output (``>
    /dev/full``, a closed pipe) is exit 2 with its line: argparse says nothing and exits 0."""

    def _print_message(self, message: str, file: Any = None) -> None:  # noqa: ANN401 - argparse's own signature
        if not message or (file or sys.stderr) is not sys.stdout:
            super()._print_message(message, file)
            return
        try:
            write_stdout(message)
        except InputError as exc:
            print(printable(f"error: {exc}"), file=sys.stderr)
            self.exit(EXIT_INVALID)


class _Version(argparse._VersionAction):
    """argparse's ``--version``, its line made when it is asked for: the installed distribution's version is read
    from its metadata, which a run of any other command need not pay for."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,  # noqa: ANN401
                 option_string: str | None = None) -> None:
        self.version = f"{invoked_as()} {version()}"
        super().__call__(parser, namespace, values, option_string)


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="python -m stackplan",
                                  description="Offline preview, policy check and cost review of dbx-ai-infra stacks.",
                                  epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action=_Version)
    # the commands' parsers are `_Parser`s too (argparse makes them of the top's class)
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]", top.add_subparsers(dest="command", required=True))
    for command in declared():
        command.add_to(sub)
    return top


def _fit_terminal(args: argparse.Namespace) -> None:
    """A person reading (standard output a terminal): tables as wide as the window, in colour unless NO_COLOR is set
    (no-color.org)."""
    if getattr(args, "out", None) in (None, "-") and sys.stdout.isatty():
        from dbx_ai_infra.reports.render import fit_terminal

        fit_terminal(shutil.get_terminal_size().columns, colour=not os.environ.get("NO_COLOR"))


def _prepare(args: argparse.Namespace, command: Command) -> None:
    """Before any work: the team's rules loaded (``--rules``), and ``--out`` checked (a bad one changes nothing)."""
    if getattr(args, "rules", None):
        from dbx_ai_infra.policies.registry import load_team_rules, use_team_rules

        use_team_rules(load_team_rules(args.rules, getattr(args, "rule_timeout", None)))
    if command.checks_out and getattr(args, "out", None) is not None:
        from dbx_ai_infra.cli.commands.common import directory_reads, inputs

        check_out(args.out, inputs(args), reads=directory_reads(args))


#: A failure the command line explains, most specific first: its kind, its line on stderr, its exit code.
_FAILURES: tuple[tuple[type[Exception], Callable[[Exception], str], int], ...] = (
    (RecursionError, lambda exc: "error: an input is nested too deeply to read. Fix: pass a Databricks export or a "
                                 "stack file as written by their tools.", EXIT_INVALID),
    (InputError, lambda exc: f"error: {exc}", EXIT_INVALID),
    (ProgramError, lambda exc: f"error: the Pulumi program failed: {exc}", EXIT_VIOLATIONS),
    (WorkspaceUnavailable, lambda exc: f"error: {exc} (not the input's fault: try again later)", EXIT_VIOLATIONS),
)


def _failed(exc: Exception) -> int:
    """The line and exit code of a run that raised ``exc``: a known failure's (`_FAILURES`), else an internal error
    (exit 3: one line, the traceback in a file; ``STACKPLAN_DEBUG=1`` raises it instead)."""
    for kind, line, code in _FAILURES:
        if isinstance(exc, kind):
            print(printable(line(exc)), file=sys.stderr)
            return code
    if (missing := missing_line(exc)) is not None:  # a dependency imported where it is needed, not installed
        print(missing, file=sys.stderr)
        return EXIT_INVALID
    if os.environ.get("STACKPLAN_DEBUG"):
        raise exc
    print(printable(internal_error_line(exc)), file=sys.stderr)
    return EXIT_INTERNAL


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    command = args.command_spec  # the Command that parsed them (`dbx_ai_infra.cli.commands.args.Command.add_to`)
    problem = command.problem(args) or same_outputs(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_INVALID
    _fit_terminal(args)
    try:
        _prepare(args, command)
        # A signal ends the run from its handler: Pulumi's runtime and DuckDB swallow or convert KeyboardInterrupt.
        with exit_on_signal():
            return int(args.func(args))
    except KeyboardInterrupt:
        cleanup_partial_outputs()
        print(MESSAGE, file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the CLI prints a sentence, its traceback goes to a file
        return _failed(exc)
