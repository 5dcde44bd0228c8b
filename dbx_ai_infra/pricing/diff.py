"""Cost difference between two plans (base -> head), resource by resource.

Resources are matched by URN within one stack. Across stacks (``cost --stack prod --against dev``) the URN holds the
stack name, so resources are matched by their type and their name without the stack prefix (``prod-inference`` and
``dev-inference`` are the same workload).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Cost, CostEntry, Plan, coerce_plan

__all__ = ["diff_costs"]

_COMPARED = ("hourly", "hourly_max", "monthly", "nodes", "node_type_id", "driver_node_type_id", "availability",
             "first_on_demand", "compute_kind", "workload_type", "unpriced")


def _cost_of(plan: Plan, which: str) -> Cost:
    if plan.cost is None:
        raise InputError.single(which, "cost", "the plan carries no cost object.",
                                "price it first (plan.cost = price_plan(plan, prices)).")
    return plan.cost


def match_key(urn: str, name: str | None, stack: str) -> str:
    """The key a resource is matched by across stacks: its qualified type and its name without the ``<stack>-``
    prefix the program gives every resource (``prod-inference-cluster`` -> ``inference-cluster``)."""
    parts = urn.split("::")
    qualified_type = parts[2] if len(parts) >= 4 else ""
    bare = name or (parts[-1] if parts else urn)
    if stack and bare.startswith(f"{stack}-"):
        bare = bare[len(stack) + 1:]
    return f"{qualified_type}::{bare}"


#: The facts behind a price, as a reviewer reads them: "nodes 3 -> 5", "node g5.xlarge -> g5.2xlarge".
_DESCRIBED = {"nodes": "nodes", "node_type_id": "node", "driver_node_type_id": "driver", "availability": "availability",
              "first_on_demand": "on-demand nodes", "compute_kind": "compute", "workload_type": "billed as",
              "unpriced": "unpriced"}


def _fact(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, Mapping) and set(value) == {"min", "max"}:
        low, high = _fact(value["min"]), _fact(value["max"])
        return low if low == high else f"{low}-{high}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def describe_changes(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    """What changed between two cost entries' facts, in words: ``["nodes 3 -> 5", "node g5.xlarge -> g5.2xlarge"]``.
    Prices are left out: the delta columns carry them."""
    return [f"{label} {_fact(base.get(key))} -> {_fact(head.get(key))}" for key, label in _DESCRIBED.items()
            if not _same(base.get(key), head.get(key))]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-9)
        return False
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _side(entry: CostEntry | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    return {"hourly": entry.hourly, "hourly_max": entry.hourly_max, "monthly_min": entry.monthly.min,
            "monthly_expected": entry.monthly.expected, "monthly_max": entry.monthly.max,
            "unpriced": entry.unpriced}


_SIDE_NUMBERS = ("hourly", "hourly_max", "monthly_min", "monthly_expected", "monthly_max")
_HOURLY = ("hourly", "hourly_max")


def _delta(base: Mapping[str, Any] | None, head: Mapping[str, Any] | None) -> dict[str, float | None]:
    """head - base; an absent side counts as 0, an unpriced side makes the delta unknown (None)."""
    out: dict[str, float | None] = {}
    for key in _SIDE_NUMBERS:
        b = 0.0 if base is None else base.get(key)
        h = 0.0 if head is None else head.get(key)
        out[key] = None if b is None or h is None else h - b
    return out


def _total_side(cost: Cost) -> dict[str, Any]:
    total = cost.total
    return {"hourly": total.hourly, "hourly_max": total.hourly_max, "monthly_min": total.monthly.min,
            "monthly_expected": total.monthly.expected, "monthly_max": total.monthly.max, "unpriced": None}


def _pairs(b_plan: Plan, b_cost: Cost, h_plan: Plan, h_cost: Cost
           ) -> tuple[list[tuple[str | None, str | None]], int]:
    """The (base URN, head URN) pairs, None on an absent side, in head order then the removed ones in base order,
    and how many were paired by name. Same URN first; what is left is matched by type and name without the stack
    prefix (another stack)."""
    pairs: list[tuple[str | None, str | None]] = [(u, u) for u in h_cost.resources if u in b_cost.resources]
    head_order = {u: i for i, u in enumerate(h_cost.resources)}
    b_left = {match_key(u, e.name, b_plan.stack): u
              for u, e in b_cost.resources.items() if u not in h_cost.resources}
    by_name = 0
    for head_urn, entry in h_cost.resources.items():
        if head_urn in b_cost.resources:
            continue
        found = b_left.pop(match_key(head_urn, entry.name, h_plan.stack), None)
        by_name += found is not None
        pairs.append((found, head_urn))
    pairs.sort(key=lambda p: head_order[p[1]] if p[1] else 0)
    return pairs + [(u, None) for u in b_left.values()], by_name


def _row(b: CostEntry | None, h: CostEntry | None, urn: str | None) -> dict[str, Any]:
    """One resource's row: its status, the compared fields that differ, in words what changed, both sides, delta."""
    changes: list[str] = []
    what: list[str] = []
    if b is None:
        status = "added"
    elif h is None:
        status = "removed"
    else:
        b_json, h_json = b.to_json(), h.to_json()
        changes = [k for k in _COMPARED if not _same(b_json.get(k), h_json.get(k))]
        what = describe_changes(b_json, h_json)
        status = "changed" if changes else "unchanged"
    ref = h if h is not None else b
    assert ref is not None
    b_side, h_side = _side(b), _side(h)
    return {"urn": urn, "name": ref.name, "type": ref.type, "status": status, "changes": changes, "what": what,
            "base": b_side, "head": h_side, "delta": _delta(b_side, h_side)}


def diff_costs(base: Plan | Mapping[str, Any], head: Plan | Mapping[str, Any]) -> dict[str, Any]:
    """What changes in cost from ``base`` to ``head`` (both plans carrying a cost).

    Returns ``{"base_stack", "head_stack", "currency", "matched_by", "rows": [{urn, name, type, status, changes,
    what, base, head, delta}], "counts": {added, removed, changed, unchanged}, "total": {base, head, delta, complete,
    unpriced: {base: [names], head: [names]}} (``delta`` unknown, None, when a side leaves a resource out; its
    hourly figures known when only resources priced by the hour only, their month unknown, are left out),
    "by_workload": {role: {base, head, delta}}, "unpriced": {"base": n, "head": n}}``. ``status`` is ``added``
    (head only), ``removed`` (base only), ``changed`` or ``unchanged``; ``changes`` names the compared fields that
    differ and ``what`` says how the facts behind the price changed, in words (``nodes 3 -> 5``);
    ``base``/``head`` hold ``hourly``, ``hourly_max``, ``monthly_min``, ``monthly_expected``, ``monthly_max`` and
    ``unpriced`` (``None`` on the absent side); ``delta`` is head - base for each number, counting an absent side as 0
    and an unpriced one as unknown (None). Resources are paired by URN, then the rest by type and name without the stack
    prefix (another stack); ``matched_by`` says ``name`` when any pair was made that way, else ``urn``. Rows come in
    head order, then the removed ones in base order. A plan against itself gives all zeros. ``sizing`` lists the
    workloads whose sizing line (`SizingLine.text`) differs: ``{workload, base, head}``, so a reviewer sees why a node
    changed.
    """
    b_plan, h_plan = coerce_plan(base, "base"), coerce_plan(head, "head")
    b_cost, h_cost = _cost_of(b_plan, "base"), _cost_of(h_plan, "head")
    if b_cost.currency != h_cost.currency:
        raise InputError.single("base and head", "currency", f"differ ({b_cost.currency} vs {h_cost.currency}).",
                                "price both with the same price book.")
    pairs, by_name = _pairs(b_plan, b_cost, h_plan, h_cost)
    rows = [_row(b_cost.resources[b_urn] if b_urn else None, h_cost.resources[h_urn] if h_urn else None,
                 h_urn or b_urn) for b_urn, h_urn in pairs]
    counts = {status: sum(r["status"] == status for r in rows)
              for status in ("added", "removed", "changed", "unchanged")}

    b_total, h_total = _total_side(b_cost), _total_side(h_cost)
    # a side that leaves a resource out makes the change unknown: an unpriced resource is never a saving; but one
    # unpriced on both sides and unchanged is left out of both totals alike, so the change is known without it
    # (issue 51: an unchanged CPU cluster with no price made every pull request's delta unknown)
    stable = [r["name"] for r in rows if r["status"] == "unchanged" and (r["base"] or {}).get("unpriced")
              and (r["head"] or {}).get("unpriced")]
    unpriced = {side: [n for n in names if n not in stable]
                for side, names in (("base", b_cost.total.unpriced), ("head", h_cost.total.unpriced))}
    complete = not unpriced["base"] and not unpriced["head"]
    # the hourly figures count a resource priced by the hour only (its month unknown): their change is known when
    # neither side leaves one out of them
    hourly_known = not [n for total in (b_cost.total, h_cost.total) for n in total.hourly_unpriced if n not in stable]
    delta = _delta(b_total, h_total)
    total_delta = {k: delta[k] if complete or (hourly_known and k in _HOURLY) else None for k in _SIDE_NUMBERS}
    by_workload: dict[str, dict[str, float]] = {}
    b_work, h_work = b_cost.by_workload, h_cost.by_workload
    for role in [*h_work, *(r for r in b_work if r not in h_work)]:
        bv, hv = float(b_work.get(role, 0.0)), float(h_work.get(role, 0.0))
        by_workload[role] = {"base": bv, "head": hv, "delta": hv - bv}

    b_sizing = {z.workload: z.text for z in b_plan.sizing or []}
    h_sizing = {z.workload: z.text for z in h_plan.sizing or []}
    sizing = [{"workload": w, "base": b_sizing.get(w), "head": h_sizing.get(w)}
              for w in [*h_sizing, *(w for w in b_sizing if w not in h_sizing)] if b_sizing.get(w) != h_sizing.get(w)]

    return {
        "base_stack": b_plan.stack or None,
        "head_stack": h_plan.stack or None,
        "currency": h_cost.currency,
        "matched_by": "name" if by_name else "urn",
        "rows": rows,
        "counts": counts,
        "total": {"base": b_total, "head": h_total,
                  "delta": total_delta,
                  "complete": complete, "unpriced": unpriced, "unchanged_unpriced": stable},
        "by_workload": by_workload,
        "unpriced": {"base": len(b_cost.unpriced), "head": len(h_cost.unpriced)},
        "sizing": sizing,
    }
