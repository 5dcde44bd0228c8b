"""How far a module tree is expanded (issue 51, item 4), and what was not evaluated.

Bounds, so that nothing hangs and nothing is skipped in silence:

- `MAX_PER_BLOCK` instances of one configured block (a resource or a module call, by its address without keys),
  counted over every instance of the modules around it: ``count = 10000`` in a module called with ``count = 10000``
  is 100,000,000 instances of one block, refused before one is evaluated; a single ``count`` over the limit too;
- `MAX_TOTAL` instances in the whole tree (resource instances of the Databricks provider and module instances);
- a module that calls itself, directly or through others, or whose directory is a symlink loop: refused, naming
  the chain (Terraform's own ``init`` copies such a tree until a path is too long for the file system);
- `MAX_DEPTH` levels of distinct modules.

Each is invalid input (exit 2) naming the address, as Terraform refuses ``count = -1`` ("Invalid count argument").
A ``count`` or ``for_each`` whose value is not known here is no error: the block's address is listed as not
evaluated (`Expansion.not_evaluated`), a finding at the level ``not-judged`` that every format reports (and
``--fail-on-unknown`` fails on), so a run never reads "0 clusters" when a resource was skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import NOT_JUDGED, Violation

#: The most instances one configured block may expand to, counted over the module instances around it.
MAX_PER_BLOCK = 10_000
#: The most instances (Databricks resources and modules) one module tree may expand to.
MAX_TOTAL = 100_000
#: The most levels of module calls.
MAX_DEPTH = 64

#: The finding that lists a block not evaluated (SARIF note-level), and what it says.
NOT_EVALUATED = "terraform-not-evaluated"
NOT_EVALUATED_TEXT = ("A Terraform block whose instances are not known here (its count or for_each is known only "
                      "at apply, or its module is not read): its resources are not evaluated, so no rule judged "
                      "them and no price counts them.")
NOT_EVALUATED_FIX = ("Give the count or for_each a value known at plan time (a variable with a value, a --var-file), "
                     "or check the plan instead (terraform plan -out, terraform show -json, check --terraform-plan).")


@dataclass(frozen=True)
class Skipped:
    """A block not evaluated: its address (with the keys of the module instance it is in), why, where written."""

    address: str
    reason: str
    file: str | None = None
    line: int | None = None


@dataclass
class Expansion:
    """The instances made so far, by configured address and in all, and the blocks not evaluated."""

    per_block: dict[str, int] = field(default_factory=dict)
    total: int = 0
    not_evaluated: list[Skipped] = field(default_factory=list)

    def add(self, configured: str, address: str, n: int, where: str) -> None:
        """``n`` more instances of the block ``configured`` (at ``address``); invalid input past a limit."""
        self.per_block[configured] = got = self.per_block.get(configured, 0) + n
        self.total += n
        if got > MAX_PER_BLOCK:
            around = "" if got == n else f" (with the instances of the modules around it: {got:,} so far)"
            raise InputError.single(where, address, f"expands to more than {MAX_PER_BLOCK:,} instances{around}: "
                                    "past what this reader expands (docs/terraform.md, Limits).",
                                    "check the count or for_each (and the module counts it multiplies), or check the "
                                    "plan of such a tree instead (check --terraform-plan).")
        if self.total > MAX_TOTAL:
            raise InputError.single(where, address, f"takes the tree past {MAX_TOTAL:,} instances in all (resources "
                                    "and modules): past what this reader expands (docs/terraform.md, Limits).",
                                    "check the counts and for_each of the tree, or check its plan instead "
                                    "(check --terraform-plan).")


def _whole(number: float, address: str, where: str) -> int:
    if number != number or number in (float("inf"), float("-inf")) or not float(number).is_integer():
        raise InputError.single(where, f"{address}: count", f"is {number!r}: Terraform refuses it (\"Invalid count "
                                "argument: value must be a whole number\").", "give count a whole number.")
    if number < 0:
        raise InputError.single(where, f"{address}: count", f"is {int(number)}: Terraform refuses it (\"Invalid "
                                "count argument: The given \\\"count\\\" argument value is unsuitable: must be greater "
                                "than or equal to zero\").", "give count a number of 0 or more.")
    return int(number)


def count_of(known: Any, address: str, where: str) -> int | None:
    """A ``count`` value as Terraform takes it (a number, or a string that is one); None when it is not known here.
    Invalid input where Terraform refuses it: null, negative, not whole."""
    if known is None:
        raise InputError.single(where, f"{address}: count", "is null: Terraform refuses it (\"Invalid count "
                                "argument: The given \\\"count\\\" argument value is null. An integer is required\").",
                                "give count a whole number of 0 or more.")
    if isinstance(known, bool):
        raise InputError.single(where, f"{address}: count", f"is {str(known).lower()}: Terraform refuses it "
                                "(\"Invalid count argument: number required\").", "give count a whole number.")
    if isinstance(known, (int, float)):
        return _whole(known, address, where)
    if isinstance(known, str):
        try:
            return _whole(float(known.strip()), address, where)
        except ValueError:
            raise InputError.single(where, f"{address}: count", f"is {known[:40]!r}: Terraform refuses it "
                                    "(\"Invalid count argument: a number is required\").",
                                    "give count a whole number.") from None
    return None


def for_each_of(known: Any, address: str, where: str) -> Mapping[Any, Any] | None:
    """A ``for_each`` value's instances (key -> value): a map, or a set (list) of strings; None when not known
    here. Invalid input where Terraform refuses it: null."""
    if known is None:
        raise InputError.single(where, f"{address}: for_each", "is null: Terraform refuses it (\"Invalid for_each "
                                "argument: the given \\\"for_each\\\" argument value is null\").",
                                "give for_each a map or a set of strings (toset([...])).")
    if isinstance(known, Mapping):
        return known
    if isinstance(known, (list, tuple)) and any(isinstance(k, Mapping) for k in known):
        # a list of objects (the instances of a resource with count, [{...}]): terraform 1.11.4 refuses it
        raise InputError.single(where, f"{address}: for_each", "is a list of objects: Terraform refuses it "
                                "(\"Invalid for_each argument: the \\\"for_each\\\" argument must be a map, or set of "
                                "strings, and you have provided a value of type tuple\").",
                                "give for_each a map (a resource with for_each, or { for ... : k => v }) or a set of "
                                "strings.")
    if isinstance(known, (list, tuple, set, frozenset)) and all(isinstance(k, str) for k in known):
        return {k: k for k in (sorted(known) if isinstance(known, (set, frozenset)) else known)}
    return None


def module_chain(chain: list[tuple[str, Path]], name: str, directory: Path, where: str) -> Path:
    """The real directory of a module call, refused when it is already in the chain of calls that leads to it (a
    module that calls itself), when resolving it loops (a symlink loop), or past `MAX_DEPTH` levels."""
    try:
        real = directory.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        if isinstance(exc, FileNotFoundError):
            return directory
        raise InputError.single(where, f"module.{name}", f"{directory} cannot be resolved: {exc} (a symlink "
                                "loop).", "point the module's source at a real directory.") from None
    calls = " -> ".join(f"module.{n} ({d})" for n, d in chain[1:])
    if any(real == d for _, d in chain):
        first = next(i for i, (_, d) in enumerate(chain) if d == real)
        loop = " -> ".join([*(f"{d}" for _, d in chain[first:]), str(real)])
        raise InputError.single(where, f"module.{name}", f"calls a module that is already being called: {loop} "
                                f"(module calls: {calls + ' -> ' if calls else ''}module.{name}). Terraform cannot "
                                "install a module that calls itself.", "break the cycle of module calls.")
    if len(chain) > MAX_DEPTH:
        raise InputError.single(where, f"module.{name}", f"is more than {MAX_DEPTH} module calls deep ({calls}).",
                                "flatten the module tree.")
    return real


def not_evaluated_violations(skipped: list[Skipped]) -> list[Violation]:
    """One not-judged finding per block not evaluated (a SARIF note, a GitHub notice, "not judged" in the table):
    listed, failing a run only under ``--fail-on-unknown``."""
    return [Violation(policy=NOT_EVALUATED, enforcement=NOT_JUDGED, urn=f"terraform-not-evaluated:{s.address}",
                      resource_name=s.address,
                      message=f"{s.address}: not evaluated: {s.reason}, so no rule judged its resources and no "
                              f"price counts them. Fix: {NOT_EVALUATED_FIX}")
            for s in skipped]
