"""The stack's workloads as ``advise`` matches telemetry to them: one `Target` per cluster of the plan.

An all-purpose cluster is matched by its ``cluster_name`` (the component's name, e.g. ``prod-inference``); a job
cluster, whose name Databricks makes up per run, by its tags ``dbx_stack`` (the stack), ``workload_type`` (its role)
and ``dbx_workload`` (its workload), which every cluster of the stack carries
(`dbx_ai_infra.dbxtypes.vocabulary.STACK_TAG`,
`ROLE_TAG`, `WORKLOAD_TAG`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.dbxtypes.endpoint import endpoint_shape
from dbx_ai_infra.dbxtypes.plan import Plan
from dbx_ai_infra.dbxtypes.shape import shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import (
    ALL_PURPOSE,
    CLUSTER,
    JOB,
    MODEL_SERVING,
    MODEL_SERVING_ENDPOINT,
    SERVING_WORKLOAD,
    WORKLOAD_TAG,
    section_of_urn,
    workload_key,
)
from dbx_ai_infra.gpucatalog import load_catalog
from dbx_ai_infra.pricing.book import rate_figure_name


@dataclass(frozen=True)
class Target:
    """One cluster definition of the stack, with what the analysis needs to judge it."""

    workload: str  #: the name reports show: the cluster's name, or the job's name for a job cluster
    role: str  #: training | inference | interactive
    section: str  #: its role's stack section: training | inference | dev
    name: str  #: the stack workload it belongs to (its ``dbx_workload`` tag; a role section's: the section)
    key: str  #: where the workload's settings are in the stack: ``inference`` or ``workloads.chat``
    kind: str  #: ALL_PURPOSE or JOBS_COMPUTE
    cluster_name: str | None  #: matched by name (all-purpose); None: matched by tags (job cluster)
    node_type_id: str
    gpus_per_node: int
    min_workers: int
    max_workers: int
    autotermination_minutes: int
    usd_per_dbu: float
    dbu_hourly: float  #: the DBU part of the hourly cost at the minimum size (cost model)
    dbu_monthly_expected: float  #: the DBU part of the expected monthly cost (cost model)
    vm_monthly_expected: float  #: the VM part of the expected monthly cost (cost model): the cloud's bill
    hours_per_month: float
    extra_workers_expected: float  #: the cost model's average workers above the base while bursting
    low_bandwidth: bool  #: no GPU interconnect and below `low_bandwidth_gbps` (multi-node training scales poorly)
    bandwidth_gbps: float | None


def targets_of(plan: Plan, low_bandwidth_gbps: float) -> list[Target]:
    """The plan's clusters and job clusters that the cost model priced (a priced plan: ``plan.cost`` set)."""
    assert plan.cost is not None, "advise needs a priced plan"
    catalog = load_catalog()
    out = []
    for resource in plan.resources:
        entry = plan.cost.resources.get(resource.urn)
        if resource.type not in (CLUSTER, JOB) or entry is None or entry.unpriced is not None:
            continue
        shapes = shapes_of_resource(resource.type, resource.inputs, cloud=plan.cloud)
        parts = entry.clusters or [entry]
        for shape, part in zip(shapes, parts, strict=False):
            node = catalog.get(str(part.node_type_id)) if part.node_type_id else None
            figures = [f for f in ((node.network_gbps, node.interconnect_gbps) if node else ()) if f is not None]
            bandwidth = max(figures) if figures else None
            name = str(shape.props.get("cluster_name") or "") if resource.type == CLUSTER else ""
            job_name = str(resource.inputs.get("name") or resource.name)
            hours = float(part.hours_per_month or 0)
            section = section_of_urn(resource.urn) or shape.role
            workload = str(shape.tags.get(WORKLOAD_TAG) or section)
            out.append(Target(
                workload=name or job_name, role=shape.role, section=section, name=workload,
                key=workload_key(workload),
                kind=shape.compute_kind,
                cluster_name=name if shape.compute_kind == ALL_PURPOSE and name else None,
                node_type_id=str(part.node_type_id or ""), gpus_per_node=node.gpu_count if node else 0,
                min_workers=int(shape.min_workers), max_workers=int(shape.max_workers),
                autotermination_minutes=int(shape.autotermination_minutes or 0),
                usd_per_dbu=_usd_per_dbu(plan, shape.compute_kind),
                dbu_hourly=float(part.dbu_hourly or 0), dbu_monthly_expected=float(part.dbu_monthly_expected or 0),
                vm_monthly_expected=max(0.0, float(part.monthly.expected or 0) - float(part.dbu_monthly_expected or 0)),
                hours_per_month=hours,
                extra_workers_expected=float(part.extra_workers_expected or 0),
                low_bandwidth=node is not None and node.interconnect_gbps is None
                and (bandwidth is None or bandwidth < low_bandwidth_gbps),
                bandwidth_gbps=bandwidth))
    return out


def _usd_per_dbu(plan: Plan, kind: str) -> float:
    """The $/DBU rate the cost model used for this compute kind (the figure it lists in the plan's sources)."""
    assert plan.cost is not None
    name = rate_figure_name(plan.cloud, plan.cost.tier, kind)
    return next((float(s.value) for s in plan.cost.sources if s.figure == name), 0.0)


def target_rows(targets: list[Target], stack: str) -> list[dict[str, Any]]:
    """The targets as the SQL's ``targets`` relation sees them."""
    names: dict[str, set[str]] = {}
    for t in targets:
        names.setdefault(t.section, set()).add(t.name)
    return [{"workload": t.workload, "role": t.role, "kind": t.kind, "cluster_name": t.cluster_name,
             "tag_stack": stack, "tag_workload": t.name, "role_shared": len(names[t.section]) > 1,
             "min_workers": t.min_workers, "max_workers": t.max_workers,
             "autotermination_minutes": t.autotermination_minutes, "gpus_per_node": t.gpus_per_node,
             "dbu_hourly": t.dbu_hourly,
             "dbu_monthly_expected": t.dbu_monthly_expected, "vm_monthly_expected": t.vm_monthly_expected,
             "low_bandwidth": t.low_bandwidth}
            for t in targets]


@dataclass(frozen=True)
class EndpointTarget:
    """One Model Serving endpoint of the stack, as ``advise`` judges it: matched by its name in the workspace (the
    ``endpoint_name`` column of ``serving_requests``, the name the payload table was logged for)."""

    workload: str  #: the endpoint's name (reports show it in the workload column)
    key: str  #: where its settings are in the stack: ``serving.endpoints.<name>``
    workload_type: str  #: its GPU workload type (GPU_MEDIUM, ...)
    min_concurrency: int
    max_concurrency: int
    scale_to_zero: bool
    #: Its AI Gateway payload table (``catalog.schema.<prefix>_payload``), None without an inference table.
    payload_table: str | None
    monthly_expected: float  #: the cost model's expected month (`dbx_ai_infra.pricing.model.serving_cost`)
    hourly: float  #: the cost model's $ an hour while it is up (its base replicas; one while a scale-to-zero is up)
    hours_per_month: float  #: the hours a month the cost model prices it up (all of them unless it scales to zero)
    usd_per_dbu: float  #: the model-serving $/DBU the cost model used
    role: str = SERVING_WORKLOAD
    section: str = "serving"


def endpoint_targets(plan: Plan) -> list[EndpointTarget]:
    """The plan's Model Serving endpoints (one served entity each, as the component makes them)."""
    out = []
    for resource in plan.resources:
        if resource.type != MODEL_SERVING_ENDPOINT:
            continue
        e = endpoint_shape(resource.inputs)
        name = e.name or resource.name
        entry = plan.cost.resources.get(resource.urn) if plan.cost is not None else None
        out.append(EndpointTarget(
            workload=name, key=f"serving.endpoints.{name}", workload_type=e.workload_type,
            min_concurrency=e.min_concurrency, max_concurrency=e.max_concurrency or 0,
            scale_to_zero=e.scale_to_zero, payload_table=e.payload_table,
            monthly_expected=float(entry.monthly.expected or 0) if entry is not None and entry.monthly else 0.0,
            hourly=float(entry.hourly or 0) if entry is not None else 0.0,
            hours_per_month=float(entry.hours_per_month or 0) if entry is not None else 0.0,
            usd_per_dbu=_usd_per_dbu(plan, MODEL_SERVING) if plan.cost is not None else 0.0))
    return out


def endpoint_rows(endpoints: list[EndpointTarget]) -> list[dict[str, Any]]:
    """The endpoints as the SQL's ``endpoints`` relation sees them."""
    return [{"endpoint": e.workload, "min_concurrency": e.min_concurrency, "max_concurrency": e.max_concurrency,
             "scale_to_zero": e.scale_to_zero, "payload_table": e.payload_table,
             "monthly_expected": e.monthly_expected} for e in endpoints]
