"""Priced advice on a plan: where another GPU family would hold the same model on one GPU for less.

Seed 001: "estimate first, then choose the smallest GPU that meets it; do not pay for compute you might use". A
stack's GPU family can force a multi-GPU node (a 7B fp16 model, 16.8 GB, needs 4 x T4 on the ``t4`` family) where
another family on the same cloud holds it on one GPU (one A10G, 24 GB) for a fraction of the price. For each
cluster on a multi-GPU node of its own (pool-backed clusters take the pool's node), every single-GPU node type of
the cloud whose GPU holds the model's need (the ``gpu_memory_need_gb`` tag) is priced with the same cost model, the
same size and hours; the cheapest one, when it is cheaper, is named with the monthly difference.
"""

from __future__ import annotations

import copy
from typing import Any

from dbxtypes.plan import Advice, Plan, Resource
from dbxtypes.shape import as_number, shapes_of_resource
from dbxtypes.vocabulary import CLUSTER, GPU_MEMORY_NEED_TAG

from .book import PriceBook
from .model import price_plan

__all__ = ["CHEAPER_SINGLE_GPU", "cheaper_gpu_advice"]

CHEAPER_SINGLE_GPU = "cheaper-single-gpu"


def _with_node(resource: Resource, node_type_id: str) -> Resource:
    inputs: dict[str, Any] = copy.deepcopy(resource.inputs)
    inputs["nodeTypeId"] = node_type_id
    if "driverNodeTypeId" in inputs:
        inputs["driverNodeTypeId"] = node_type_id
    return resource.model_copy(update={"inputs": inputs})


def _monthly(plan: Plan, resource: Resource, prices: PriceBook) -> float | None:
    alone = plan.model_copy(update={"resources": [resource], "cost": None, "violations": None})
    entry = price_plan(alone, prices).resources.get(resource.urn)
    return None if entry is None else entry.monthly.expected


def cheaper_gpu_advice(plan: Plan, prices: PriceBook, catalog: Any = None) -> list[Advice]:
    """`Advice` for each cluster on a multi-GPU node that one GPU of another family holds for less."""
    if catalog is None:
        from gpucatalog import load_catalog

        catalog = load_catalog()
    out: list[Advice] = []
    for resource in plan.resources:
        if resource.type != CLUSTER:
            continue
        (shape,) = shapes_of_resource(CLUSTER, resource.inputs, cloud=plan.cloud)
        need = as_number(shape.tags.get(GPU_MEMORY_NEED_TAG))
        node = catalog.get(shape.node_type_id) if shape.node_type_id else None
        if need is None or node is None or node.gpu_count == 1 or shape.pool_backed:
            continue
        current = _monthly(plan, resource, prices)
        if current is None:
            continue
        best: tuple[float, Any] | None = None
        for candidate in catalog.nodes:
            if candidate.cloud != plan.cloud or candidate.retired or candidate.gpu_count != 1 \
                    or candidate.gpu_memory_gb < need:
                continue
            monthly = _monthly(plan, _with_node(resource, candidate.node_type_id), prices)
            if monthly is not None and (best is None or monthly < best[0]):
                best = (monthly, candidate)
        if best is None or best[0] >= current:
            continue
        monthly, candidate = best
        out.append(Advice(
            id=CHEAPER_SINGLE_GPU, urn=resource.urn, resource_name=resource.name,
            monthly_cost_delta=monthly - current,
            message=(f"{shape.node_type_id} is {node.gpu_count} x {node.gpu} because the {node.family} family holds "
                     f"{need:g} GB only across GPUs; one {candidate.gpu} ({candidate.node_type_id}, "
                     f"{candidate.gpu_memory_gb:g} GB, family {candidate.family}) holds it on one GPU: "
                     f"${current:,.2f} -> ${monthly:,.2f} a month at the same size and hours. Fix: set the workload's "
                     f"gpu_family to {candidate.family}.")))
    return out
