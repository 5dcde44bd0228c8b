"""Plain facts about recorded resources, shared by every renderer (table, Markdown, HTML)."""

from __future__ import annotations

from dbx_ai_infra.dbxtypes.clouds import profile
from dbx_ai_infra.dbxtypes.money import cents, money, signed_money
from dbx_ai_infra.dbxtypes.plan import NOT_JUDGED, Cost, CostEntry, Plan, Resource, Violation

__all__ = ["cents", "facts", "leaves_out", "money", "month_text", "prices_line", "short_type", "signed_money",
           "spot_lines", "subject", "total_month_unknown", "violations_summary"]

# The resource kinds are imported on use: a report of findings alone (`check --cluster-json`) needs no cost model.


def short_type(token: str) -> str:
    """The short name reports show for a type token (``Cluster``): its kind's (`dbx_ai_infra.pricing.kinds`)."""
    from dbx_ai_infra.pricing.kinds import short_type as short

    return short(token)


def facts(resource: Resource) -> str:
    """One line that says what a resource is, for a reviewer (its kind's `facts`; empty for an unknown type)."""
    from dbx_ai_infra.pricing.kinds import kind_of

    kind = kind_of(resource.type)
    return kind.facts(resource.inputs) if kind is not None else ""




def leaves_out(unpriced: list[str] | tuple[str, ...], hourly_only: list[str] | tuple[str, ...] = ()) -> str:
    """What a total that is not complete says on its own line: `` (incomplete: leaves out 1 unpriced resource:
    x)``, and for the resources priced by the hour only (``hourly_only``, also in ``unpriced``: counted in the hourly
    figures, their month unknown) ``the month leaves out 1 resource priced by the hour only ...``; "" for a complete
    one."""
    fully = [name for name in unpriced if name not in set(hourly_only)]
    parts = []
    if fully:
        parts.append(f"leaves out {len(fully)} unpriced resource{'' if len(fully) == 1 else 's'}: {', '.join(fully)}")
    if hourly_only:
        n = len(hourly_only)
        parts.append(f"the month leaves out {n} resource{'' if n == 1 else 's'} priced by the hour only, "
                     f"{'its' if n == 1 else 'their'} hours a month unknown: {', '.join(hourly_only)}")
    return f" (incomplete: {'; '.join(parts)})" if parts else ""


def total_month_unknown(cost: Cost) -> bool:
    """The monthly total holds nothing but leaves something out: every resource's month is unknown, so the total
    month is shown as unknown, never as $0.00."""
    return not cost.total.complete and not any(e.priced for e in cost.resources.values())


def month_text(entry: CostEntry, value: float | None) -> str:
    """A monthly figure of an entry: ``unknown`` when it is priced by the hour only (its month unknown), else the
    money (``unpriced`` for None)."""
    return "unknown" if entry.hourly_only else money(value)


def subject(plan: Plan) -> str:
    """What a plan is of, for its title: a ``Stack``, or the ``Terraform module`` or ``Terraform plan`` it was
    read from (`dbx_ai_infra.sources.terraform`: its resources named by address), or the ``Workspace export``
    (``cost --cluster-json``: its resources named by the API's ids and names)."""
    from dbx_ai_infra.policies.items import TERRAFORM_URN

    terraform = any(r.urn.startswith(TERRAFORM_URN) for r in plan.resources)
    if plan.stack_file and (terraform or not plan.stack_file.endswith((".yaml", ".yml"))):
        if plan.resources and not terraform:
            return "Workspace export"
        return "Terraform plan" if plan.stack_file.endswith(".json") else "Terraform module"
    return "Stack"


def prices_line(cost: Cost) -> str:
    """Which prices a cost uses, for the line under its total: ``AWS eu-west-1 prices, tier premium`` (the reference
    region says it is one, and how to price another). The line says what the figures are: a region the list-price
    table does not have is priced at the reference region's, and figures the region has no price for (a node
    type's VM price, Model Serving's $/DBU) are named with the region they come from, as the cost's notes say."""
    record = profile(cost.cloud)
    region = cost.region or record.reference_region
    if region == record.reference_region:
        where = (f"{record.display} {region} prices (the reference region: set dbx-ai-infra:region or pass --region "
                 "to price another)")
    elif any(f"{region} is not in Databricks' list-price table" in note for note in cost.notes):
        where = (f"{record.display} {record.reference_region} prices, every figure ({region} is not in Databricks' "
                 f"list-price table for {record.display})")
    else:
        fallbacks = [note[:1].lower() + note[1:].rstrip(".") for note in cost.notes
                     if note.startswith(f"No {region} ")]
        where = f"{record.display} {region} prices" + (f" ({'; '.join(fallbacks)})" if fallbacks else "")
    return f"{where}, tier {cost.tier}, {cost.currency} list prices"


def spot_lines(cost: Cost) -> list[str]:
    """For each priced row with spot nodes: the row and the spot factor that priced them, with what it is."""
    out = []
    for urn, entry in cost.resources.items():
        for part in entry.clusters or [entry]:
            if part.spot_factor is not None and part.spot_basis:
                name = str(entry.name or urn) + (f" {part.cluster}" if part is not entry and part.cluster else "")
                out.append(f"{name}: spot x {part.spot_factor:.3f} ({part.spot_basis})")
    return out


def violations_summary(violations: list[Violation]) -> str:
    """``2 mandatory, 1 advisory`` (``, 1 excepted`` when a stack exception accepted some): one wording for every
    report."""
    excepted = sum(1 for v in violations if v.excepted)
    mandatory = sum(1 for v in violations if v.mandatory)
    unjudged = sum(1 for v in violations if v.enforcement == NOT_JUDGED and not v.excepted)
    text = f"{mandatory} mandatory, {len(violations) - mandatory - excepted - unjudged} advisory"
    return text + (f", {excepted} excepted" if excepted else "") + (f", {unjudged} not judged" if unjudged else "")
