"""``databricks:index/job:Job``: a job and the clusters it creates (job clusters, task clusters)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.plan import CostEntry, Resource
from dbx_ai_infra.dbxtypes.serverless import GpuTask, serverless_gpu_tasks
from dbx_ai_infra.dbxtypes.shape import ClusterShape, as_mapping, normalize_props, shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import JOB, JOBS_COMPUTE, ROLE_TAG, SERVERLESS_GPU

from ..model import _MONEY_KEYS, PricingContext, _entry_head, _nodes_of, _Unpriced, _unpriced_entry, assumption
from ..serverless import serverless_gpu_rate
from .cluster import cluster_facts
from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    shapes = shapes_of_resource(JOB, inputs)
    tasks = [as_mapping(t) for t in normalize_props(inputs).get("tasks") or []]  # Pulumi's camelCase or the API's
    retries = ", ".join(f"{t.get('task_key')}: {t.get('max_retries', 0)} retries" for t in tasks)
    gpu = [f"serverless GPU: {t.task_key} on {t.accelerator}, "
           + (f"{t.gpus} GPUs" if t.gpus_stated else f"{t.gpus} GPUs (one node; no GPU count stated)")
           for t in serverless_gpu_tasks(inputs)]
    return "; ".join([*(f"job cluster: {cluster_facts(c)}" for c in shapes), *gpu, retries])


#: What a job with one cluster takes over from its cluster's entry, when the cluster's entry has it.
_ONE_CLUSTER_KEYS = ("driver_node_type_id", "instance_pool", "availability", "first_on_demand", "spot_nodes",
                     "hours_per_month", "hours_basis", "burst_hours_per_month", "extra_workers_expected")


def _price_part(shape: ClusterShape, ctx: PricingContext) -> tuple[dict[str, Any], str | None, str | None]:
    """One cluster of the job priced (its entry, named by ``cluster``), with why it is not priced at all, or why its
    month is unknown (priced by the hour only)."""
    reason = month = None
    try:
        part = ctx.price_cluster(shape)
    except _Unpriced as why:
        reason = f"{shape.label}: {why}"
        part = _unpriced_entry({"workload_type": shape.role, "compute_kind": JOBS_COMPUTE,
                                "node_type_id": shape.node_type_id, "nodes": _nodes_of(shape)}, str(why))
    else:
        if part["unpriced"]:  # priced by the hour, its month unknown
            month = f"{shape.label}: {part['unpriced']}"
    part["cluster"] = shape.label
    return part, reason, month


def _clusters_head(entry: dict[str, Any], parts: list[dict[str, Any]]) -> None:
    """The job's role ("mixed" across roles), node types, compute kind, nodes and clusters; with one cluster, its
    driver, pool, availability and hours too."""
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
        entry.update({key: parts[0][key] for key in _ONE_CLUSTER_KEYS if key in parts[0]})


def _hourly_totals(entry: dict[str, Any], parts: list[dict[str, Any]], months: list[str]) -> None:
    """Every cluster priced by the hour, some month unknown: the job's $/hour, its month unknown."""
    entry.update({k: sum(p[k] for p in parts) for k in ("hourly", "hourly_max", "dbu_hourly")})
    entry.update({"all_on_demand_monthly_expected": None, "saving_monthly_expected": None,
                  "dbu_monthly_expected": None, "monthly": {"min": None, "expected": None, "max": None},
                  "unpriced": "; ".join(months)})


def _monthly_totals(entry: dict[str, Any], parts: list[dict[str, Any]], _months: list[str]) -> None:
    """Every cluster priced by the month: the job's money figures, its clusters' sums."""
    entry.update({k: sum(p[k] for p in parts) for k in (*_MONEY_KEYS, "dbu_hourly", "dbu_monthly_expected")})
    entry["monthly"] = {m: sum(p["monthly"][m] for p in parts) for m in ("min", "expected", "max")}
    entry["unpriced"] = None


def _spot_basis(entry: dict[str, Any], parts: list[dict[str, Any]]) -> None:
    """The spot basis of the job's clusters, on the job's own entry too (issue 53, item 2): its factor when they share
    one; with several clusters, each cluster's basis names its cluster."""
    spotted = [p for p in parts if p.get("spot_factor") is not None]
    if not spotted:
        return
    factors = {p["spot_factor"] for p in spotted}
    entry["spot_factor"] = next(iter(factors)) if len(factors) == 1 else None
    entry["spot_basis"] = "; ".join(dict.fromkeys(
        p["spot_basis"] if len(parts) == 1 else f"{p['cluster']}: spot x {p['spot_factor']:.3f} ({p['spot_basis']})"
        for p in spotted if p.get("spot_basis")))


def price(resource: Resource, ctx: PricingContext) -> CostEntry | None:
    """The job's clusters, each priced (``clusters``), summed; None for a job on an existing cluster (it costs
    nothing of its own)."""
    shapes = shapes_of_resource(JOB, resource.inputs, cloud=ctx.cloud)
    if not shapes:
        gpu_tasks = serverless_gpu_tasks(resource.inputs)
        return _serverless_price(resource, gpu_tasks, ctx) if gpu_tasks else None
    entry = _entry_head(resource)
    priced = [_price_part(shape, ctx) for shape in shapes]
    parts = [part for part, _, _ in priced]
    reasons = [reason for _, reason, _ in priced if reason is not None]  # a cluster not priced at all
    months = [month for _, _, month in priced if month is not None]  # a cluster priced by the hour only
    _clusters_head(entry, parts)
    ctx.note_pool_users(shapes, entry["workload_type"])
    if reasons:
        return CostEntry.model_validate(_unpriced_entry(entry, "; ".join([*reasons, *months])))
    (_hourly_totals if months else _monthly_totals)(entry, parts, months)
    _spot_basis(entry, parts)
    return CostEntry.model_validate(entry)


def _serverless_price(resource: Resource, tasks: list[GpuTask], ctx: PricingContext) -> CostEntry:
    """A job on serverless GPU (no cluster of ours): its tasks' GPUs x the accelerator's $/GPU-hour x the training
    job hours (``training_job_hours_per_month``, the workload's own where the stack gives one). A task whose GPU
    count the definition does not state is priced at one node, and the entry says so."""
    tags = {str(k): v for k, v in as_mapping(normalize_props(resource.inputs).get("tags")).items()}
    hours, name = assumption(ctx.a, "training_job_hours_per_month", tags)
    entry: dict[str, Any] = {**_entry_head(resource), "workload_type": str(tags.get(ROLE_TAG) or "training"),
                             "compute_kind": SERVERLESS_GPU, "availability": "SERVERLESS",
                             "node_type_id": ", ".join(dict.fromkeys(t.accelerator for t in tasks)),
                             "nodes": {"min": 0, "max": 0}, "hours_per_month": float(hours or 0),
                             "hours_basis": f"usage assumption {name}"}
    hourly, reasons = 0.0, []
    for task in tasks:
        try:
            rate, figures = serverless_gpu_rate(ctx.prices, ctx.cloud, task.accelerator)
        except _Unpriced as why:
            reasons.append(f"{task.task_key}: {why}")
            continue
        if task.gpus is None:
            reasons.append(f"{task.task_key}: the GPU count of {task.accelerator} is not known")
            continue
        for figure, fig in figures:
            ctx.used.use(figure, fig)
        hourly += rate * task.gpus
    gpus = sum(t.gpus or 0 for t in tasks)
    entry["gpus"] = gpus
    if any(not t.gpus_stated for t in tasks):
        entry["hours_basis"] += "; GPU count not stated by the job: one accelerator node priced"
    if reasons:
        return CostEntry.model_validate(_unpriced_entry(entry, "; ".join(reasons)))
    monthly = hourly * float(hours or 0)
    entry.update({"hourly": hourly, "hourly_max": hourly, "monthly": {"min": monthly, "expected": monthly,
                                                                     "max": monthly},
                  "all_on_demand_monthly_expected": monthly, "saving_monthly_expected": 0.0, "unpriced": None})
    return CostEntry.model_validate(entry)


KIND = ResourceKind(JOB, "Job", facts, price)
