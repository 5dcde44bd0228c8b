"""Prices for a plan: the price book (data files, then the stack's `pricing` config, then --prices) applied,
and the base plan a cost diff compares against."""

from __future__ import annotations

from typing import Any

from pricing import PricingInputError, load_overrides_file, load_prices
from pricing import price_plan as _price_plan
from stackspec import LoadedStack

from .inputs import InputError, read_json


def price_plan(plan: dict[str, Any], loaded: LoadedStack | None, prices_file: str | None) -> dict[str, Any]:
    """The plan's ``cost`` object. Later overrides win: data files < the stack's pricing config < --prices."""
    try:
        file_overrides = load_overrides_file(prices_file) if prices_file else None
    except PricingInputError as exc:
        raise InputError(str(exc)) from None
    stack_overrides = loaded.spec.pricing if loaded is not None else None
    return _price_plan(plan, load_prices(stack_overrides, file_overrides))


def read_plan_file(path: str) -> dict[str, Any]:
    """A plan saved earlier with ``preview --json`` (for example on the base branch)."""
    plan = read_json(path, "plan file", fix_missing=f"save one with `python -m stackplan preview --stack STACK "
                                                    f"--json --out {path}`.")
    if not isinstance(plan, dict) or not isinstance(plan.get("resources"), list):
        raise InputError(f"{path}: has no 'resources' list, so it is not a plan. Fix: pass a file written by "
                         f"`preview --json`.")
    return plan
