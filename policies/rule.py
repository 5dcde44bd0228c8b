"""The `Rule` record and the views a rule's `check` receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Literal, Mapping, Union

Enforcement = Literal["mandatory", "advisory"]
Source = Literal["pulumi", "api"]

CLUSTER = "databricks:index/cluster:Cluster"
JOB = "databricks:index/job:Job"
INSTANCE_POOL = "databricks:index/instancePool:InstancePool"
GRANTS = "databricks:index/grants:Grants"
GRANT = "databricks:index/grant:Grant"
LIBRARY = "databricks:index/library:Library"

#: Resource types that carry cluster definitions (a Cluster, or a Job's job clusters and task clusters).
CLUSTER_BEARING_TYPES = (CLUSTER, JOB)


@dataclass(frozen=True)
class ClusterView:
    """One cluster definition as the rules see it.

    ``label`` locates the cluster inside its resource: ``""`` for a Cluster, ``"jobClusters[train].newCluster"``
    or ``"tasks[score].newCluster"`` inside a Job. ``cluster`` is the normalised (snake_case, Clusters API shaped)
    dict. ``job`` is the normalised Job for job clusters (``None`` otherwise) and ``tasks`` the job's tasks that run on
    this cluster, so a rule can look at task parameters and task libraries.
    """

    label: str
    cluster: Mapping[str, Any]
    cluster_type: Literal["all-purpose", "job"]
    role: str
    source: Source = "pulumi"
    resource_type: str = CLUSTER
    job: Mapping[str, Any] | None = None
    tasks: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class ResourceView:
    """A resource that is not a cluster definition (instance pool, grants, library), normalised to snake_case."""

    resource_type: str
    props: Mapping[str, Any]
    source: Source = "pulumi"
    label: str = ""


View = Union[ClusterView, ResourceView]
Check = Callable[[View, Mapping[str, Any]], list[str]]


@dataclass(frozen=True)
class Rule:
    """One policy.

    ``check(view, config)`` is a pure function returning violation messages, each ending with a ``Fix: ...`` hint.
    ``config`` holds this rule's thresholds (``thresholds`` merged with any overrides). The registry calls ``check``
    once per cluster definition (a ``ClusterView``) for Clusters and Jobs, and once per resource (a ``ResourceView``)
    for the other types in ``resource_types``.
    """

    name: str
    description: str
    enforcement: Enforcement
    resource_types: tuple[str, ...]
    check: Check
    remediation: str
    severity: Literal["low", "medium", "high", "critical"] = "high"
    thresholds: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: JSON-schema snippets for the thresholds (``type``, ``minimum``, ``description``); the default comes from
    #: ``thresholds``.
    threshold_schema: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if self.enforcement not in ("mandatory", "advisory"):
            raise ValueError(f"rule {self.name}: enforcement must be mandatory or advisory, got {self.enforcement!r}")
        if set(self.threshold_schema) - set(self.thresholds):
            raise ValueError(f"rule {self.name}: schema for unknown thresholds {sorted(set(self.threshold_schema) - set(self.thresholds))}")
