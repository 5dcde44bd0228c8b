"""The items of a workspace export as the rules judge them: one object each (`ExportItem`), and what an audit counts
of them. The reader that makes them from the documents a workspace returns is `dbx_ai_infra.sources.exports`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbx_ai_infra.dbxtypes.endpoint import served_entities
from dbx_ai_infra.dbxtypes.shape import normalize_props, shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLUSTER,
    ENDPOINT_TYPES,
    INSTANCE_POOL,
    JOB,
    OBO_TOKEN,
    PROVISIONED_THROUGHPUT_ENDPOINT,
    TOKEN,
    UNKNOWN_VALUE,
)
from dbx_ai_infra.policies.common import gpu_node, node_cloud

if TYPE_CHECKING:
    from dbx_ai_infra.dbxtypes.shape import ClusterShape

#: The resource type of a cluster policy read from an export (``policies/get``).
CLUSTER_POLICY_EXPORT = "cluster_policy"
#: How an item of a Terraform plan is named (``terraform:<address>``): a plan states its whole configuration.
TERRAFORM_URN = "terraform:"


@dataclass(frozen=True)
class ExportItem:
    """One object of an export: its resource type, its API JSON (a job's ``settings``), where it was, its name."""

    resource_type: str
    props: Mapping[str, Any]
    label: str
    name: str
    urn: str
    source: str
    #: A Terraform plan's resource the plan leaves as it is (``actions: ["no-op"]``): it exists, and is priced with
    #: the rest, but the plan does not create or change it, so a check of the plan does not judge it.
    unchanged: bool = False
    #: No value of ``props`` is unknown: read from a text that holds no unknown marker, as it was written (a
    #: workspace's JSON export, `dbx_ai_infra.sources.exports.ExportStream`), so its rules need not look for one.
    known: bool = False


def is_plan_item(item: ExportItem) -> bool:
    """An item of a Terraform plan (which states every resource of its configuration, Permissions included)."""
    return item.urn.startswith(TERRAFORM_URN)


def item_ids(item: ExportItem) -> tuple[str, ...]:
    """The ids an item is known by in its input (``cluster_id``, ``job_id``) when known."""
    return tuple(str(item.props[k]) for k in ("cluster_id", "job_id") if isinstance(item.props.get(k), (str, int)))


def clusters_of(items: Sequence[ExportItem]) -> list[Mapping[str, Any]]:
    """The cluster objects among the items (for ``--cluster-policy``, which judges clusters)."""
    return [i.props for i in items if i.resource_type == CLUSTER]


def item_shapes(item: ExportItem) -> list[ClusterShape]:
    """The cluster definitions of an export item as the rules read them (none for pools and policies)."""
    return shapes_of_resource(item.resource_type, item.props, "api", node_cloud=node_cloud, gpu_node=gpu_node)


def summary(items: Sequence[ExportItem]) -> dict[str, int]:
    """Counts of an export, AI compute told apart: clusters (and how many GPU), jobs, their cluster definitions (and
    how many GPU), instance pools, cluster policies, serving endpoints (a Terraform plan's)."""
    counts = {"clusters": 0, "gpu_clusters": 0, "jobs": 0, "job_clusters": 0, "gpu_job_clusters": 0,
              "instance_pools": 0, "cluster_policies": 0, "serving_endpoints": 0, "tokens": 0, "unchanged": 0}
    for item in items:
        summary_add(counts, item, item_shapes(item))
    return counts


def summary_add(counts: dict[str, int], item: ExportItem, shapes: Sequence[ClusterShape]) -> None:
    """Count one item into `summary`'s counts, given its cluster definitions (`item_shapes`), which the check has
    read already."""
    if item.resource_type == CLUSTER:
        counts["clusters"] += 1
        counts["gpu_clusters"] += any(s.gpu for s in shapes)
    elif item.resource_type == JOB:
        counts["jobs"] += 1
        counts["job_clusters"] += len(shapes)
        counts["gpu_job_clusters"] += sum(1 for s in shapes if s.gpu)
    elif item.resource_type == INSTANCE_POOL:
        counts["instance_pools"] += 1
    elif item.resource_type in ENDPOINT_TYPES:  # a workspace's (serving-endpoints get or list) or a plan's
        counts["serving_endpoints"] += 1
        kind = endpoint_compute(item.resource_type, item.props)
        if kind in ("gpu", "provisioned_throughput"):
            counts[f"{kind}_serving_endpoints"] = counts.get(f"{kind}_serving_endpoints", 0) + 1
    elif item.resource_type in (TOKEN, OBO_TOKEN):
        counts["tokens"] += 1
    elif item.resource_type == CLUSTER_POLICY_EXPORT:
        counts["cluster_policies"] += 1
    # a Permissions item says who may use the others: nothing of its own to count


def endpoint_compute(resource_type: str, props: Mapping[str, Any]) -> str:
    """What an endpoint serves on: ``provisioned_throughput`` (model units or a tokens-per-second band), ``gpu`` (a
    GPU workload type), ``unknown`` (a workload type not known: a list response's summary), else ``other`` (CPU,
    external or pay-per-token models)."""
    if resource_type == PROVISIONED_THROUGHPUT_ENDPOINT:
        return "provisioned_throughput"
    types = [e.get("workload_type") for e in served_entities(normalize_props(props))]
    if any(isinstance(t, str) and t.startswith(("GPU", "MULTIGPU")) for t in types):
        return "gpu"
    return "unknown" if UNKNOWN_VALUE in types else "other"


def summary_text(counts: Mapping[str, int]) -> str:
    """``17 clusters (2 GPU), 11 jobs with 12 job clusters (5 GPU), 1 instance pool``: what was checked."""
    def n(count: int, noun: str) -> str:
        return f"{count} {noun}" + ("" if count == 1 else "s")

    parts = [f"{n(counts['clusters'], 'cluster')} ({counts['gpu_clusters']} GPU)"]
    if counts["jobs"]:
        parts.append(f"{n(counts['jobs'], 'job')} with {n(counts['job_clusters'], 'job cluster')} "
                     f"({counts['gpu_job_clusters']} GPU)")
    if counts["instance_pools"]:
        parts.append(n(counts["instance_pools"], "instance pool"))
    if counts["cluster_policies"]:
        parts.append(n(counts["cluster_policies"], "cluster policy").replace("policys", "policies")
                     + " (each cluster is checked against the one it names)")
    if counts.get("serving_endpoints"):
        told = [f"{counts[k]} {what}" for k, what in (("gpu_serving_endpoints", "GPU"),
                                                      ("provisioned_throughput_serving_endpoints",
                                                       "provisioned throughput")) if counts.get(k)]
        parts.append(n(counts["serving_endpoints"], "serving endpoint") + (f" ({', '.join(told)})" if told else ""))
    if counts.get("tokens"):
        parts.append(n(counts["tokens"], "token"))
    if counts.get("unchanged"):
        parts.append(f"{n(counts['unchanged'], 'resource')} the plan leaves unchanged (not judged)")
    if counts.get("not_evaluated"):  # Terraform code: count/for_each not known here, a module not read
        parts.append(f"{n(counts['not_evaluated'], 'block')} of the code not evaluated (listed below: not judged, "
                     "not priced)")
    return ", ".join(parts)


def job_runs_on(items: Sequence[ExportItem]) -> dict[str, str]:
    """Clusters of the export that jobs run tasks on (``tasks[].existing_cluster_id``): cluster id -> ``job NAME
    task KEY`` (the first such task)."""
    out: dict[str, str] = {}
    for item in items:
        if item.resource_type != JOB:
            continue
        for task in item.props.get("tasks") or []:
            if isinstance(task, Mapping) and task.get("existing_cluster_id"):
                out.setdefault(str(task["existing_cluster_id"]), f"job {item.name} task {task.get('task_key')}")
    return out
