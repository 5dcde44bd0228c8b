"""A stack's accepted exceptions (``dbx-ai-infra:exceptions``) laid over the policy findings.

An exception names a rule and a resource, with a reason and an optional last day. A finding it matches is still
reported, marked excepted with the reason; a mandatory one no longer fails the run. Past its last day the exception
is expired: the finding fails again, and the report says which exception ran out. An exception naming a rule or a
resource that does not exist is invalid input (a typo would otherwise hide nothing, silently).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date

from dbx_ai_infra.dbxtypes.errors import InputError, Problem, clip, did_you_mean
from dbx_ai_infra.dbxtypes.plan import AcceptedException, Violation
from dbx_ai_infra.policies.registry import RETIRED
from dbx_ai_infra.stackspec.models import ExceptionSpec

FIELD = "dbx-ai-infra:exceptions"


def apply_exceptions(violations: Sequence[Violation], exceptions: Sequence[ExceptionSpec], *, rules: Iterable[str],
                     resources: Iterable[str], today: date, source: str, field: str = FIELD,
                     of: str = "this stack") -> tuple[list[Violation], list[str]]:
    """The findings with their matching exceptions attached, and a note for each exception that matched nothing
    (``field``: where the exceptions are, ``of``: what their resources belong to, for the messages)."""
    rule_names, resource_names = sorted(set(rules)), sorted(set(resources))
    problems = []
    for i, e in enumerate(exceptions):
        if e.rule in RETIRED:  # matches nothing any more: a note below, not a refusal
            continue
        if e.rule not in rule_names:
            hint = did_you_mean(e.rule, rule_names)
            problems.append(Problem(f"{field}[{i}].rule", f"names no policy: {clip(e.rule)}.",
                                    f"use a policy name from the README's rules table{hint}"))
        if e.resource not in resource_names:
            hint = did_you_mean(e.resource, resource_names)
            problems.append(Problem(f"{field}[{i}].resource", f"names no resource of {of}: {clip(e.resource)}.",
                                    f"use a resource name as the report shows it{hint}"))
    if problems:
        raise InputError(source, problems)
    used: set[int] = set()
    out = []
    for v in violations:
        match = next((i for i, e in enumerate(exceptions) if (e.rule, e.resource) == (v.policy, v.resource_name)),
                     None)
        if match is None:
            out.append(v)
            continue
        used.add(match)
        e = exceptions[match]
        accepted = AcceptedException(reason=e.reason, expires=e.expires.isoformat() if e.expires else None,
                                     expired=e.expires is not None and e.expires < today)
        out.append(v.model_copy(update={"exception": accepted}))
    notes = [f"{source}: {field}[{i}] ({e.rule} on {e.resource}) matches no finding"
             f"{' (' + RETIRED[e.rule] + ')' if e.rule in RETIRED else ''}; remove it."
             for i, e in enumerate(exceptions) if i not in used]
    return out, notes
