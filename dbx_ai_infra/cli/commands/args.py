"""What every command's declaration shares: the `Command` record, the arguments several commands take, the exit
codes their help states, and `lazy` (a command's work, imported when it runs).

A command declares itself in a light module (``dbx_ai_infra/cli/commands/<family>_cli.py``: its arguments, its usage
checks, where its work lives), listed in `dbx_ai_infra.cli.commands.COMMANDS`; ``dbx_ai_infra/cli/cli.py`` builds the
parser from those declarations and dispatches. Building the parser imports no command's work: ``--help`` and
``--version`` stay fast.
"""

from __future__ import annotations

import argparse
import importlib
import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from dbx_ai_infra.engine import exits, heap
from dbx_ai_infra.reports import formats

Run = Callable[[argparse.Namespace], int]


def exit_codes(**meanings: str) -> str:
    """The exit codes as ``--help`` lists them (`dbx_ai_infra.engine.exits.MEANINGS`; ``meanings``: a command's own, by
    the code's name in `dbx_ai_infra.engine.exits`, ``EXIT_VIOLATIONS="..."``)."""
    own = {getattr(exits, name): text for name, text in meanings.items()}
    lines = ["exit codes:"]
    for code, meaning in exits.MEANINGS.items():
        wrapped = textwrap.wrap(own.get(code, meaning), 110)
        lines += [f"  {code:<4} {wrapped[0]}", *(f"       {line}" for line in wrapped[1:])]
    return "\n".join(lines) + "\n"


EXIT_CODES = exit_codes()


def _no_problem(args: argparse.Namespace) -> str | None:
    return None


@dataclass(frozen=True)
class Command:
    """One subcommand: its name and help, its examples and exit codes (the help's epilog), how it adds its arguments,
    what it checks of them that argparse cannot state (None, or the message of exit 2: ``what. Fix: how``), and its
    work (`lazy`). ``checks_out``: whether ``--out`` is checked against the run's inputs before any work (a command
    whose ``--out`` is a directory it creates checks it itself)."""

    name: str
    help: str
    examples: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Run
    problem: Callable[[argparse.Namespace], str | None] = _no_problem
    exit_codes: str = EXIT_CODES
    checks_out: bool = True

    def add_to(self, sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        p = sub.add_parser(self.name, formatter_class=argparse.RawDescriptionHelpFormatter, help=self.help,
                           epilog=f"examples:\n{self.examples}\n" + self.exit_codes)
        self.arguments(p)
        p.set_defaults(func=self.run, command_spec=self)


def lazy(module: str, name: str) -> Run:
    """A command's work, imported when it runs, not when the parser is built (with the collector paused, as the
    entry point imports the command line: `dbx_ai_infra.engine.heap.settled`)."""
    def command(args: argparse.Namespace) -> int:
        with heap.settled():
            work = getattr(importlib.import_module(module), name)
        return int(work(args))

    command.__qualname__ = command.__name__ = name
    return command


def positive_seconds(text: str) -> float:
    """A number of seconds above 0 and finite (exit 2 otherwise)."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


def finite_float(text: str) -> float:
    """A command-line number that is finite (``inf``, ``nan`` and ``1e400`` are refused: exit 2)."""
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def format_arg(p: argparse.ArgumentParser, *kinds: str) -> None:
    """``--format``: the registry's formats for these report kinds."""
    p.add_argument("--format", choices=formats.choices(*kinds), default="table", help=formats.help_text(*kinds))


def stacks_arg(p: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup) -> None:
    p.add_argument("--stack", action="append", metavar="NAME|FILE",
                   help="a stack name (dev) or the path of a stack YAML file; repeat it for several stacks "
                        "(one combined report, the worst exit code)")
    p.add_argument("--all", action="store_true", help="every stack under stacks/")


def stack_arg(p: argparse.ArgumentParser, example: str) -> None:
    """``--stack``, one and required (the commands about a single stack)."""
    p.add_argument("--stack", required=True, metavar="NAME|FILE",
                   help=f"a stack name ({example}) or the path of a stack YAML file")


def common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="write JSON instead of a table")
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    p.add_argument("--policy-config", metavar="FILE",
                   help="policy config JSON: enforcement levels and thresholds, as Pulumi takes it")
    p.add_argument("--rules", metavar="DIR",
                   help="also judge your team's own rule modules (each *.py in DIR defines RULE; they are code "
                        "you trust: loading one runs it, in a process of its own)")
    p.add_argument("--rule-timeout", type=positive_seconds, default=None, metavar="SECONDS",
                   help="with --rules: the seconds a team rule may take over one resource (default 10); one that "
                        "takes longer is exit 2")


def prices_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prices", metavar="FILE", help="price overrides (YAML)")


def var_file_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--var-file", metavar="FILE", action="append", default=[],
                   help="with --terraform: a .tfvars file, after terraform.tfvars and *.auto.tfvars (repeatable)")


def region_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--region", metavar="REGION",
                   help="the workspace's region (eu-west-1, westeurope, europe-west1): VM prices and Model Serving "
                        "$/DBU of that region where the data has them; over a stack's dbx-ai-infra:region. Default: "
                        "the stack's, else the cloud's reference region (us-east-1, eastus, us-central1)")
