"""``databricks:index/cluster:Cluster``: an all-purpose cluster."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.plan import CostEntry, Resource
from dbx_ai_infra.dbxtypes.shape import ClusterShape, as_number, shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import ALL_PURPOSE, CLUSTER, SCALE_DOWN_WINDOW_KEY

from ..model import PricingContext, _entry_head, _nodes_of, _Unpriced, _unpriced_entry
from .kind import ResourceKind


def cluster_facts(shape: ClusterShape) -> str:
    """Node type, size, availability and idle timeout of one cluster definition."""
    node = shape.node_type_id or ("pool" if shape.pool_backed else "?")
    if shape.autoscale is not None:
        size = f"{shape.autoscale[0]}-{shape.autoscale[1]} workers"
    else:
        size = f"{shape.num_workers} workers"
    parts = [node, size]
    clouds = list(shape.blocks)
    if clouds and shape.availability_declared_in(clouds[0]):
        parts.append(f"{shape.availability_in(clouds[0])} (first_on_demand {shape.first_on_demand_in(clouds[0])})")
    window = as_number(shape.spark_conf.get(SCALE_DOWN_WINDOW_KEY))
    if window is not None:
        parts.append(f"scale down every {window / 60:g} min")
    if shape.autotermination_minutes == 0:
        parts.append("never auto-terminates")
    elif shape.autotermination_minutes is not None:
        parts.append(f"idle {shape.autotermination_minutes} min")
    return ", ".join(parts)


def facts(inputs: Mapping[str, Any]) -> str:
    return cluster_facts(shapes_of_resource(CLUSTER, inputs)[0])


def price(resource: Resource, ctx: PricingContext) -> CostEntry:
    shape = shapes_of_resource(CLUSTER, resource.inputs, cloud=ctx.cloud)[0]
    entry = _entry_head(resource)
    try:
        entry.update(ctx.price_cluster(shape))
    except _Unpriced as why:
        entry.update({"workload_type": shape.role, "node_type_id": shape.node_type_id, "compute_kind": ALL_PURPOSE,
                      "nodes": _nodes_of(shape)})
        entry = _unpriced_entry(entry, str(why))
    ctx.note_pool_users([shape], entry["workload_type"])
    return CostEntry.model_validate(entry)


KIND = ResourceKind(CLUSTER, "Cluster", facts, price)
