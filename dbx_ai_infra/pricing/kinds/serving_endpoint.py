"""``databricks:index/modelServing:ModelServing``: a Model Serving endpoint (serverless: DBUs only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.endpoint import WORKLOAD_SIZES, endpoint_shape
from dbx_ai_infra.dbxtypes.money import money as usd
from dbx_ai_infra.dbxtypes.plan import CostEntry, Resource
from dbx_ai_infra.dbxtypes.shape import as_number
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLOUD_TAG,
    GPU_MEMORY_NEED_TAG,
    HOURS_PER_MONTH,
    MODEL_SERVING,
    MODEL_SERVING_ENDPOINT,
    SERVING_WORKLOAD,
    UNKNOWN_VALUE,
)
from dbx_ai_infra.gpucatalog.serving import load_serving_catalog, sdk_knows

from ..model import PricingContext, _entry_head, _Unpriced, _unpriced_entry, serving_cost
from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    e = endpoint_shape(inputs)  # Pulumi's camelCase or the API's (a Terraform plan's) snake_case
    entity, table = e.entity, e.inference_table
    size = f"size {e.workload_size}" if e.workload_size else \
        f"concurrency {entity.get('min_provisioned_concurrency')}-{entity.get('max_provisioned_concurrency')}"
    parts = [f"{entity.get('entity_name')} v{entity.get('entity_version')} on {entity.get('workload_type')}", size,
             "scales to zero" if entity.get("scale_to_zero_enabled") else "always warm"]
    if table.get("enabled"):
        parts.append(f"inference table {table.get('catalog_name')}.{table.get('schema_name')}")
    parts += [f"{r.get('calls')} calls/{r.get('key')}/{r.get('renewal_period')}" for r in e.rate_limits]
    return ", ".join(parts)


def price(resource: Resource, ctx: PricingContext) -> CostEntry:
    """Serving DBUs of its replicas: the month when always warm; with scale to zero, its active hours (its own
    ``serving_active_hours_per_month.<name>`` where the stack gives one) and a price per launch."""
    e = endpoint_shape(resource.inputs)
    cloud = str(e.tags.get(CLOUD_TAG) or ctx.cloud)
    scale_to_zero = e.scale_to_zero
    low = e.min_concurrency
    high = e.max_concurrency or max(low, 4)
    name = e.name or resource.name
    a = ctx.a
    if scale_to_zero:
        own = a.get(f"serving_active_hours_per_month.{name}")
        hours = float(own if own is not None else a.get("serving_active_hours_per_month") or 0.0)
        basis = (f"usage assumption serving_active_hours_per_month.{name}" if own is not None
                 else "usage assumption serving_active_hours_per_month")
    else:
        hours, basis = float(HOURS_PER_MONTH), "always on: no scale to zero (the month)"
    entry = _entry_head(resource)
    workload_type = e.workload_type
    entry.update({"workload_type": SERVING_WORKLOAD, "node_type_id": workload_type, "compute_kind": MODEL_SERVING,
                  "availability": "SERVERLESS", "hours_per_month": hours, "hours_basis": basis})
    unknown = _unknown_compute(e)
    if unknown:
        entry["nodes"] = {"min": 0, "max": 0}
        return CostEntry.model_validate(_unpriced_entry(entry, unknown))
    try:
        money = serving_cost(cloud, workload_type, low, high, scale_to_zero, hours,
                             float(a.get("serving_launches_per_month") or 0.0) if scale_to_zero else 0.0,
                             ctx.prices, ctx.used)
    except _Unpriced as why:
        entry["nodes"] = {"min": 0, "max": 0}
        hint = _priced_alternative(e, cloud, low, high, scale_to_zero, hours, ctx)
        return CostEntry.model_validate(_unpriced_entry(entry, f"{why}{hint}"))
    base, top = money.pop("replicas")
    entry.update(money)
    entry.update({"nodes": {"min": base, "max": top}, "all_on_demand_monthly_expected": money["monthly"]["expected"],
                  "saving_monthly_expected": 0.0, "unpriced": None})
    return CostEntry.model_validate(entry)


def _unknown_compute(e: Any) -> str | None:
    """Why the endpoint's replicas cannot be counted, or None: a workload type or size not known here (a
    serving-endpoints list summary holds neither; a Terraform value known only after apply), or a custom workload
    size, whose concurrency range is not public (databricks-sdk documents Small, Medium and Large)."""
    if UNKNOWN_VALUE in (e.workload_type, e.workload_size, e.entity.get("scale_to_zero_enabled")):
        return ("its workload type, size or scale to zero is not known here (a serving-endpoints list response holds "
                "none of them; read the endpoint with serving-endpoints get, or check --workspace)")
    if e.size_unknown:
        return (f"workload size {e.workload_size} has no public concurrency range (databricks-sdk documents "
                f"{', '.join(WORKLOAD_SIZES)}); state min/max_provisioned_concurrency instead")
    return None


def _priced_alternative(e: Any, cloud: str, low: int, high: int, scale_to_zero: bool, hours: float,
                        ctx: PricingContext) -> str:
    """For an unpriced endpoint, an order of magnitude: the cheapest workload type of the cloud with a public rate
    that holds the model's need (whatever databricks-sdk's enum says of it, labelled), priced the same way; "" when
    no priced type holds it or the need is unknown."""
    need = as_number(e.tags.get(GPU_MEMORY_NEED_TAG))
    if need is None:
        return ""
    fitting = [t for t in load_serving_catalog().of_cloud(cloud) if t.dbu_per_hour is not None
               and t.gpu_memory_gb >= need]
    if not fitting:
        return ""
    best = min(fitting, key=lambda t: (t.dbu_per_hour or 0.0, t.gpu_memory_gb))
    try:
        money = serving_cost(cloud, best.workload_type, low, high, scale_to_zero, hours, 0.0, ctx.prices)
    except _Unpriced:
        return ""
    listed = "" if sdk_knows(best.workload_type) else ", which databricks-sdk's enum does not list"
    return (f"; the cheapest priced type that holds its {need:g} GB: {best.workload_type} "
            f"({best.gpu_memory_gb:g} GB, {best.dbu_per_hour:g} DBU/h{listed}), about "
            f"{usd(money['monthly']['expected'])} a month")


KIND = ResourceKind(MODEL_SERVING_ENDPOINT, "ModelServing", facts, price, phase=1)
