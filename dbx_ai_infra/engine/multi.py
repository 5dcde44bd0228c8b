"""Many stacks in one process: `--stack` repeated or `--all`.

Each stack is loaded, run under the mocks and checked or priced on its own; the provider SDK is imported once for
all of them. A stack that fails to load is kept as a `StackRun` with its error (and the exit code it would have
had alone: 2 for invalid input, 1 for a failing program), so the others are still reported and the run exits with
the worst code. On a terminal a progress bar counts the stacks on stderr; piped output never shows one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError, ProgramError
from dbx_ai_infra.dbxtypes.plan import Plan, Violation
from dbx_ai_infra.dbxtypes.stack_files import display_path, stack_file_for
from dbx_ai_infra.dbxtypes.text import printable
from dbx_ai_infra.dbxtypes.vocabulary import CATALOG, EXTERNAL_LOCATION, SCHEMA
from dbx_ai_infra.engine.exits import EXIT_INVALID, EXIT_OK, EXIT_VIOLATIONS
from dbx_ai_infra.policies.registry import load_policy_config
from dbx_ai_infra.policies.rules import unique_in_metastore


@dataclass
class StackRun:
    """One stack's outcome: its plan (and cost diff), or the error that stopped it."""

    stack: str
    source: str
    plan: Plan | None = None
    diff: dict[str, Any] | None = None
    base: str | None = None  # the base plan the diff is against; None: no base
    error: str | None = None
    exit: int = EXIT_OK

    @property
    def error_line(self) -> str:
        """The line a table report shows in place of a stack that could not be run."""
        return f"Stack {self.stack} ({self.source}): error: {self.error}\n"

    @property
    def changed(self) -> bool:
        """Worth showing unfolded: an error, no base to compare with, or a cost diff that moved something."""
        if self.error is not None or self.diff is None:
            return True
        counts = self.diff.get("counts") or {}
        return any(counts.get(k) for k in ("added", "removed", "changed"))


def source_of(stack: str) -> str:
    """The stack file a stack name stands for (as shown to the user), or the name when it names no file."""
    try:
        return display_path(stack_file_for(stack))
    except InputError:
        return stack


@contextmanager
def progress(total: int, what: str) -> Iterator[Callable[[str], None]]:
    """A progress bar on stderr when stderr is a terminal and there is more than one item; else nothing."""
    if total < 2 or not sys.stderr.isatty():
        yield lambda _name: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn(f"{what} {{task.fields[name]}}", markup=False), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=Console(stderr=True, markup=False, emoji=False), transient=True)
    with bar:
        task = bar.add_task(what, total=total, name="")

        def advance(name: str) -> None:
            bar.update(task, advance=1, name=printable(name, one_line=True))

        yield advance


def run_each(stacks: Sequence[str], work: Callable[[str], StackRun], *, what: str,
             keep_errors: bool = True) -> list[StackRun]:
    """``work`` on every stack; an invalid or failing stack becomes a `StackRun` with its error (with
    ``keep_errors`` false, a run of one stack, the error propagates as it always has)."""

    if not keep_errors:
        return [work(stack) for stack in stacks]
    runs = []
    with progress(len(stacks), what) as advance:
        for stack in stacks:
            try:
                runs.append(work(stack))
            except InputError as exc:
                runs.append(StackRun(stack, source_of(stack), error=str(exc), exit=EXIT_INVALID))
            except ProgramError as exc:
                runs.append(StackRun(stack, source_of(stack), error=f"the Pulumi program failed: {exc}",
                                     exit=EXIT_VIOLATIONS))
            if runs[-1].error is not None:  # on stderr too, as a run of one stack would say it
                print(f"error: stack {stack}: {runs[-1].error}", file=sys.stderr)
            advance(stack)
    return runs


def worst(runs: Sequence[StackRun]) -> int:
    """The exit code of the whole run: invalid input (2) over violations (1) over success (0)."""
    return max((r.exit for r in runs), default=EXIT_OK)


def ordered(runs: Sequence[StackRun]) -> list[StackRun]:
    """Errors first, then changed stacks, then unchanged ones; by name within each."""
    return sorted(runs, key=lambda r: (r.error is None, not r.changed, r.plan.stack if r.plan else r.stack))


def claims_of(plan: Plan, source: str) -> unique_in_metastore.StackClaims:
    """What a plan creates in its region's metastore: its catalogs, schemas and storage roots (the catalogs' managed
    locations and the external locations' URLs), read off its resources."""
    catalogs, schemas, roots = set(), set(), set()
    for r in plan.resources:
        if r.type == CATALOG and isinstance(r.inputs.get("name"), str):
            catalogs.add(r.inputs["name"])
            if isinstance(r.inputs.get("storageRoot"), str):
                roots.add(r.inputs["storageRoot"])
        elif r.type == SCHEMA and isinstance(r.inputs.get("name"), str):
            schemas.add(f"{r.inputs.get('catalogName')}.{r.inputs['name']}")
        elif r.type == EXTERNAL_LOCATION and isinstance(r.inputs.get("url"), str):
            roots.add(r.inputs["url"])
    return unique_in_metastore.StackClaims(plan.stack, source, plan.cloud, plan.region, frozenset(catalogs),
                                           frozenset(schemas), frozenset(roots))


def metastore_violations(runs: Sequence[StackRun], policy_config: Any) -> None:
    """The many-stacks rule (`dbx_ai_infra.policies.rules.unique_in_metastore`): two stacks of the run that can share a
    metastore and create the same catalog, schema or storage root get the finding, each (naming both stack files), at
    the rule's configured level; a mandatory one makes the stack's run exit 1."""
    level = load_policy_config(policy_config).level(unique_in_metastore.RULE)
    planned = [r for r in runs if r.plan is not None]
    if level == "disabled" or len(planned) < 2:
        return
    found = unique_in_metastore.collisions([claims_of(r.plan, r.source) for r in planned if r.plan is not None])
    for run in planned:
        assert run.plan is not None
        messages = found.get(run.plan.stack, [])
        run.plan.violations = [*(run.plan.violations or []), *(
            Violation(policy=unique_in_metastore.NAME, enforcement="advisory" if level == "advisory" else "mandatory",
                      urn=run.plan.stack_urn, resource_name=run.plan.stack, message=m) for m in messages)]
        if run.plan.has_mandatory:
            run.exit = max(run.exit, EXIT_VIOLATIONS)
