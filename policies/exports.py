"""What a workspace export holds, in the shapes Databricks returns them: one reader for all of them.

Recognised (each from the REST API reference, and what ``databricks <group> <list|get> -o json`` prints):

- a cluster (``clusters/get``), a list of clusters, or ``{"clusters": [...]}`` (``clusters/list``);
- a job (``jobs/get``: ``{"job_id", "settings": {...}}``), a list of jobs, or ``{"jobs": [...]}`` (``jobs/list``
  with ``expand_tasks``); its job clusters and task clusters are checked;
- an instance pool (``instance-pools/get``) or ``{"instance_pools": [...]}``;
- a cluster policy (``policies/get``) or ``{"policies": [...]}`` (a cluster naming one is checked against it);
- any list or mix of these, and several JSON documents one after another (paged exports concatenated).

Anything else is invalid input naming the item and its keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbxtypes.errors import InputError, clip
from dbxtypes.vocabulary import CLUSTER, INSTANCE_POOL, JOB

if TYPE_CHECKING:
    from dbxtypes.shape import ClusterShape

CLUSTER_POLICY_EXPORT = "cluster_policy"
CLUSTER_KEYS = frozenset({"cluster_id", "cluster_name", "spark_version", "node_type_id", "driver_node_type_id",
                          "num_workers", "autoscale", "instance_pool_id"})
#: List responses, by key, and the type of their items.
CONTAINERS: Mapping[str, str] = {"clusters": CLUSTER, "jobs": JOB, "instance_pools": INSTANCE_POOL,
                                  "policies": CLUSTER_POLICY_EXPORT}
#: Keys of a list response that are not items (paging).
PAGING = frozenset({"has_more", "next_page_token", "prev_page_token"})
FIX = ("pass what the Databricks API or CLI returns: a cluster, a job (jobs/get), an instance pool, a cluster "
       "policy, their lists ({\"clusters\": [...]}, {\"jobs\": [...]}, ...), or a mix of these.")


@dataclass(frozen=True)
class ExportItem:
    """One object of an export: its resource type, its API JSON (a job's ``settings``), where it was, its name."""

    resource_type: str
    props: Mapping[str, Any]
    label: str
    name: str
    urn: str
    source: str


def _kind(item: Mapping[str, Any]) -> str | None:
    if isinstance(item.get("settings"), Mapping):
        return JOB
    if "instance_pool_name" in item:
        return INSTANCE_POOL
    if "definition" in item and "spark_version" not in item:
        return CLUSTER_POLICY_EXPORT
    if CLUSTER_KEYS & set(item):
        return CLUSTER
    return None


def _item(kind: str, obj: Mapping[str, Any], label: str, index: int, source: str) -> ExportItem:
    if kind == JOB:
        settings = obj["settings"] if isinstance(obj.get("settings"), Mapping) else obj
        job_id = obj.get("job_id")
        name = str(settings.get("name") or job_id or f"job[{index}]")
        return ExportItem(JOB, settings, label, name, f"job:{job_id or name}", source)
    if kind == INSTANCE_POOL:
        name = str(obj.get("instance_pool_name") or obj.get("instance_pool_id") or f"pool[{index}]")
        return ExportItem(INSTANCE_POOL, obj, label, name, f"instance-pool:{obj.get('instance_pool_id') or name}",
                          source)
    if kind == CLUSTER_POLICY_EXPORT:
        name = str(obj.get("name") or obj.get("policy_id") or f"policy[{index}]")
        return ExportItem(kind, obj, label, name, f"cluster-policy:{obj.get('policy_id') or name}", source)
    cluster_id, cluster_name = obj.get("cluster_id"), obj.get("cluster_name")
    name = str(cluster_name or cluster_id or f"cluster[{index}]")
    return ExportItem(CLUSTER, obj, label, name, f"cluster:{cluster_id or cluster_name or index}", source)


def export_items(doc: Any, source: str, label: str = "", index: int = 0) -> list[ExportItem]:
    """Every object of an export document (or of a list of documents), in order; raises `InputError` naming the
    first item that is none of the recognised shapes."""
    out: list[ExportItem] = []
    if isinstance(doc, list):
        for i, element in enumerate(doc):
            out += export_items(element, source, f"{label}[{i}]", i)
        return out
    if not isinstance(doc, Mapping):
        raise InputError.single(source, label, f"expected a Databricks object or a list of them, got "
                                f"{type(doc).__name__}.", FIX)
    for key in CONTAINERS:
        if doc.get(key) is not None and not isinstance(doc[key], list) and not _kind(doc):
            where = f"{label}.{key}" if label else key
            raise InputError.single(source, where, f"must be a list of objects, got {type(doc[key]).__name__}.", FIX)
    lists = [key for key in CONTAINERS if key in doc and isinstance(doc[key], list)]
    if lists and not _kind(doc):
        for key in lists:
            for i, element in enumerate(doc[key]):
                where = f"{label}.{key}[{i}]" if label else f"{key}[{i}]"
                if not isinstance(element, Mapping):
                    raise InputError.single(source, where, f"is a {type(element).__name__}, not an object.", FIX)
                out.append(_item(CONTAINERS[key], element, where, len(out), source))
        return out
    if set(doc) <= PAGING | set(CONTAINERS):  # an empty page: {"has_more": false}, {"clusters": null}
        return out
    kind = _kind(doc)
    if kind is None:
        keys = ", ".join(sorted(map(str, doc))[:8]) or "no keys"
        raise InputError.single(source, label, f"does not look like a Databricks cluster, job, instance pool or "
                                f"cluster policy (has {clip(keys)}).", FIX)
    out.append(_item(kind, doc, label, index, source))
    return out


def read_export_file(path: Any, what: str = "cluster JSON") -> list[ExportItem]:
    """The items of one export file: one JSON document, or several one after another (paged exports)."""
    from dbxtypes.documents import parse_json_stream, read_text

    docs = parse_json_stream(read_text(path, what), str(path))
    return export_items(docs[0] if len(docs) == 1 else docs, str(path))


def clusters_of(items: Sequence[ExportItem]) -> list[Mapping[str, Any]]:
    """The cluster objects among the items (for ``--cluster-policy``, which judges clusters)."""
    return [i.props for i in items if i.resource_type == CLUSTER]


def item_shapes(item: ExportItem) -> list[ClusterShape]:
    """The cluster definitions of an export item as the rules read them (none for pools and policies)."""
    from dbxtypes.shape import shapes_of_resource
    from policies.common import gpu_node, node_cloud

    return shapes_of_resource(item.resource_type, item.props, "api", node_cloud=node_cloud, gpu_node=gpu_node)


def summary(items: Sequence[ExportItem]) -> dict[str, int]:
    """Counts of an export, AI compute told apart: clusters (and how many GPU), jobs, their cluster definitions (and
    how many GPU), instance pools, cluster policies."""
    counts = {"clusters": 0, "gpu_clusters": 0, "jobs": 0, "job_clusters": 0, "gpu_job_clusters": 0,
              "instance_pools": 0, "cluster_policies": 0}
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
    else:
        counts["cluster_policies"] += 1


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
