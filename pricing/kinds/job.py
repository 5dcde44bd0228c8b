"""``databricks:index/job:Job``: a job and the clusters it creates (job clusters, task clusters)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbxtypes.plan import CostEntry, Resource
from dbxtypes.shape import as_mapping, normalize_props, shapes_of_resource
from dbxtypes.vocabulary import JOB, JOBS_COMPUTE

from ..model import _MONEY_KEYS, PricingContext, _entry_head, _nodes_of, _Unpriced, _unpriced_entry
from .cluster import cluster_facts
from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    shapes = shapes_of_resource(JOB, inputs)
    tasks = [as_mapping(t) for t in normalize_props(inputs).get("tasks") or []]  # Pulumi's camelCase or the API's
    retries = ", ".join(f"{t.get('task_key')}: {t.get('max_retries', 0)} retries" for t in tasks)
    return "; ".join([*(f"job cluster: {cluster_facts(c)}" for c in shapes), retries])


def price(resource: Resource, ctx: PricingContext) -> CostEntry | None:
    """The job's clusters, each priced (``clusters``), summed; None for a job on an existing cluster (it costs
    nothing of its own)."""
    shapes = shapes_of_resource(JOB, resource.inputs, cloud=ctx.cloud)
    if not shapes:
        return None
    entry = _entry_head(resource)
    parts: list[dict[str, Any]] = []
    reasons: list[str] = []
    for shape in shapes:
        try:
            part = ctx.price_cluster(shape)
        except _Unpriced as why:
            reasons.append(f"{shape.label}: {why}")
            part = _unpriced_entry({"workload_type": shape.role, "compute_kind": JOBS_COMPUTE,
                                    "node_type_id": shape.node_type_id, "nodes": _nodes_of(shape)}, str(why))
        part["cluster"] = shape.label
        parts.append(part)
    roles = sorted({p["workload_type"] for p in parts})
    node_types = list(dict.fromkeys(str(p["node_type_id"]) for p in parts if p.get("node_type_id")))
    entry.update({
        "workload_type": roles[0] if len(roles) == 1 else "mixed",
        "node_type_id": ", ".join(node_types) or None,
        "compute_kind": JOBS_COMPUTE,
        "nodes": {"min": sum(p["nodes"]["min"] for p in parts), "max": sum(p["nodes"]["max"] for p in parts)},
        "clusters": parts,
    })
    if len(parts) == 1:
        for key in ("driver_node_type_id", "instance_pool", "availability", "first_on_demand", "spot_nodes",
                    "hours_per_month", "hours_basis", "burst_hours_per_month", "extra_workers_expected"):
            if key in parts[0]:
                entry[key] = parts[0][key]
    ctx.note_pool_users(shapes, entry["workload_type"])
    if reasons:
        return CostEntry.model_validate(_unpriced_entry(entry, "; ".join(reasons)))
    entry.update({k: sum(p[k] for p in parts) for k in (*_MONEY_KEYS, "dbu_hourly", "dbu_monthly_expected")})
    entry["monthly"] = {m: sum(p["monthly"][m] for p in parts) for m in ("min", "expected", "max")}
    entry["unpriced"] = None
    return CostEntry.model_validate(entry)


KIND = ResourceKind(JOB, "Job", facts, price)
