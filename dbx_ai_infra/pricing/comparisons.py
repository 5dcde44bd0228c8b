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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.dbxtypes.money import money
from dbx_ai_infra.dbxtypes.plan import Advice, CostEntry, Plan, Resource
from dbx_ai_infra.dbxtypes.shape import as_number, shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLUSTER,
    GPU_MEMORY_NEED_TAG,
    JOB,
    MODEL_SERVING_ENDPOINT,
    WORKLOAD_TAG,
    workload_key,
)
from dbx_ai_infra.gpucatalog import SizingError, choose_node, load_catalog
from dbx_ai_infra.gpucatalog.serving import ServingSizingError, choose_serving_type, load_serving_catalog

from .book import PriceBook
from .model import endpoint_monthly, on_demand_node_hourly
from .plan_cost import price_plan

__all__ = ["CHEAPER_SINGLE_GPU", "CLUSTER_VS_ENDPOINT", "ENDPOINT_VS_CLUSTER", "TRAINING_ON_JOB_COMPUTE",
           "cheaper_gpu_advice", "job_compute_advice", "serving_comparison"]

CHEAPER_SINGLE_GPU = "cheaper-single-gpu"
CLUSTER_VS_ENDPOINT = "cluster-vs-endpoint"
ENDPOINT_VS_CLUSTER = "endpoint-vs-cluster"
TRAINING_ON_JOB_COMPUTE = "training-on-job-compute"


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
                     f"{money(current)} -> {money(monthly)} a month at the same size and hours. Fix: set the "
                     f"workload's gpu_family to {candidate.family}.")))
    return out


def comparison(advice_id: str, resource: Resource, current: float, other: float, this: str, that: str,
               alternative: str, switch: str, owner: str | None = None) -> Advice:
    """One side of a comparison of two ways to run a resource: ``this`` way (``owner`` when its month is named, by
    default ``this``) costs ``current`` a month, ``that`` way ``other``; ``alternative`` says what that way runs,
    ``switch`` how to move to it when it is cheaper. The delta is the other way's month minus this one's."""
    cheaper = (f"{that} is cheaper by {money(current - other)} a month" if other < current
               else f"{this} is cheaper by {money(other - current)} a month")
    return Advice(id=advice_id, urn=resource.urn, resource_name=resource.name, monthly_cost_delta=other - current,
                  message=(f"{alternative} would cost {money(other)} a month against {owner or this}'s "
                           f"{money(current)}: {cheaper}. Fix: {switch if other < current else 'none needed.'}"))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


@dataclass(frozen=True)
class _Priced:
    """A priced resource of the plan: its cost entry, expected monthly cost and hours a month (both known)."""

    resource: Resource
    entry: CostEntry
    monthly: float
    hours: float


@dataclass(frozen=True)
class _Sizing:
    """What the comparison prices the other option with: the plan's cloud, the prices and both catalogs."""

    cloud: str
    prices: PriceBook
    catalog: Any
    serving: Any


def _cluster_as_endpoint(priced: _Priced, sizing: _Sizing) -> Advice | None:
    """An inference cluster against a Model Serving endpoint sized for its model (``gpu_memory_need_gb``): a replica
    per base GPU worker, 4 provisioned concurrency each, warm for the cluster's hours. None: not an inference cluster,
    or no endpoint type or price for it."""
    if priced.entry.workload_type != "inference":
        return None
    (shape,) = shapes_of_resource(CLUSTER, priced.resource.inputs, cloud=sizing.cloud)
    need = as_number(shape.tags.get(GPU_MEMORY_NEED_TAG))
    if need is None:
        return None
    try:
        wtype = choose_serving_type(sizing.serving, sizing.cloud, need).workload_type
    except ServingSizingError:
        return None
    replicas = max(1, int(shape.min_workers))
    other = endpoint_monthly(sizing.cloud, wtype, 4 * replicas, priced.hours, sizing.prices)
    if other is None:
        return None
    return comparison(
        CLUSTER_VS_ENDPOINT, priced.resource, priced.monthly, other, "the cluster", "the endpoint",
        f"a Model Serving endpoint for the same model ({need:g} GB -> {wtype}, {_plural(replicas, 'replica')} "
        f"for the {_plural(replicas, 'base worker')}, {priced.entry.hours_per_month:g} h)",
        "serve it from dbx-ai-infra:serving if the model runs there (MLflow pyfunc, no Spark).", owner="this cluster")


def _endpoint_need(resource: Resource) -> float | None:
    """An endpoint's GPU memory need: its ``gpu_memory_need_gb`` tag (None: untagged)."""
    return next((as_number(t.get("value")) for t in resource.inputs.get("tags") or []
                 if isinstance(t, dict) and t.get("key") == GPU_MEMORY_NEED_TAG), None)


def _family_node(catalog: Any, cloud: str, family: str, need: float) -> Any:
    """The node the sizer picks for an inference need in ``family`` (None: no node of the family holds it)."""
    try:
        return choose_node(catalog, cloud, family, need, workload="inference").node
    except SizingError:
        return None


def _cheapest_node(sizing: _Sizing, need: float) -> tuple[float, str] | None:
    """(on-demand $/h, node type) of the cheapest node the sizer picks for ``need`` in any family of the cloud; None:
    no family holds it at a known price. The first family listed wins a tie."""
    best: tuple[float, str] | None = None
    for family in sizing.catalog.families(sizing.cloud):
        node = _family_node(sizing.catalog, sizing.cloud, family, need)
        hourly = None if node is None else on_demand_node_hourly(sizing.prices, sizing.cloud, node.node_type_id)
        if hourly is not None and (best is None or hourly < best[0]):
            best = (hourly, node.node_type_id)
    return best


def _endpoint_as_cluster(priced: _Priced, sizing: _Sizing) -> Advice | None:
    """A Model Serving endpoint against an inference cluster of the node the sizer picks for its model (the cheapest
    family of the cloud), a driver and a worker per base replica, on demand, for the endpoint's hours. None: the
    endpoint has no need tag or no node count, or no node holds the need."""
    need = _endpoint_need(priced.resource)
    if need is None or priced.entry.nodes is None:
        return None
    best = _cheapest_node(sizing, need)
    if best is None:
        return None
    replicas = max(1, int(priced.entry.nodes.min))
    other = (1 + replicas) * best[0] * priced.hours
    return comparison(
        ENDPOINT_VS_CLUSTER, priced.resource, priced.monthly, other, "the endpoint", "the cluster",
        f"an inference cluster for the same model ({need:g} GB -> {best[1]}, a driver and "
        f"{_plural(replicas, 'worker')}, on demand, {priced.entry.hours_per_month:g} h)",
        "an inference cluster (dbx-ai-infra:inference) if the traffic is steady.", owner="this endpoint")


#: The other option each resource type is compared with.
_COMPARED: dict[str, Callable[[_Priced, _Sizing], Advice | None]] = {
    CLUSTER: _cluster_as_endpoint, MODEL_SERVING_ENDPOINT: _endpoint_as_cluster}


def _priced(resource: Resource, entry: CostEntry | None) -> _Priced | None:
    """The resource with its expected monthly cost and hours; None when the cost has either unknown."""
    if entry is None or entry.monthly.expected is None or entry.hours_per_month is None:
        return None
    return _Priced(resource, entry, float(entry.monthly.expected), float(entry.hours_per_month))


def serving_comparison(plan: Plan, prices: PriceBook, catalog: Any = None) -> list[Advice]:
    """For each inference cluster, what a Model Serving endpoint sized for the same model would cost at the same
    hours; for each endpoint, what an inference cluster would; the cheaper option named (`Advice`, the delta is the
    other option's monthly cost minus this one's).

    Like for like: a replica per GPU worker of the cluster's base (4 provisioned concurrency each), warm for the
    cluster's hours; a cluster of the node the sizer picks for the endpoint's model (the cheapest family of the
    cloud that holds it), a driver and a worker per base replica, on demand, for the endpoint's hours."""
    sizing = _Sizing(plan.cloud, prices, catalog or load_catalog(), load_serving_catalog())
    cost = plan.cost if plan.cost is not None else price_plan(plan, prices)
    out: list[Advice] = []
    for resource in plan.resources:
        priced = _priced(resource, cost.resources.get(resource.urn))
        compare = _COMPARED.get(resource.type)
        advice = compare(priced, sizing) if priced is not None and compare is not None else None
        if advice is not None:
            out.append(advice)
    return out


def _workload(resource: Resource, cloud: str | None) -> str | None:
    """The stack workload a cluster or job belongs to: its clusters' ``dbx_workload`` tag."""
    shapes = shapes_of_resource(resource.type, resource.inputs, cloud=cloud)
    return next((str(s.tags[WORKLOAD_TAG]) for s in shapes if s.tags.get(WORKLOAD_TAG)), None)


def job_compute_advice(plan: Plan, prices: PriceBook) -> list[Advice]:
    """For an all-purpose training cluster beside a training job of the same stack: what its hours would cost on the
    job's compute (the same nodes, Jobs Compute DBUs, about a third of all-purpose: seed 000's second cost action),
    priced with the same cost model (the job's own hourly price)."""
    cost = plan.cost if plan.cost is not None else price_plan(plan, prices)
    entries = [(r, cost.resources.get(r.urn)) for r in plan.resources]
    jobs = [(r, e) for r, e in entries if r.type == JOB and e is not None and e.workload_type == "training"
            and e.hourly]
    out: list[Advice] = []
    for resource, entry in entries:
        if resource.type != CLUSTER or entry is None or entry.workload_type != "training" or not jobs:
            continue
        if not entry.hourly or not entry.hours_per_month or entry.monthly.expected is None:
            continue
        name = _workload(resource, plan.cloud)
        same = [(j, e) for j, e in jobs if _workload(j, plan.cloud) == name]  # the workload's own job first
        job, job_entry = (same or jobs)[0]
        assert job_entry is not None and job_entry.hourly is not None
        current = float(entry.monthly.expected)
        other = float(job_entry.hourly) * float(entry.hours_per_month)
        if other >= current:
            continue
        out.append(Advice(
            id=TRAINING_ON_JOB_COMPUTE, urn=resource.urn, resource_name=resource.name,
            monthly_cost_delta=other - current,
            message=(f"this all-purpose training cluster costs {money(current)} a month ({entry.hours_per_month:g} h "
                     f"at {money(float(entry.hourly))}/h); the same hours on the job's compute ({job.name}, Jobs "
                     f"Compute DBUs, {money(float(job_entry.hourly))}/h) would cost {money(other)}: "
                     f"{money(current - other)} a month less. Fix: run recurring training as the job and drop the "
                     f"all-purpose cluster (dbx-ai-infra:{workload_key(name or 'training')}.all_purpose_cluster: "
                     f"false)."))
        )
    return out
