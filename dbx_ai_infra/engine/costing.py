"""Prices for a plan: the price book (data files, then the stack's `pricing` config, then --prices) applied,
and the base plan a cost diff compares against."""

from __future__ import annotations

from dbx_ai_infra.dbxtypes.plan import Cost, Plan
from dbx_ai_infra.engine.inputs import read_json
from dbx_ai_infra.pricing import PriceBook, load_overrides_file, load_prices
from dbx_ai_infra.pricing import price_plan as _price_plan
from dbx_ai_infra.stackspec import LoadedStack


def price_book(loaded: LoadedStack | None, prices_file: str | None, region: str | None = None) -> PriceBook:
    """The price book of a plan at ``region`` (default: the stack's ``region``; None: the reference regions). Later
    overrides win: data files < the region's figures < the stack's pricing config < --prices."""
    file_overrides = load_overrides_file(prices_file) if prices_file else None
    stack_overrides = loaded.spec.pricing if loaded is not None else None
    if region is None and loaded is not None:
        region = loaded.spec.region
    return load_prices(stack_overrides, file_overrides, region=region)


def price_plan(plan: Plan, loaded: LoadedStack | None, prices_file: str | None) -> Cost:
    """The plan's cost with `price_book`'s prices, at the plan's region."""
    return _price_plan(plan, price_book(loaded, prices_file, plan.region))


def read_plan_file(path: str) -> Plan:
    """A plan saved earlier with ``preview --json`` (for example on the base branch)."""
    doc = read_json(path, "plan file", fix_missing=f"save one with `python -m stackplan preview --stack STACK "
                                                   f"--json --out {path}`.")
    return Plan.from_json(doc, path)
