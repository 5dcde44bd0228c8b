"""One reading of a cluster: `ClusterShape`, built once from Pulumi inputs or Clusters API JSON.

Pulumi hands resources camelCase inputs (``numWorkers``, ``awsAttributes.firstOnDemand``) with numbers as floats;
the Clusters and Jobs APIs return snake_case JSON. `shapes_of_resource` turns either into one `ClusterShape` per
cluster definition: an all-purpose ``Cluster``, and each ``job_clusters[].new_cluster``, ``tasks[].new_cluster`` and
legacy job-level ``new_cluster`` of a ``Job``. `pool_shape` does the same for an instance pool. Policies, pricing,
the terminal summary and the guardrails read these shapes; none of them parses raw inputs.

Missing values and defaults (``source`` says where the properties came from):

* ``num_workers`` absent means 0 on both sources (provider and API default).
* ``autotermination_minutes`` absent means 60 for Pulumi inputs (the provider's default is applied at create time)
  but 0, "never terminates", for Clusters API JSON (the API omits the field when auto-termination is off).
* ``first_on_demand`` absent means 0: every node on the block's availability (`DEFAULT_FIRST_ON_DEMAND`).
* a cloud attributes block without ``availability`` (or no block at all) means the cloud's default,
  `DEFAULT_AVAILABILITY` (spot with fallback on AWS, on demand on Azure and GCP).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .clouds import BY_NAME, profile
from .vocabulary import (
    ALL_PURPOSE,
    ATTRIBUTES_BLOCK,
    CLOUDS,
    CLUSTER,
    DEFAULT_AVAILABILITY,
    DEFAULT_FIRST_ON_DEMAND,
    GPU_RUNTIME_MARKER,
    INSTANCE_POOL,
    JOB,
    JOBS_COMPUTE,
    ROLE_TAG,
    ROLES,
    SINGLE_NODE_PROFILE,
    SINGLE_NODE_PROFILE_KEY,
    SPOT_AVAILABILITIES,
    UNKNOWN_ROLE,
    ComputeKind,
)

Source = Literal["pulumi", "api"]
#: Given a node type id, its cloud (or None when it cannot tell); the policies pass the node catalog's lookup.
NodeCloud = Callable[[str], "str | None"]
#: Whether a node type is a GPU node: True, False (a known CPU node), or None (unknown); the catalog answers it.
NodeGpu = Callable[[str], "bool | None"]

# --------------------------------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------------------------------

#: Map-valued attributes: their keys are user data (tag names, Spark properties, env var names, a catalog's or
#: schema's properties), never converted.
MAP_VALUED_KEYS = frozenset({
    "custom_tags", "default_tags", "spark_conf", "spark_env_vars", "tags", "properties",
    "base_parameters", "named_parameters", "notebook_params", "python_named_params", "job_parameters",
})

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@functools.lru_cache(maxsize=8192)
def camel_to_snake(key: str) -> str:
    """``numWorkers`` -> ``num_workers``; snake_case keys pass through unchanged."""
    return key if key.islower() or not key else _CAMEL_BOUNDARY.sub("_", key).lower()


def plain_number(value: Any) -> Any:
    """A whole float as an int (Pulumi's wire format has only doubles); anything else unchanged."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


_LEAVES = (str, int, bool, type(None))


def _normalize(value: Any, convert_keys: bool) -> Any:
    # The inner loop of every policy check (a workspace audit reads thousands of clusters): leaves are copied in
    # the loop, without a call each.
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict or isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for raw_key, item in value.items():
            key = camel_to_snake(raw_key) if convert_keys and isinstance(raw_key, str) else raw_key
            out[key] = item if type(item) in _LEAVES else \
                _normalize(item, convert_keys and key not in MAP_VALUED_KEYS)
        return out
    if kind is list or (isinstance(value, Sequence) and not isinstance(value, (str, bytes))):
        return [item if type(item) in _LEAVES else _normalize(item, convert_keys) for item in value]
    return plain_number(value)


def source_props(props: Mapping[str, Any] | None, source: Source) -> dict[str, Any]:
    """A resource's properties in snake_case: API JSON (``source`` api: an export, a live read, a Terraform plan's
    ``after``) is snake_case already and is taken as it is (a shallow copy: the walk of `normalize_props` is most
    of a workspace audit's time per cluster); Pulumi inputs are converted."""
    if source == "api" and type(props) is dict:
        return dict(props)
    return normalize_props(props)


def normalize_props(props: Mapping[str, Any] | None) -> dict[str, Any]:
    """Any resource's properties (camelCase or snake_case) in snake_case; map-valued attributes keep their keys.

    Whole floats (``2.0``) become ints. Nothing is defaulted here: absent stays absent.
    """
    if props is None:
        return {}
    if not isinstance(props, Mapping):
        raise TypeError(f"expected a mapping of properties, got {type(props).__name__}")
    return _normalize(props, True)


# --------------------------------------------------------------------------------------------------------------------
# Small readers
# --------------------------------------------------------------------------------------------------------------------

def as_number(value: Any) -> float | int | None:
    """A finite int or float from a number or a numeric string; ``None`` for anything else (booleans included)."""
    if type(value) is int:  # the common case first (a bool's type is bool)
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return plain_number(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return plain_number(number) if math.isfinite(number) else None
    return None


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) else []


def is_set(value: Any) -> bool:
    """True for a value that is present: not ``None`` and not an empty string."""
    return value is not None and value != ""


def _text(value: Any) -> str | None:
    """A text field as text; a `str` already (a `SelectedValue` with its data source among them) is kept as it is."""
    if value is None or value == "":  # not `is_set`: a call fewer, for each text field of each cluster
        return None
    return value if isinstance(value, str) else str(value)


def pypi_packages(libraries: Any) -> tuple[str, ...]:
    """``libraries[].pypi.package`` values, in order (missing packages skipped)."""
    out = []
    for lib in as_list(libraries):
        package = as_mapping(as_mapping(lib).get("pypi")).get("package")
        if is_set(package):
            out.append(str(package))
    return tuple(out)


# --------------------------------------------------------------------------------------------------------------------
# Clouds and roles
# --------------------------------------------------------------------------------------------------------------------

#: `ATTRIBUTES_BLOCK`'s (cloud, block key) pairs, in its order.
_BLOCK_KEYS = tuple(ATTRIBUTES_BLOCK.items())


def cloud_blocks(props: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The cloud attribute blocks present (not ``None``) in snake_case props, keyed by cloud, in aws/azure/gcp
    order."""
    blocks = {}
    for cloud, key in _BLOCK_KEYS:
        block = props.get(key)
        if block is not None:
            blocks[cloud] = block if type(block) is dict else as_mapping(block)
    return blocks


def declared_availability(block: Mapping[str, Any], cloud: str) -> str | None:
    """A block's availability as written (or under the cloud's pool field: ``gcp_availability`` on GCP pools), or
    ``None``."""
    value = block.get("availability")
    field = profile(cloud).pool_availability_field if cloud in BY_NAME else "availability"
    if not is_set(value) and field != "availability":
        value = block.get(field)
    return str(value) if is_set(value) else None


def tag_role(tags: Mapping[str, Any]) -> str | None:
    """The role named by tag ``workload_type``, else by tag ``workload`` when it is a role word; else ``None``."""
    found = _role_tag(tags)
    return found[0] if found else None


def _role_tag(tags: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the role a tag names, ``tag <key>``), or None (`tag_role`)."""
    for key in (ROLE_TAG, "workload"):
        value = tags.get(key)
        if isinstance(value, str) and value.strip().lower() in ROLES:
            return value.strip().lower(), f"tag {key}"
    return None


# --------------------------------------------------------------------------------------------------------------------
# ClusterShape
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ClusterShape:
    """One cluster definition, read once.

    ``label`` locates it inside its resource: ``""`` for a Cluster, ``"jobClusters[train].newCluster"`` (Pulumi) or
    ``"job_clusters[train].new_cluster"`` (API JSON) inside a Job. ``props`` is the whole definition in snake_case
    (the Clusters API shape) for the fields no typed attribute covers. ``job`` is the normalised Job of a job cluster
    and ``tasks`` the job's tasks that run on it. ``tags`` are the tags the cluster ends up with: a job's ``tags``
    overlaid by the cluster's ``custom_tags`` (Databricks propagates job tags to job clusters).
    """

    label: str
    resource_type: str
    source: Source
    compute_kind: ComputeKind
    props: Mapping[str, Any]
    role: str
    tags: Mapping[str, Any]
    node_type_id: str | None
    driver_node_type_id: str | None
    instance_pool_id: str | None
    driver_instance_pool_id: str | None
    num_workers: int | float
    #: (min_workers, max_workers) when autoscaled, else None.
    autoscale: tuple[int | float, int | float] | None
    #: Cloud attribute blocks present, keyed by cloud.
    blocks: Mapping[str, Mapping[str, Any]]
    #: The cloud whose availability applies: the block's, else the node type's (or the hint), else None.
    cloud: str | None
    spark_version: str | None
    autotermination_minutes: int | float | None
    job: Mapping[str, Any] | None = None
    tasks: tuple[Mapping[str, Any], ...] = field(default=())
    #: AI compute: a GPU runtime, a GPU node type, or a ``workload_type`` tag naming a role (see `is_gpu_compute`).
    gpu: bool = True
    #: The access controls a ``Permissions`` resource of the same plan gives this cluster (each with its principal
    #: and ``permission_level``); None where the input does not say (a per-resource judgement, a workspace export).
    #: `UNKNOWN_VALUE` when none names it but one whose target is known only after apply may (issue 51).
    access: tuple[Mapping[str, Any], ...] | str | None = None
    #: Read from Terraform (code or a plan): the provider's documented arguments are its fields too.
    terraform: bool = False
    #: How ``role`` was decided (`role_of`): ``tag workload_type``, or what the cluster is.
    role_basis: str = ""

    def role_subject(self) -> str:
        """How a message names the cluster by its role, and how the role was decided (a message states no guess as
        a fact): ``inference cluster (role: inference, from tag workload_type)``, ``training cluster (role:
        training, from its shape: a GPU job cluster with fixed workers)``."""
        if self.role == UNKNOWN_ROLE or not self.role_basis:
            return f"{self.role} cluster"
        how = self.role_basis if self.role_basis.startswith("tag ") else f"its shape: {self.role_basis}"
        return f"{self.role} cluster (role: {self.role}, from {how})"

    # -- size ---------------------------------------------------------------------------------------------------
    @property
    def min_workers(self) -> int | float:
        """The guaranteed worker count: ``autoscale.min_workers`` or ``num_workers``."""
        return self.autoscale[0] if self.autoscale is not None else self.num_workers

    @property
    def max_workers(self) -> int | float:
        """The most workers: ``autoscale.max_workers`` (never below the minimum) or ``num_workers``."""
        if self.autoscale is None:
            return self.num_workers
        return max(self.autoscale)

    @property
    def is_single_node(self) -> bool:
        """Single node by shape: ``is_single_node`` true, or 0 workers and no autoscale."""
        return self.props.get("is_single_node") is True or (self.autoscale is None and self.num_workers == 0)

    @property
    def has_single_node_profile(self) -> bool:
        return self.spark_conf.get(SINGLE_NODE_PROFILE_KEY) == SINGLE_NODE_PROFILE

    # -- nodes --------------------------------------------------------------------------------------------------
    @property
    def pool_backed(self) -> bool:
        """Workers on an instance pool: the pool decides node type and availability."""
        return self.instance_pool_id is not None

    @property
    def driver_node_type(self) -> str | None:
        """The driver's node type: ``driver_node_type_id``, by default the worker's."""
        return self.driver_node_type_id or self.node_type_id

    @property
    def node_type_ids(self) -> list[str]:
        """The cluster's own node types (worker first, then driver), without duplicates; empty on a pool."""
        return list(dict.fromkeys(n for n in (self.node_type_id, self.driver_node_type_id) if n))

    # -- availability -------------------------------------------------------------------------------------------
    @property
    def effective_clouds(self) -> tuple[str, ...]:
        """The clouds whose availability applies: those with a block, else the shape's cloud (AWS when unknown)."""
        return tuple(self.blocks) if self.blocks else (self.cloud or "aws",)

    def availability_in(self, cloud: str) -> str:
        """Availability in ``cloud``'s block, the cloud's default (`DEFAULT_AVAILABILITY`) when not declared."""
        return declared_availability(self.blocks.get(cloud, {}), cloud) or DEFAULT_AVAILABILITY[cloud]

    def availability_declared_in(self, cloud: str) -> bool:
        return declared_availability(self.blocks.get(cloud, {}), cloud) is not None

    def first_on_demand_in(self, cloud: str) -> int | float:
        n = as_number(self.blocks.get(cloud, {}).get("first_on_demand"))
        return DEFAULT_FIRST_ON_DEMAND if n is None else n

    def first_on_demand_declared_in(self, cloud: str) -> bool:
        return is_set(self.blocks.get(cloud, {}).get("first_on_demand"))

    @property
    def availability(self) -> str:
        """The availability of the shape's first effective cloud."""
        return self.availability_in(self.effective_clouds[0])

    @property
    def first_on_demand(self) -> int | float:
        return self.first_on_demand_in(self.effective_clouds[0])

    @property
    def spot(self) -> bool:
        """Nodes past ``first_on_demand`` run on spot (with or without fallback); never on a pool."""
        return not self.pool_backed and self.availability in SPOT_AVAILABILITIES

    # -- settings -----------------------------------------------------------------------------------------------
    @property
    def spark_conf(self) -> Mapping[str, Any]:
        return as_mapping(self.props.get("spark_conf"))

    @property
    def spark_env_vars(self) -> Mapping[str, Any]:
        return as_mapping(self.props.get("spark_env_vars"))

    @property
    def custom_tags(self) -> Mapping[str, Any]:
        """The cluster's own ``custom_tags`` (without the job's)."""
        return as_mapping(self.props.get("custom_tags"))

    @property
    def libraries(self) -> tuple[str, ...]:
        """The cluster's pip packages (``libraries[].pypi.package``)."""
        return pypi_packages(self.props.get("libraries"))


def is_gpu_compute(props: Mapping[str, Any], node_types: Iterable[str | None], gpu_node: NodeGpu | None) -> bool:
    """AI compute, which the role rules (training, inference, single-node dev) judge: a GPU runtime
    (``-gpu-`` in ``spark_version``, as in ``15.4.x-gpu-ml-scala2.12``) or a GPU node type (``gpu_node``: the
    catalog). A CPU ETL cluster is neither; it meets only the generic rules."""
    if GPU_RUNTIME_MARKER in str(props.get("spark_version") or ""):
        return True
    return gpu_node is not None and any(n and gpu_node(n) for n in node_types)


def role_of(props: Mapping[str, Any], compute_kind: str, tags: Mapping[str, Any],
            gpu: bool = True) -> tuple[str, str]:
    """A cluster's workload role and how it was decided (the one role rule: every reader of a role reads it here).

    The evidence, strongest first (first match wins; issue 51: real code carries no house tags, so the shape
    decides where no tag does):

    1. tag ``workload_type`` with value ``training``, ``inference`` or ``interactive`` (case-insensitive);
    2. tag ``workload`` when its value is one of those three words;
    3. not GPU compute (``gpu`` false, see `is_gpu_compute`) -> ``unknown``: a CPU cluster is not AI compute;
    4. job context: a job cluster, a run's cluster, a ``new_cluster`` template (inside a Job, or ``cluster_source``
       ``JOB`` in API JSON) -> ``training``: GPU batch work, never a serving cluster, single node or not;
    5. an all-purpose GPU single node (``is_single_node`` true, or no workers and no autoscale: the driver alone)
       -> ``interactive`` (dev);
    6. an all-purpose GPU cluster that autoscales -> ``inference``: capacity that follows load is what serving
       needs (a fine-tuning run keeps fixed workers, a batch job runs on job clusters);
    7. otherwise (an all-purpose GPU cluster with fixed workers) ``unknown``: the generic rules judge it.
    """
    tagged = _role_tag(tags)
    if tagged:
        return tagged
    if not gpu:
        return UNKNOWN_ROLE, "not GPU compute"
    scale = props.get("autoscale")
    autoscaled = scale is not None and scale != ""
    if compute_kind == JOBS_COMPUTE:
        return "training", f"a GPU job cluster {'that autoscales' if autoscaled else 'with fixed workers'}"
    workers = as_number(props.get("num_workers")) or 0
    if props.get("is_single_node") is True or (workers == 0 and not autoscaled):
        return "interactive", "an all-purpose GPU single node"
    if autoscaled:
        return "inference", "an all-purpose GPU cluster that autoscales"
    return UNKNOWN_ROLE, "an all-purpose GPU cluster with fixed workers"


def _workers(value: Any) -> int | float:
    n = as_number(value)
    return 0 if n is None else n


def cluster_shape(props: Mapping[str, Any], *, compute_kind: ComputeKind = ALL_PURPOSE, source: Source = "pulumi",
                  label: str = "", resource_type: str = CLUSTER, job: Mapping[str, Any] | None = None,
                  tasks: Iterable[Mapping[str, Any]] = (), cloud: str | None = None,
                  node_cloud: NodeCloud | None = None, gpu_node: NodeGpu | None = None,
                  normalized: bool = False) -> ClusterShape:
    """A `ClusterShape` from one cluster definition (camelCase or snake_case; ``normalized`` skips the conversion).

    ``cloud`` is a hint (the plan's cloud) for a cluster with no attributes block; ``node_cloud`` tells the cloud of
    a node type when there is neither block nor hint; ``gpu_node`` tells a GPU node type (without it, only the
    runtime tells GPU compute).
    """
    return _cluster_shape(dict(props) if normalized else normalize_props(props), compute_kind, source, label,
                          resource_type, job, tasks, cloud, node_cloud, gpu_node)


def _cluster_shape(p: dict[str, Any], compute_kind: ComputeKind, source: Source, label: str, resource_type: str,
                   job: Mapping[str, Any] | None, tasks: Iterable[Mapping[str, Any]], cloud: str | None,
                   node_cloud: NodeCloud | None, gpu_node: NodeGpu | None) -> ClusterShape:
    """`cluster_shape` of ``p``, snake_case props of its own (the shape keeps it as its ``props``)."""
    tags: dict[str, Any] = dict(as_mapping(job.get("tags"))) if job else {}
    tags.update(as_mapping(p.get("custom_tags")))
    scale = p.get("autoscale")
    autoscale = None
    if isinstance(scale, Mapping):
        autoscale = (_workers(scale.get("min_workers")), _workers(scale.get("max_workers")))
    blocks = cloud_blocks(p)
    node_type, driver_type = _text(p.get("node_type_id")), _text(p.get("driver_node_type_id"))
    shape_cloud = next(iter(blocks), None) or cloud
    if shape_cloud is None and node_cloud is not None:
        for node in (node_type, driver_type):
            if node and (found := node_cloud(node)):
                shape_cloud = found
                break
    auto = as_number(p.get("autotermination_minutes"))
    gpu = is_gpu_compute(p, (node_type, driver_type), gpu_node)
    role, basis = role_of(p, compute_kind, tags, gpu)
    return ClusterShape(
        label=label, resource_type=resource_type, source=source, compute_kind=compute_kind, props=p,
        role=role, role_basis=basis, tags=tags, gpu=gpu,
        node_type_id=node_type, driver_node_type_id=driver_type,
        instance_pool_id=_text(p.get("instance_pool_id")),
        driver_instance_pool_id=_text(p.get("driver_instance_pool_id"))
        or (None if driver_type else _text(p.get("instance_pool_id"))),
        num_workers=_workers(p.get("num_workers")), autoscale=autoscale, blocks=blocks,
        cloud=shape_cloud if shape_cloud in CLOUDS else None,
        spark_version=_text(p.get("spark_version")), autotermination_minutes=auto,
        job=job, tasks=tuple(tasks),
    )


def job_cluster_shapes(job: Mapping[str, Any], source: Source = "pulumi", *, cloud: str | None = None,
                       node_cloud: NodeCloud | None = None, gpu_node: NodeGpu | None = None) -> list[ClusterShape]:
    """Shapes for a normalised Job: ``job_clusters[].new_cluster``, ``tasks[].new_cluster`` and the legacy job-level
    ``new_cluster``. Each carries the tasks that run on that cluster."""
    api = source == "api"
    tasks = [as_mapping(t) for t in as_list(job.get("tasks"))]
    out: list[ClusterShape] = []

    def add(label: str, spec: Mapping[str, Any], on_it: list[Mapping[str, Any]]) -> None:
        out.append(cluster_shape(spec, compute_kind=JOBS_COMPUTE, source=source, label=label, resource_type=JOB,
                                 job=job, tasks=on_it, cloud=cloud, node_cloud=node_cloud, gpu_node=gpu_node,
                                 normalized=True))

    for i, jc in enumerate(as_list(job.get("job_clusters"))):
        jc = as_mapping(jc)
        if not isinstance(jc.get("new_cluster"), Mapping):
            continue
        key = jc.get("job_cluster_key")
        key_label = key if is_set(key) else str(i)
        label = f"job_clusters[{key_label}].new_cluster" if api else f"jobClusters[{key_label}].newCluster"
        add(label, jc["new_cluster"], [t for t in tasks if is_set(key) and t.get("job_cluster_key") == key])
    for i, task in enumerate(tasks):
        if not isinstance(task.get("new_cluster"), Mapping):
            continue
        key = task.get("task_key")
        key_label = key if is_set(key) else str(i)
        add(f"tasks[{key_label}].new_cluster" if api else f"tasks[{key_label}].newCluster", task["new_cluster"],
            [task])
    if isinstance(job.get("new_cluster"), Mapping):
        add("new_cluster" if api else "newCluster", job["new_cluster"], [job])
    return out


def shapes_of_resource(resource_type: str, props: Mapping[str, Any] | None, source: Source = "pulumi", *,
                       cloud: str | None = None, node_cloud: NodeCloud | None = None,
                       gpu_node: NodeGpu | None = None) -> list[ClusterShape]:
    """The cluster definitions inside a resource: one all-purpose shape for a ``Cluster`` (a job cluster when API
    JSON says ``cluster_source: JOB``), one shape per job cluster and task cluster of a ``Job``, none otherwise."""
    if resource_type == CLUSTER:
        p = source_props(props, source)  # a copy of its own: the shape keeps it
        kind: ComputeKind = JOBS_COMPUTE if str(p.get("cluster_source", "")).upper() == "JOB" else ALL_PURPOSE
        return [_cluster_shape(p, kind, source, "", CLUSTER, None, (), cloud, node_cloud, gpu_node)]
    if resource_type == JOB:
        return job_cluster_shapes(source_props(props, source), source, cloud=cloud, node_cloud=node_cloud,
                                  gpu_node=gpu_node)
    return []


# --------------------------------------------------------------------------------------------------------------------
# Instance pools
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PoolShape:
    """An instance pool, read once. ``availability`` is what the pool declares (no default: pools are judged on what
    they say); ``role`` comes from its tags."""

    resource_type: str
    source: Source
    props: Mapping[str, Any]
    node_type_id: str | None
    min_idle_instances: int | float
    max_capacity: int | float | None
    blocks: Mapping[str, Mapping[str, Any]]
    role: str | None
    label: str = ""
    #: Read from Terraform (see `ClusterShape.terraform`).
    terraform: bool = False

    @property
    def custom_tags(self) -> Mapping[str, Any]:
        return as_mapping(self.props.get("custom_tags"))

    @property
    def node_type_ids(self) -> list[str]:
        """The pool's node type as a list, as `ClusterShape.node_type_ids` reads a cluster's (empty when unset)."""
        return [self.node_type_id] if self.node_type_id else []

    def declared_availability_in(self, cloud: str) -> str | None:
        return declared_availability(self.blocks.get(cloud, {}), cloud)


def pool_shape(props: Mapping[str, Any] | None, source: Source = "pulumi") -> PoolShape:
    p = normalize_props(props)
    return PoolShape(
        resource_type=INSTANCE_POOL, source=source, props=p, node_type_id=_text(p.get("node_type_id")),
        min_idle_instances=_workers(p.get("min_idle_instances")), max_capacity=as_number(p.get("max_capacity")),
        blocks=cloud_blocks(p), role=tag_role(as_mapping(p.get("custom_tags"))),
    )
