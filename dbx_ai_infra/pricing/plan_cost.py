"""The cost of a plan: every resource priced by its kind (`dbx_ai_infra.pricing.kinds`), then the totals."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from dbx_ai_infra.dbxtypes.clouds import profile
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import MAX_PLAN_NUMBER, Cost, CostEntry, Plan, Resource, coerce_plan
from dbx_ai_infra.dbxtypes.vocabulary import CLOUDS, ROLES

from .book import PriceBook
from .kinds import KINDS, kind_of
from .model import MODEL_NOTES, REFERENCE_NOTE, PricingContext, _assumptions, _Sources

#: The phases of pricing, in order (`dbx_ai_infra.pricing.kinds.kind.ResourceKind.phase`).
PHASES = sorted({k.phase for k in KINDS})


def _check_cloud(plan: Plan | Mapping[str, Any]) -> None:
    """`InputError` for a plan's JSON whose cloud is not one of `CLOUDS`."""
    if isinstance(plan, Mapping) and plan.get("cloud") not in CLOUDS:
        raise InputError.single("plan", "cloud", f"got {plan.get('cloud')!r}.", f"use one of {', '.join(CLOUDS)}.")


def _index(typed: Plan, ctx: PricingContext) -> None:
    """What each kind notes of the plan before anything is priced (`ResourceKind.index`)."""
    for r in typed.resources:
        kind = kind_of(r.type)
        if kind is not None and kind.index is not None:
            kind.index(r, ctx)


def _price_one(price: Callable[[Resource, PricingContext], CostEntry | None], r: Resource, ctx: PricingContext
               ) -> CostEntry | None:
    """One resource priced by its kind; `InputError` when the figures give it a cost past any real one."""
    try:
        return price(r, ctx)
    except ValidationError:  # a figure past any real cost: infinite, NaN, or beyond MAX_PLAN_NUMBER
        raise InputError.single("prices", "", f"the figures give {r.name} a cost that is not a finite "
                                f"number of a sane size.", "check the price overrides for figures too large "
                                "(such as 1e308).") from None


def _entries(typed: Plan, ctx: PricingContext) -> dict[str, CostEntry]:
    """Each priced resource's entry by URN, priced phase by phase (`PHASES`), in plan order."""
    entries: dict[str, CostEntry] = {}
    for phase in PHASES:
        for r in typed.resources:
            kind = kind_of(r.type)
            if kind is None or kind.price is None or kind.phase != phase:
                continue
            entry = _price_one(kind.price, r, ctx)
            if entry is not None:
                entries[r.urn] = entry
    order = {r.urn: i for i, r in enumerate(typed.resources)}  # plan order
    return dict(sorted(entries.items(), key=lambda kv: order.get(kv[0], 0)))


def _by_workload(entries: Mapping[str, CostEntry]) -> dict[str, float]:
    """The priced entries' monthly expected cost by role (a job's clusters each by its own), in `ROLES` order."""
    by_workload: dict[str, float] = {}
    for e in entries.values():
        if not e.priced:
            continue
        for part in e.clusters or [e]:
            role = str(part.workload_type)
            by_workload[role] = by_workload.get(role, 0.0) + float(part.monthly.expected or 0)
    rank: dict[str, int] = {role: i for i, role in enumerate(ROLES)}
    return dict(sorted(by_workload.items(), key=lambda kv: (rank.get(kv[0], len(ROLES)), kv[0])))


def _check_finite(total: Mapping[str, Any]) -> None:
    """`InputError` when a total is not a finite number of a sane size (figures too large in the overrides)."""
    if not all(math.isfinite(v) and abs(v) <= MAX_PLAN_NUMBER
               for v in (total["hourly"], total["hourly_max"], *total["monthly"].values())):
        raise InputError.single("prices", "", "the figures give a cost that is not a finite number.",
                                "check the price overrides for figures too large (such as 1e308).")


def price_plan(plan: Plan | Mapping[str, Any], prices: PriceBook) -> Cost:
    """The `Cost` of a plan (or of its JSON; the plan is not changed).

    ``resources`` (by URN: the entry of each cluster, job, pool and endpoint), ``total``, ``unpriced`` ({urn, name,
    reason}), ``by_workload`` (role: monthly expected), ``sources`` ({figure, value, source, date, estimate}),
    ``assumptions`` and ``notes``. See ``dbx_ai_infra.pricing.model``. Raises `InputError` for an unknown cloud or
    invalid usage
    assumptions.
    """
    _check_cloud(plan)
    typed = coerce_plan(plan)
    used = _Sources(prices)
    used.use("tier")
    ctx = PricingContext(cloud=typed.cloud, prices=prices, a=_assumptions(typed), used=used)
    _index(typed, ctx)
    entries = _entries(typed, ctx)
    total = _total(entries)
    by_workload = _by_workload(entries)
    _check_finite(total)
    return Cost.model_validate({
        "currency": prices.currency,
        "tier": prices.tier,
        "cloud": typed.cloud,
        "spot_factor": prices.spot_factor(typed.cloud),
        "region": prices.region(typed.cloud),
        "resources": entries,
        "total": total,
        "unpriced": [{"urn": urn, "name": e.name, "reason": e.unpriced, "hourly": e.hourly}
                     for urn, e in entries.items() if not e.priced],
        "by_workload": by_workload,
        "sources": used.entries(),
        "assumptions": dict(ctx.a),
        "notes": [*MODEL_NOTES, *region_notes(prices, typed.cloud, used.used)],
    })


def _total(entries: Mapping[str, CostEntry]) -> dict[str, Any]:
    """The sums: the monthly ones over the priced entries, the hourly ones also over those priced by the hour only;
    each says what it leaves out (issue 43; issue 51: a cluster priced by the hour only is in the first, not the
    second)."""
    priced = [e for e in entries.values() if e.priced]
    by_hour = [e for e in entries.values() if e.priced or e.hourly_only]

    def total_of(values: list[float | None]) -> float:
        return sum(float(v or 0) for v in values)

    return {
        "hourly": total_of([e.hourly for e in by_hour]),
        "hourly_max": total_of([e.hourly_max for e in by_hour]),
        "monthly": {m: total_of([getattr(e.monthly, m) for e in priced]) for m in ("min", "expected", "max")},
        "all_on_demand_monthly_expected": total_of([e.all_on_demand_monthly_expected for e in priced]),
        "saving_monthly_expected": total_of([e.saving_monthly_expected for e in priced]),
        "complete": len(priced) == len(entries),
        "unpriced": [e.name or urn for urn, e in entries.items() if not e.priced],
        "hourly_complete": len(by_hour) == len(entries),
        "hourly_unpriced": [e.name or urn for urn, e in entries.items() if not (e.priced or e.hourly_only)],
    }


def region_notes(prices: PriceBook, cloud: str, used: list[str]) -> list[str]:
    """What the cost says of its region: the reference regions' note, or the region priced (a node type with no VM
    price there is unpriced, named by its resource; a Model Serving $/DBU the region lacks is said here)."""
    region, record = prices.region(cloud), profile(cloud)
    if region == record.reference_region:
        return [REFERENCE_NOTE]
    regional = prices.regional
    known = regional is not None and regional.known(cloud)
    notes = [f"List prices for {record.display} {region} (VM prices from dbx_ai_infra/pricing/vm_prices.json and "
             f"dbx_ai_infra/pricing/regions.yaml, Model Serving $/DBU; jobs and all-purpose $/DBU are the same in "
             f"every region); "
             f"no committed-use or DBCU discounts. A node type with no {region} VM price is unpriced, never priced at "
             f"another region's."
             + ("" if known else f" {region} is not in Databricks' list-price table for {record.display}: every "
                                 f"figure is {record.reference_region}'s.")]
    serving = prices.rate_figure(cloud, "model_serving")
    source = (prices.source_of(serving) or {}).get("source") or ""
    if serving in used and known and not source.startswith(("regions.yaml", "override")):
        notes.append(f"No {region} Model Serving $/DBU at tier {prices.tier}: priced at "
                     f"{record.reference_region}'s.")
    return notes
