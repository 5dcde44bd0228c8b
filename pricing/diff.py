"""Cost difference between two plans (base -> head), resource by resource (matched by URN)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .errors import PricingInputError

__all__ = ["diff_costs"]

_COMPARED = ("hourly", "hourly_max", "monthly", "nodes", "node_type_id", "driver_node_type_id", "availability",
             "first_on_demand", "compute_kind", "workload_type", "unpriced")


def _cost_of(doc: Mapping[str, Any], which: str) -> Mapping[str, Any]:
    if isinstance(doc, Mapping) and isinstance(doc.get("cost"), Mapping):
        return doc["cost"]
    if isinstance(doc, Mapping) and "resources" in doc and "total" in doc and "currency" in doc:
        return doc  # a cost object itself
    raise PricingInputError(f"{which}: expected a plan with a 'cost' object (price_plan's result). "
                            f"Fix: set plan['cost'] = price_plan(plan, prices) first")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-9)
        return False
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _side(entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    monthly = entry.get("monthly") or {}
    return {"hourly": entry.get("hourly"), "hourly_max": entry.get("hourly_max"),
            "monthly_min": monthly.get("min"), "monthly_expected": monthly.get("expected"),
            "monthly_max": monthly.get("max"), "unpriced": entry.get("unpriced")}


_SIDE_NUMBERS = ("hourly", "hourly_max", "monthly_min", "monthly_expected", "monthly_max")


def _delta(base: Mapping[str, Any] | None, head: Mapping[str, Any] | None) -> dict[str, float | None]:
    """head - base; an absent side counts as 0, an unpriced side makes the delta unknown (None)."""
    out: dict[str, float | None] = {}
    for key in _SIDE_NUMBERS:
        b = 0.0 if base is None else base.get(key)
        h = 0.0 if head is None else head.get(key)
        out[key] = None if b is None or h is None else h - b
    return out


def _total_side(cost: Mapping[str, Any]) -> dict[str, Any]:
    total = cost.get("total") or {}
    monthly = total.get("monthly") or {}
    return {"hourly": total.get("hourly", 0.0), "hourly_max": total.get("hourly_max", 0.0),
            "monthly_min": monthly.get("min", 0.0), "monthly_expected": monthly.get("expected", 0.0),
            "monthly_max": monthly.get("max", 0.0), "unpriced": None}


def diff_costs(base: Mapping[str, Any], head: Mapping[str, Any]) -> dict[str, Any]:
    """What changes in cost from ``base`` to ``head`` (both plans carrying a ``cost`` object).

    Returns ``{"base_stack", "head_stack", "currency", "rows": [{urn, name, type, status, changes, base, head,
    delta}], "counts": {added, removed, changed, unchanged}, "total": {base, head, delta}, "by_workload": {role:
    {base, head, delta}}, "unpriced": {"base": n, "head": n}}``. ``status`` is ``added`` (head only), ``removed``
    (base only), ``changed`` or ``unchanged``; ``base``/``head`` hold ``hourly``, ``hourly_max``,
    ``monthly_min``, ``monthly_expected``, ``monthly_max`` and ``unpriced`` (``None`` on the absent side);
    ``delta`` is head - base for each number, counting an absent side as 0 and an unpriced one as unknown (None).
    Rows come in head order, then the removed ones in base order. A plan against itself gives all zeros.
    """
    b_cost, h_cost = _cost_of(base, "base"), _cost_of(head, "head")
    b_res: Mapping[str, Any] = b_cost.get("resources") or {}
    h_res: Mapping[str, Any] = h_cost.get("resources") or {}
    if b_cost.get("currency") != h_cost.get("currency"):
        raise PricingInputError(f"base and head are in different currencies ({b_cost.get('currency')} vs "
                                f"{h_cost.get('currency')}). Fix: price both with the same price book")

    rows: list[dict[str, Any]] = []
    counts = {"added": 0, "removed": 0, "changed": 0, "unchanged": 0}
    for urn in [*h_res, *(u for u in b_res if u not in h_res)]:
        b, h = b_res.get(urn), h_res.get(urn)
        if b is None:
            status, changes = "added", []
        elif h is None:
            status, changes = "removed", []
        else:
            changes = [k for k in _COMPARED if not _same(b.get(k), h.get(k))]
            status = "changed" if changes else "unchanged"
        counts[status] += 1
        ref = h if h is not None else b
        b_side, h_side = _side(b), _side(h)
        rows.append({"urn": urn, "name": ref.get("name"), "type": ref.get("type"), "status": status,
                     "changes": changes, "base": b_side, "head": h_side, "delta": _delta(b_side, h_side)})

    b_total, h_total = _total_side(b_cost), _total_side(h_cost)
    by_workload: dict[str, dict[str, float]] = {}
    b_work, h_work = b_cost.get("by_workload") or {}, h_cost.get("by_workload") or {}
    for role in [*h_work, *(r for r in b_work if r not in h_work)]:
        bv, hv = float(b_work.get(role, 0.0)), float(h_work.get(role, 0.0))
        by_workload[role] = {"base": bv, "head": hv, "delta": hv - bv}

    base_plan = base.get("stack") if isinstance(base, Mapping) else None
    head_plan = head.get("stack") if isinstance(head, Mapping) else None
    return {
        "base_stack": base_plan,
        "head_stack": head_plan,
        "currency": h_cost.get("currency"),
        "rows": rows,
        "counts": counts,
        "total": {"base": b_total, "head": h_total, "delta": _delta(b_total, h_total)},
        "by_workload": by_workload,
        "unpriced": {"base": len(b_cost.get("unpriced") or []), "head": len(h_cost.get("unpriced") or [])},
    }
