"""Plain facts about recorded resources, shared by every renderer (table, Markdown, HTML)."""

from __future__ import annotations

from dbxtypes.money import cents, money, signed_money
from dbxtypes.plan import Resource, Violation

__all__ = ["cents", "facts", "leaves_out", "money", "short_type", "signed_money", "violations_summary"]

# The resource kinds are imported on use: a report of findings alone (`check --cluster-json`) needs no cost model.


def short_type(token: str) -> str:
    """The short name reports show for a type token (``Cluster``): its kind's (`pricing.kinds`)."""
    from pricing.kinds import short_type as short

    return short(token)


def facts(resource: Resource) -> str:
    """One line that says what a resource is, for a reviewer (its kind's `facts`; empty for an unknown type)."""
    from pricing.kinds import kind_of

    kind = kind_of(resource.type)
    return kind.facts(resource.inputs) if kind is not None else ""




def leaves_out(unpriced: list[str] | tuple[str, ...]) -> str:
    """What a total that is not complete says on its own line: `` (incomplete: leaves out 1 unpriced resource:
    x)``; "" for a complete one."""
    if not unpriced:
        return ""
    return (f" (incomplete: leaves out {len(unpriced)} unpriced resource{'' if len(unpriced) == 1 else 's'}: "
            f"{', '.join(unpriced)})")






def violations_summary(violations: list[Violation]) -> str:
    """``2 mandatory, 1 advisory`` (``, 1 excepted`` when a stack exception accepted some): one wording for every
    report."""
    excepted = sum(1 for v in violations if v.excepted)
    mandatory = sum(1 for v in violations if v.mandatory)
    text = f"{mandatory} mandatory, {len(violations) - mandatory - excepted} advisory"
    return text + (f", {excepted} excepted" if excepted else "")
