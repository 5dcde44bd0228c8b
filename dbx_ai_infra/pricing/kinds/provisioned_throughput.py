"""``databricks:index/modelServingProvisionedThroughput:ModelServingProvisionedThroughput``: a Foundation Model
provisioned-throughput endpoint (serverless: billed per model unit-hour while it exists, no scale to zero)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.plan import CostEntry, Resource
from dbx_ai_infra.dbxtypes.serverless import provisioned_entity
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLOUD_TAG,
    HOURS_PER_MONTH,
    PROVISIONED_THROUGHPUT,
    PROVISIONED_THROUGHPUT_ENDPOINT,
)

from ..model import PricingContext, _entry_head, _Unpriced, _unpriced_entry
from ..serverless import provisioned_throughput_rate
from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    e = provisioned_entity(inputs)
    units = f"{e.model_units} model units" if e.model_units is not None or e.band is None else \
        f"{e.band[0]}-{e.band[1]} tokens/s"
    parts = [f"{e.entity} v{e.entity_version} on provisioned throughput", units]
    table = e.inference_table
    if table.get("enabled"):
        parts.append(f"inference table {table.get('catalog_name')}.{table.get('schema_name')}")
    return ", ".join(parts)


def price(resource: Resource, ctx: PricingContext) -> CostEntry:
    """Its model units x the model's $/model unit-hour, the whole month (provisioned throughput never scales to
    zero); unpriced, named, when the model or the cloud has no rate."""
    e = provisioned_entity(resource.inputs)
    cloud = str(e.tags.get(CLOUD_TAG) or ctx.cloud)
    entry: dict[str, Any] = {**_entry_head(resource), "workload_type": "serving", "node_type_id": e.entity,
                             "compute_kind": PROVISIONED_THROUGHPUT, "availability": "SERVERLESS",
                             "model_units": e.model_units, "hours_per_month": float(HOURS_PER_MONTH),
                             "hours_basis": "always provisioned: provisioned throughput has no scale to zero "
                                            "(the month)", "nodes": {"min": 0, "max": 0}}
    if e.model_units is None and e.band is not None:
        return CostEntry.model_validate(_unpriced_entry(entry, (
            f"provisioned in a tokens-per-second band ({e.band[0]}-{e.band[1]} tokens/s, a legacy model family), "
            "for which no public rate per band is trusted (lakemeter-oss prices bands, not the tokens/s each buys)")))
    if e.model_units is None:
        return CostEntry.model_validate(_unpriced_entry(entry, "the endpoint states no provisioned_model_units"))
    try:
        rate, figures = provisioned_throughput_rate(ctx.prices, cloud, e.entity)
    except _Unpriced as why:
        return CostEntry.model_validate(_unpriced_entry(entry, str(why)))
    for figure, fig in figures:
        ctx.used.use(figure, fig)
    ctx.used.use(ctx.prices.rate_figure(cloud, "model_serving"))
    hourly = rate * e.model_units
    monthly = hourly * HOURS_PER_MONTH
    entry.update({"hourly": hourly, "hourly_max": hourly,
                  "monthly": {"min": monthly, "expected": monthly, "max": monthly},
                  "all_on_demand_monthly_expected": monthly, "saving_monthly_expected": 0.0, "unpriced": None})
    return CostEntry.model_validate(entry)


KIND = ResourceKind(PROVISIONED_THROUGHPUT_ENDPOINT, "ProvisionedThroughput", facts, price, phase=1)
