"""A stack stays within its budget (``dbx-ai-infra:budget``): what it costs a month, and what a change adds.

A stack rule: it judges the priced stack as a whole (`dbx_ai_infra.policies.rule.StackView`), not one resource. The
pipeline judges a stack's monthly limits once it is priced, ``cost --against`` the increase limits of the change
(the view's cost diff), and the pack the monthly limits its config names (it sees no stack file). The figures are
plain (the policies know nothing of pricing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dbx_ai_infra.dbxtypes.money import money
from dbx_ai_infra.dbxtypes.plan import Cost
from dbx_ai_infra.policies.rule import Rule, StackView

NAME = "databricks-stack-budget"
#: Contributors a finding names, most expensive first.
CONTRIBUTORS = 3


def _usd(value: float) -> str:
    return money(value)


def _biggest(contributors: Sequence[tuple[str, float]]) -> str:
    top = sorted(contributors, key=lambda c: -c[1])[:CONTRIBUTORS]
    return ", ".join(f"{name} {_usd(value)}" for name, value in top) or "none priced"


def over_budget(expected: float, at_max: float, contributors: Sequence[tuple[str, float]],
                budget: Mapping[str, Any]) -> list[str]:
    """Messages for the monthly limits the stack breaks: ``expected`` (the expected month) against
    ``monthly_expected_max``, ``at_max`` (every resource at its largest size) against ``monthly_max_max``;
    ``contributors`` are (resource name, expected monthly cost)."""
    out = []
    for figure, value, limit_key in (("expected", expected, "monthly_expected_max"),
                                     ("at full size", at_max, "monthly_max_max")):
        limit = budget.get(limit_key)
        if limit is not None and value > limit:
            out.append(f"the stack costs {_usd(value)} a month {figure}, over budget.{limit_key} {_usd(limit)} "
                       f"(by {_usd(value - limit)}); the biggest: {_biggest(contributors)}. Fix: make those smaller "
                       f"or fewer, or raise dbx-ai-infra:budget.{limit_key} if the spend is agreed.")
    return out


#: The limits a stack's month is judged against, and those a change is.
MONTHLY_LIMITS = ("monthly_expected_max", "monthly_max_max")
INCREASE_LIMITS = ("increase_max", "increase_max_percent")


def unverifiable(limits: Sequence[str], unpriced: Sequence[str], budget: Mapping[str, Any], what: str) -> list[str]:
    """A budget that cannot be verified fails closed: for the ``limits`` the budget sets, one message naming the
    ``unpriced`` resources that the figures leave out (none when everything is priced)."""
    set_limits = [key for key in limits if budget.get(key) is not None]
    if not unpriced or not set_limits:
        return []
    return [f"{what} cannot be verified against budget.{', budget.'.join(set_limits)}: it leaves out the unpriced "
            f"{', '.join(unpriced)}, so the figure is not the whole cost. Fix: price them in the stack "
            f"(dbx-ai-infra:pricing: node_types for a node type, serving_dbu_per_hour for a serving workload type), "
            f"or choose a priced node type or workload type."]


def over_priced_budget(cost: Cost, names: Mapping[str, str], budget: Mapping[str, Any]) -> list[str]:
    """`over_budget` of a priced stack: its totals, and each priced resource (by URN; ``names``: URN -> name) as a
    contributor; a total that leaves an unpriced resource out cannot pass a limit (`unverifiable`)."""
    contributors = [(names.get(urn, urn), float(e.monthly.expected or 0)) for urn, e in cost.resources.items()]
    return unverifiable(MONTHLY_LIMITS, cost.total.unpriced, budget, "the stack's month") + over_budget(
        float(cost.total.monthly.expected or 0), float(cost.total.monthly.max or 0), contributors, budget)


def over_increase(base: float, head: float, changes: Sequence[tuple[str, float]],
                  budget: Mapping[str, Any]) -> list[str]:
    """Messages for the increase limits a change breaks: ``head - base`` (expected a month) against
    ``increase_max`` dollars and ``increase_max_percent`` of ``base``; ``changes`` are (resource name, monthly
    change)."""
    increase = head - base
    out = []
    limit = budget.get("increase_max")
    if limit is not None and increase > limit:
        out.append(f"the change adds {_usd(increase)} a month ({_usd(base)} -> {_usd(head)}), over "
                   f"budget.increase_max {_usd(limit)}; the biggest changes: {_biggest(changes)}. Fix: make the "
                   f"change smaller, or raise dbx-ai-infra:budget.increase_max if it is agreed.")
    percent = budget.get("increase_max_percent")
    if percent is not None and increase > 0 and (base <= 0 or increase / base * 100 > percent):
        share = "from nothing" if base <= 0 else f"{increase / base * 100:.1f}%"
        out.append(f"the change adds {share} a month ({_usd(base)} -> {_usd(head)}), over "
                   f"budget.increase_max_percent {percent:g}%; the biggest changes: {_biggest(changes)}. Fix: make "
                   f"the change smaller, or raise dbx-ai-infra:budget.increase_max_percent if it is agreed.")
    return out


def over_changed_budget(change: Mapping[str, Any], budget: Mapping[str, Any]) -> list[str]:
    """`over_increase` of a change (a cost diff from a base, `dbx_ai_infra.pricing.diff_costs`); a delta that leaves an
    unpriced resource out cannot pass a limit (`unverifiable`)."""
    def expected(side: Mapping[str, Any] | None) -> float:
        return float((side or {}).get("monthly_expected") or 0)

    changes = [(str(row["name"]), float(row["delta"].get("monthly_expected") or 0)) for row in change["rows"]
               if row["status"] != "unchanged"]
    gone = [f"{name} ({side})" for side, names in (change["total"].get("unpriced") or {}).items() for name in names]
    return unverifiable(INCREASE_LIMITS, gone, budget, "the change") or \
        over_increase(expected(change["total"]["base"]), expected(change["total"]["head"]), changes, budget)


def check(stack: StackView, config: Mapping[str, Any]) -> list[str]:
    """The stack's monthly limits, or with a change its increase limits; nothing when the stack sets no budget or
    was not priced, and the reason when it could not be (fails closed)."""
    plan = stack.plan
    if not plan.budget:
        return []
    if stack.unpriceable is not None:
        return [stack.unpriceable]
    if plan.cost is None:
        return []
    if stack.change is not None:
        return over_changed_budget(stack.change, plan.budget)
    return over_priced_budget(plan.cost, {r.urn: r.name for r in plan.resources}, plan.budget)


#: The budget's settings in the pack config (the stack file's ``budget`` is not visible to the pack): the limits,
#: the cloud, and the usage assumptions that price the month (``USAGE_DEFAULTS`` keys).
PACK_SETTINGS = {
    "monthly_expected_max": {"type": "number", "description": "Most the expected month may cost, USD."},
    "monthly_max_max": {"type": "number", "description": "Most the month may cost at full size, USD."},
    "usage": {"type": "object", "description": "Usage assumptions (the stack's usage section), for the month."},
    "region": {"type": "string", "description": "The workspace's region (the stack's region), for its prices."},
}


RULE = Rule(
    name=NAME,
    order=1000,
    description="A stack's expected and full-size monthly cost, and what a change adds, stay within its budget.",
    details=("A [stack rule](../policies.md#stack-rules): judged on the priced stack by `preview`, `check` and `cost` "
             "(the change, with `--against`) when the stack sets `dbx-ai-infra:budget`, and by the pack with the "
             "limits of its config (see [budgets](../cost.md#budgets-that-fail-a-pull-request))."),
    enforcement="mandatory",
    scope="stack",
    stack_check=check,
    judges_cost=True,
    pack_settings=PACK_SETTINGS,
    remediation="Make the stack (or the change) cheaper, or raise dbx-ai-infra:budget where the spend is agreed.",
    severity="high",
    stack_fields=("budget.monthly_expected_max", "budget.monthly_max_max", "budget.increase_max",
                  "budget.increase_max_percent", "budget"),
    sources=("pulumi",),
)
