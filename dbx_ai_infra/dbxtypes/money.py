"""Money as every report writes it: US dollars rounded half away from zero to whole cents, from the shortest decimal
form of the float (so 1.005 is $1.01, never $1.00 as binary rounding gives). One module, read by the reports, the
cost model's advice, the budget policy and advise."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def cents(value: float) -> int:
    """Whole cents, half away from zero, from the shortest decimal form of the float (1.005 -> 101)."""
    return int(Decimal(repr(float(value))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) * 100)


def money(value: float | None) -> str:
    """``$1,234.57``; ``unpriced`` for None."""
    if value is None:
        return "unpriced"
    whole = cents(value)
    sign = "-" if whole < 0 else ""
    return f"{sign}${abs(whole) / 100:,.2f}"


def signed_money(value: float | None) -> str:
    """``+$1.00``, ``-$1.00`` or ``$0.00``; ``unknown`` for None (an unpriced side)."""
    if value is None:
        return "unknown"
    whole = cents(value)
    if whole == 0:
        return "$0.00"
    return ("+" if whole > 0 else "-") + f"${abs(whole) / 100:,.2f}"
