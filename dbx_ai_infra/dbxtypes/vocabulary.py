"""The project's vocabulary: every word and fixed value that more than one package uses, stated once.

Databricks values come from the Clusters API and pulumi-databricks 1.118 (the `availability` enums of
``AwsAttributes``, ``AzureAttributes`` and ``GcpAttributes`` in databricks-sdk ``compute``; read 2026-12).
Nothing here imports another package of the project; the per-cloud tables are read off `dbx_ai_infra.dbxtypes.clouds`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, NamedTuple, TypeVar

from .clouds import PROFILES

# --------------------------------------------------------------------------------------------------------------------
# The project
# --------------------------------------------------------------------------------------------------------------------

#: Pulumi project name, the config namespace of every stack setting and the prefix of component type tokens.
PROJECT: Final = "dbx-ai-infra"

# --------------------------------------------------------------------------------------------------------------------
# Clouds, attribute blocks and availability
# --------------------------------------------------------------------------------------------------------------------

#: The clouds (each one's facts: its profile, `dbx_ai_infra.dbxtypes.clouds`; the tables below are read off the
#: profiles).
Cloud = Literal["aws", "azure", "gcp"]
CLOUDS: Final[tuple[Cloud, ...]] = tuple(p.name for p in PROFILES)  # type: ignore[misc]
CLOUD_NAMES: Final = MappingProxyType({p.name: p.display for p in PROFILES})

#: snake_case attribute block per cloud (Clusters API JSON, pulumi-databricks Python args).
ATTRIBUTES_BLOCK: Final = MappingProxyType({p.name: p.attributes_block for p in PROFILES})

SPOT_WITH_FALLBACK: Final = MappingProxyType({p.name: p.spot_with_fallback for p in PROFILES})
SPOT_WITHOUT_FALLBACK: Final = MappingProxyType({p.name: p.spot for p in PROFILES})
ON_DEMAND: Final = MappingProxyType({p.name: p.on_demand for p in PROFILES})
SPOT_AVAILABILITIES: Final = frozenset({*SPOT_WITH_FALLBACK.values(), *SPOT_WITHOUT_FALLBACK.values()})
ON_DEMAND_AVAILABILITIES: Final = frozenset(ON_DEMAND.values())

#: What a cluster runs on when its cloud's attributes block (or the block's ``availability``) is absent (each cloud's
#: profile says why: AWS spot with fallback, the API's backend default; Azure and GCP on demand). Policies and
#: pricing both read this table.
DEFAULT_AVAILABILITY: Final = MappingProxyType({p.name: p.default_availability for p in PROFILES})
#: ``first_on_demand`` when absent: 0, so every node, the driver included, runs on the block's availability
#: (pulumi-databricks 1.118.0, ``ClusterAwsAttributesArgs.first_on_demand``, from the Terraform provider's docs: "If
#: unspecified, the default value is 0"; Clusters API: "If first_on_demand is zero, this availability type will be
#: used for the entire cluster"). The components always set it.
DEFAULT_FIRST_ON_DEMAND: Final = 0


_Count = TypeVar("_Count", int, float)


def on_demand_base(min_workers: _Count) -> _Count:
    """The ``first_on_demand`` that keeps an autoscaled cluster's base on demand: its minimum workers plus the
    driver, which ``first_on_demand`` counts first (Clusters API, ``aws_attributes.first_on_demand``: "the first
    first_on_demand nodes of the cluster will be placed on on-demand instances ... this value should be greater than
    0, to make sure the cluster driver node is placed on an on-demand instance"). The one statement of the rule: the
    inference component sets it, the inference policy rule and the workspace cluster policy require it."""
    return min_workers + 1


def autoscale_max_floor(min_workers: _Count) -> _Count:
    """The least ``max_workers`` an autoscale range with this minimum may have: the Clusters API refuses
    ``max_workers`` equal to ``min_workers`` (databricks-sdk ``compute.AutoScale``: "max_workers ... Note that
    max_workers must be strictly greater than min_workers"). The one statement of the valid range: the spec, the
    inference component's Args, the worker-bounds policy rule and advise's proposals read it."""
    return min_workers + 1


def autoscale_range_problem(min_workers: _Count, max_workers: _Count) -> str | None:
    """What is wrong with an autoscale range (None: the API takes it)."""
    if max_workers < autoscale_max_floor(min_workers):
        return (f"autoscale has max_workers {max_workers} <= min_workers {min_workers}; the API needs max_workers "
                "above min_workers")
    return None

#: GPU families (the node catalog maps each to node types per cloud).
GpuFamily = Literal["t4", "a10g", "v100", "a100", "a100-80gb", "h100", "l4", "l40s"]
GPU_FAMILIES: Final[tuple[GpuFamily, ...]] = ("t4", "a10g", "v100", "a100", "a100-80gb", "h100", "l4", "l40s")
#: Weight precisions a model may be given in.
Precision = Literal["fp32", "bf16", "fp16", "int8", "int4"]

# --------------------------------------------------------------------------------------------------------------------
# Workloads and compute kinds
# --------------------------------------------------------------------------------------------------------------------

Role = Literal["training", "inference", "interactive"]
#: Workload roles, the values of the ``workload_type`` tag the components set.
ROLES: Final[tuple[Role, ...]] = ("training", "inference", "interactive")
UNKNOWN_ROLE: Final = "unknown"
#: The workload word of a Model Serving endpoint in costs and reports (an endpoint is not a cluster role).
SERVING_WORKLOAD: Final = "serving"
#: Model Serving's default limits on provisioned concurrency: 1024 per served model (with route optimization), 4096
#: per workspace; more only through the Databricks account team (docs.databricks.com/aws/en/machine-learning/
#: model-serving/model-serving-limits, "Custom models and AI agents", read 2026-12-03).
MAX_CONCURRENCY_PER_MODEL: Final = 1024
MAX_CONCURRENCY_PER_WORKSPACE: Final = 4096
#: Stack spec sections, each a workload.
Section = Literal["training", "inference", "dev"]
SECTIONS: Final[tuple[Section, ...]] = ("training", "inference", "dev")
#: Stack spec section -> role.
ROLE_OF_SECTION: Final = MappingProxyType({"training": "training", "inference": "inference", "dev": "interactive"})
#: A workload's name (a ``dbx-ai-infra:workloads`` key; a role section's workload is named by its section): lower-case
#: letters, digits, ``-`` and ``_``, starting with a letter, ending with a letter or digit, at most 40 characters. It
#: is part of resource, cluster and policy names (``<stack>-<workload>``) and of output names.
WORKLOAD_NAME_PATTERN: Final = r"^[a-z](?:[a-z0-9_-]{0,38}[a-z0-9])?$"
#: What the program names its own resources after ``<stack>-`` (a workload may not take one of these names):
#: the catalog, the cluster policies, the GPU collector; an endpoint is ``serving-<name>``, a workload's pool
#: ``<workload>-pool``.
UC_RESOURCE: Final = "uc"
POLICY_RESOURCE: Final = "policy"
COLLECTOR_RESOURCE: Final = "gpu-collector"
CODE_RESOURCE: Final = "code"
SERVING_RESOURCE_PREFIX: Final = "serving-"
POOL_RESOURCE_SUFFIX: Final = "-pool"


def workload_key(name: str) -> str:
    """Where workload ``name``'s settings are in a stack: its role section (``inference``) for a workload named by
    its role, else ``workloads.<name>`` (a ``workloads`` key is never a role's name)."""
    return name if name in SECTIONS else f"workloads.{name}"


#: The workspace objects a stack's ``permissions`` section gives access to, per workload.
PermissionObject = Literal["cluster", "job", "pool"]
#: Permission levels each object takes (Permissions API, pulumi-databricks 1.118.0 ``Permissions`` docs, read
#: 2026-12-03: clusters CAN_ATTACH_TO, CAN_RESTART, CAN_MANAGE; jobs CAN_VIEW, CAN_MANAGE_RUN, IS_OWNER, CAN_MANAGE;
#: instance pools CAN_ATTACH_TO, CAN_MANAGE). IS_OWNER is left out: a job has one owner, the deployer, and a group
#: cannot own one.
PERMISSION_LEVELS: Final = MappingProxyType({
    "cluster": ("CAN_ATTACH_TO", "CAN_RESTART", "CAN_MANAGE"),
    "job": ("CAN_VIEW", "CAN_MANAGE_RUN", "CAN_MANAGE"),
    "pool": ("CAN_ATTACH_TO", "CAN_MANAGE"),
})
#: Every permission level, weakest first: within each object's levels (Permissions API) the order is the object's own,
#: so a principal given two levels on one object keeps the stronger (`strongest_level`): the Permissions API keeps one
#: level per principal, and a second entry for it shows as a change on every later plan (terraform-provider-databricks
#: issues 1750 and 2079).
LEVEL_ORDER: Final = ("CAN_VIEW", "CAN_ATTACH_TO", "CAN_USE", "CAN_QUERY", "CAN_RESTART", "CAN_MANAGE_RUN",
                      "CAN_MANAGE", "IS_OWNER")


def strongest_level(*levels: str) -> str:
    """The strongest of ``levels`` (`LEVEL_ORDER`; a level it does not know ranks above none of the known ones)."""
    return max(levels, key=lambda level: LEVEL_ORDER.index(level) if level in LEVEL_ORDER else -1)

#: What a value Terraform knows only after apply (a plan's ``after_unknown``) reads as: set, but not known. No rule
#: judges it as a value (it is no enum value, no number, no object): one configuration, one verdict, whichever way
#: it is read.
UNKNOWN_VALUE: Final = "<known after apply>"


def json_text_may_hold_unknown(text: str) -> bool:
    """Whether a JSON text may decode to a value equal to `UNKNOWN_VALUE`: it holds the marker, or a ``\\u`` escape
    that could spell it (Go's JSON writes ``<`` as ``\\u003c``). False: no value read from it is unknown, and no
    rule needs to look for one (issue 53, item 5: the walk was about a tenth of judging a workspace export)."""
    return UNKNOWN_VALUE in text or "\\u" in text


#: An argument of a data source that is not a constant (a variable, another reference): known only after apply.
UNKNOWN_ARGUMENT: Final = "<not a constant>"


class SelectedValue(str):
    """A value known only after apply that a Terraform data source selects (``spark_version =
    data.databricks_spark_version.lts.id``): it is `UNKNOWN_VALUE` to every rule that reads values, and carries the
    data source (``source``: its address and type) and the ``arguments`` that select it (``long_term_support``,
    ``gpu``, ``ml``), which are known, for the rules that judge the choice."""

    source: str
    data_type: str
    arguments: Mapping[str, object]

    def __new__(cls, source: str, data_type: str, arguments: Mapping[str, object]) -> SelectedValue:
        value = super().__new__(cls, UNKNOWN_VALUE)
        value.source, value.data_type, value.arguments = source, data_type, MappingProxyType(dict(arguments))
        return value
#: A service principal's application id (a UUID): how a ``single_user_name``, an access control or a ``run_as`` names
#: a service principal rather than a user (Clusters API single_user_name; Jobs API run_as service_principal_name).
APPLICATION_ID_PATTERN: Final = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"


def is_application_id(name: str) -> bool:
    """True when ``name`` names a service principal (its application id), not a user."""
    return re.match(APPLICATION_ID_PATTERN, name) is not None


#: How an access control names its principal (one of them per entry).
PRINCIPAL_FIELDS: Final = ("group_name", "user_name", "service_principal_name")

ComputeKind = Literal["all_purpose", "jobs_compute"]
#: Databricks compute kinds (billing SKUs): an all-purpose cluster, or a job cluster.
ALL_PURPOSE: Final = "all_purpose"
JOBS_COMPUTE: Final = "jobs_compute"
MODEL_SERVING: Final = "model_serving"
COMPUTE_KINDS: Final = (JOBS_COMPUTE, ALL_PURPOSE, MODEL_SERVING)
#: Serverless GPU (AI Runtime): a job task on a hardware accelerator, billed per GPU-hour, no cluster of ours (a cost
#: entry's compute kind; its rates are in dbx_ai_infra/pricing/serverless.yaml, not a $/DBU of rates.yaml).
SERVERLESS_GPU: Final = "serverless_gpu"
#: A Foundation Model provisioned-throughput endpoint, billed per model unit-hour (a cost entry's compute kind).
PROVISIONED_THROUGHPUT: Final = "provisioned_throughput"
#: How a training workload runs (``dbx-ai-infra:training.compute``, a contract of issue 55): ``classic``, a job
#: cluster (or an all-purpose cluster) of GPU nodes; ``serverless_gpu``, a job task on serverless GPU compute.
TRAINING_COMPUTES: Final = ("classic", SERVERLESS_GPU)
#: The serverless environment a serverless GPU training task runs in (the job's ``environments[].spec``):
#: ``environment_version`` "5" is the serverless environment a public AI Runtime smoke suite ran GPU_1xA10 notebook
#: jobs on through ``compute.hardware_accelerator`` (2026-07-24); the workload's pinned libraries are its
#: ``dependencies`` (pulumi-databricks 1.118 ``JobEnvironmentSpecArgs``: environment_version, dependencies).
SERVERLESS_ENVIRONMENT_VERSION: Final = "5"
#: The torch that environment's job installs when the workload names none: serverless GPU environment 5's default base
#: environment has no torch ("based on customer feedback ... torch is not included in the base environment of version
#: 5"; Databricks tested torch 2.9.0 and says to install ``torch==2.9.0`` as a dependency to use it), and train.py
#: imports torch (Databricks release notes, serverless GPU environment version 5,
#: https://learn.microsoft.com/azure/databricks/release-notes/serverless/environment-version/five-gpu, read 2026-12-06).
SERVERLESS_ENVIRONMENT_TORCH: Final = "torch==2.9.0"
#: The environment key of that environment, which the task names (``environment_key``).
SERVERLESS_ENVIRONMENT_KEY: Final = "train"
#: The entry point's GPU count argument: on serverless GPU the task runs on one accelerator node and the entry point
#: spreads its workers over this many GPUs (the AI Runtime's distributed launcher); our jobs always pass it.
GPUS_ARG: Final = "--gpus"

# --------------------------------------------------------------------------------------------------------------------
# Resource type tokens
# --------------------------------------------------------------------------------------------------------------------

CLUSTER: Final = "databricks:index/cluster:Cluster"
JOB: Final = "databricks:index/job:Job"
INSTANCE_POOL: Final = "databricks:index/instancePool:InstancePool"
CATALOG: Final = "databricks:index/catalog:Catalog"
SCHEMA: Final = "databricks:index/schema:Schema"
VOLUME: Final = "databricks:index/volume:Volume"
GRANTS: Final = "databricks:index/grants:Grants"
GRANT: Final = "databricks:index/grant:Grant"
EXTERNAL_LOCATION: Final = "databricks:index/externalLocation:ExternalLocation"
STORAGE_CREDENTIAL: Final = "databricks:index/storageCredential:StorageCredential"
LIBRARY: Final = "databricks:index/library:Library"
CLUSTER_POLICY: Final = "databricks:index/clusterPolicy:ClusterPolicy"
PERMISSIONS: Final = "databricks:index/permissions:Permissions"
MODEL_SERVING_ENDPOINT: Final = "databricks:index/modelServing:ModelServing"
#: A Foundation Model provisioned-throughput endpoint (pulumi-databricks 1.118 ModelServingProvisionedThroughput;
#: Terraform databricks_model_serving_provisioned_throughput).
PROVISIONED_THROUGHPUT_ENDPOINT: Final = ("databricks:index/modelServingProvisionedThroughput:"
                                          "ModelServingProvisionedThroughput")
WORKSPACE_FILE: Final = "databricks:index/file:File"
#: Personal access tokens and on-behalf-of tokens: the program creates none; Terraform plans and workspace exports
#: hold them (``databricks_token``, ``databricks_obo_token``; the token API's ``token_infos``).
TOKEN: Final = "databricks:index/token:Token"
OBO_TOKEN: Final = "databricks:index/oboToken:OboToken"
#: Every provider resource type the program creates. The offline engine imports only these modules of the provider
#: SDK (`pulumi_private.use_provider_subset`); a component that creates another type adds it here.
PROGRAM_RESOURCE_TYPES: Final = (CATALOG, CLUSTER, CLUSTER_POLICY, EXTERNAL_LOCATION, GRANT, GRANTS, INSTANCE_POOL,
                                 JOB, MODEL_SERVING_ENDPOINT, PERMISSIONS, PROVISIONED_THROUGHPUT_ENDPOINT, SCHEMA,
                                 STORAGE_CREDENTIAL, VOLUME, WORKSPACE_FILE)
#: The serving endpoint types (a GPU Model Serving endpoint, a provisioned-throughput one).
ENDPOINT_TYPES: Final = (MODEL_SERVING_ENDPOINT, PROVISIONED_THROUGHPUT_ENDPOINT)
STACK_TYPE: Final = "pulumi:pulumi:Stack"

#: Component type tokens (``<project>:<module>:<Component>``).
TRAINING_CLUSTER_TYPE: Final = f"{PROJECT}:compute:TrainingCluster"
INFERENCE_CLUSTER_TYPE: Final = f"{PROJECT}:compute:InferenceCluster"
DEV_CLUSTER_TYPE: Final = f"{PROJECT}:compute:DevCluster"
INSTANCE_POOL_TYPE: Final = f"{PROJECT}:compute:GpuInstancePool"
UNITY_CATALOG_TYPE: Final = f"{PROJECT}:storage:UnityCatalogStorage"
CLUSTER_POLICIES_TYPE: Final = f"{PROJECT}:governance:ClusterPolicies"
SERVING_ENDPOINT_TYPE: Final = f"{PROJECT}:serving:ServingEndpoint"
PROVISIONED_THROUGHPUT_TYPE: Final = f"{PROJECT}:serving:ProvisionedThroughputEndpoint"
SERVERLESS_TRAINING_TYPE: Final = f"{PROJECT}:compute:ServerlessGpuTraining"
GPU_COLLECTOR_TYPE: Final = f"{PROJECT}:monitoring:GpuCollector"
CODE_FILES_TYPE: Final = f"{PROJECT}:storage:CodeFiles"
#: Unity Catalog privileges that let a principal change what a Volume holds (or grant itself that): none may be given
#: over the stack's code Volume, where the job code and the init scripts that run with the clusters' identity live.
WRITE_PRIVILEGES: Final = ("WRITE_VOLUME", "ALL_PRIVILEGES", "MANAGE")
#: A workspace path under the Shared folder (``/Workspace/Shared/...``, or ``/Shared/...`` as the Jobs API also takes
#: it), where every workspace user has Can Manage by default (Databricks docs, "Folders": the Shared folder).
SHARED_WORKSPACE_PATTERN: Final = r"^(/Workspace)?/Shared(/|$)"
#: Environment of the GPU collector init script (dbx_ai_infra/collector/gpu_collector.sh).
GPU_TIMELINE_ENV: Final = "GPU_TIMELINE_DIR"
COLLECTOR_INTERVAL_ENV: Final = "COLLECTOR_INTERVAL_SECONDS"
#: The stack section (``dbx-ai-infra:<section>``) each component is built from: where a finding points.
SECTION_OF_COMPONENT: Final = MappingProxyType({
    TRAINING_CLUSTER_TYPE: "training", INFERENCE_CLUSTER_TYPE: "inference", DEV_CLUSTER_TYPE: "dev",
    INSTANCE_POOL_TYPE: "instance_pools", UNITY_CATALOG_TYPE: "unity_catalog",
    CLUSTER_POLICIES_TYPE: "cluster_policies", SERVING_ENDPOINT_TYPE: "serving", GPU_COLLECTOR_TYPE: "monitoring",
    CODE_FILES_TYPE: "unity_catalog", PROVISIONED_THROUGHPUT_TYPE: "serving", SERVERLESS_TRAINING_TYPE: "training",
})


def section_of_urn(urn: str) -> str | None:
    """The stack section behind a resource, from its URN's type chain (``urn:pulumi:S::P::Parent$Type::name``):
    the first of our components in the chain; ``None`` for a resource outside them."""
    parts = urn.split("::")
    chain = parts[2].split("$") if len(parts) > 3 else []
    return next((SECTION_OF_COMPONENT[t] for t in chain if t in SECTION_OF_COMPONENT), None)

# --------------------------------------------------------------------------------------------------------------------
# Tags
# --------------------------------------------------------------------------------------------------------------------

#: Tags every stack and every cluster must carry.
REQUIRED_TAGS: Final = ("workload", "cost_center")
#: Tag naming a cluster's role (values: ROLES).
ROLE_TAG: Final = "workload_type"
#: Tag carrying the model's estimated GPU memory need in GB.
GPU_MEMORY_NEED_TAG: Final = "gpu_memory_need_gb"
#: Tags a serving endpoint carries so the policies, pure functions of its properties, know its cloud and stack
#: (the workload type offered, production or not).
CLOUD_TAG: Final = "dbx_cloud"
STACK_TAG: Final = "dbx_stack"
#: Tag naming the stack workload a cluster or job cluster belongs to (its ``dbx-ai-infra:workloads`` key, or its role
#: section's name): advise matches each run to its workload by it (several workloads may share a role).
WORKLOAD_TAG: Final = "dbx_workload"
#: Tags the components or Databricks set; a stack may not set them.
RESERVED_TAGS: Final = (ROLE_TAG, "ResourceClass", GPU_MEMORY_NEED_TAG, "Vendor", "Creator", "ClusterName",
                        "ClusterId", "Name", CLOUD_TAG, STACK_TAG, WORKLOAD_TAG)

# --------------------------------------------------------------------------------------------------------------------
# Runtimes, single node, environment variables
# --------------------------------------------------------------------------------------------------------------------

#: Default runtime: the newest LTS GPU ML runtime, 18 LTS (Spark 4.1.0, released 2026-06-10, supported until
#: 2029-06-10; Scala 2.13 only, its key without a minor version: Databricks Runtime release notes, read 2026-12;
#: dbx_ai_infra/gpucatalog/runtimes.yaml). A test holds it to the runtime table's newest LTS release.
DEFAULT_RUNTIME: Final = "18.x-gpu-ml-scala2.13"
#: A GPU ML runtime ``spark_version`` (without anchors, as Databricks cluster policies take regexes).
GPU_ML_RUNTIME_REGEX: Final = r"\d+(\.\d+)?\.x-gpu-ml-scala2\.1[23]"
GPU_ML_RUNTIME_PATTERN: Final = rf"^{GPU_ML_RUNTIME_REGEX}$"
#: The marker of a GPU ML runtime in a ``spark_version``.
GPU_ML_MARKER: Final = "-gpu-ml-"
#: The marker of any GPU runtime (ML or not, e.g. ``13.3.x-gpu-ml-scala2.12``) in a ``spark_version``: Databricks names
#: every GPU runtime with it (Databricks Runtime release notes, runtime version strings; read 2026-12).
GPU_RUNTIME_MARKER: Final = "-gpu-"

SINGLE_NODE_PROFILE_KEY: Final = "spark.databricks.cluster.profile"
SINGLE_NODE_PROFILE: Final = "singleNode"
SINGLE_NODE_CONF: Final = MappingProxyType({SINGLE_NODE_PROFILE_KEY: SINGLE_NODE_PROFILE, "spark.master": "local[*]"})
SINGLE_NODE_TAGS: Final = MappingProxyType({"ResourceClass": "SingleNode"})
SHUFFLE_PARTITIONS_KEY: Final = "spark.sql.shuffle.partitions"

#: Optimized autoscaling's scale-down decision window, in seconds (Databricks compute configuration reference,
#: "optimized autoscaling": spark.databricks.aggressiveWindowDownS, at most 600; premium workspaces; read 2026-12).
SCALE_DOWN_WINDOW_KEY: Final = "spark.databricks.aggressiveWindowDownS"
MAX_SCALE_DOWN_SECONDS: Final = 600
#: Hours in an average month (8,760 h / 12): what an always-on cluster is up.
HOURS_PER_MONTH: Final = 730

#: Environment variable with the training checkpoint directory (a Volume path).
CHECKPOINT_DIR_ENV: Final = "CHECKPOINT_DIR"
#: Environment variable with the Hugging Face cache (a Volume path).
HF_HOME_ENV: Final = "HF_HOME"
#: Training entry point arguments the job passes (dbx_ai_infra/workloads/train.py honours them).
CHECKPOINT_DIR_ARG: Final = "--checkpoint-dir"
RESUME_ARG: Final = "--resume-from-latest"

# --------------------------------------------------------------------------------------------------------------------
# Limits (policy-config defaults; a --policy-config moves the spec and the rules together)
# --------------------------------------------------------------------------------------------------------------------

#: Most workers a cluster may have (policy ``configure-worker-bounds``, threshold ``max_workers_cap``).
MAX_WORKERS_CAP: Final = 64
#: Longest idle time of an all-purpose cluster (policy ``require-autotermination``).
MAX_AUTOTERMINATION_MINUTES: Final = 120
#: Most shuffle partitions on a single node (policy ``configure-single-node-shuffle-partitions``).
MAX_SINGLE_NODE_SHUFFLE_PARTITIONS: Final = 16

# --------------------------------------------------------------------------------------------------------------------
# Usage assumptions (monthly cost); the stack spec's `usage` section defaults to these
# --------------------------------------------------------------------------------------------------------------------

class UsageAssumption(NamedTuple):
    default: float | None
    label: str
    unit: str


#: Key -> (default, report label, unit). The spec's `usage` section, the cost model and the reports read this table.
USAGE_DEFAULTS: Final = MappingProxyType({
    "training_hours_per_month": UsageAssumption(40, "All-purpose training cluster up", "h/month"),
    "training_job_hours_per_month": UsageAssumption(80, "Training job runs", "h/month"),
    "inference_hours_per_month": UsageAssumption(730, "Inference base up", "h/month"),
    "inference_burst_hours_per_month": UsageAssumption(120, "Inference bursting above the base", "h/month"),
    "inference_burst_avg_extra_workers": UsageAssumption(None, "Average extra inference workers while bursting",
                                                         "workers"),
    "dev_hours_per_working_day": UsageAssumption(6, "Dev cluster up", "h/working day"),
    "working_days_per_month": UsageAssumption(21, "Working days", "days/month"),
    "pool_idle_hours_per_month": UsageAssumption(730, "Instance pool keeps its idle instances", "h/month"),
    "serving_active_hours_per_month": UsageAssumption(200, "Scale-to-zero endpoint active", "h/month"),
    "serving_launches_per_month": UsageAssumption(60, "Scale-to-zero endpoint launches (cold starts)",
                                                  "launches/month"),
})


def usage_hours_key(role: str, compute_kind: str, always_on: bool) -> str | None:
    """The usage assumption that says how long a cluster of ``role`` is up (the cost model prices by it; advise
    proposes new values of it): training by its compute kind, inference unless it never stops (``always_on``:
    auto-termination off, the whole month), interactive per working day; None for any other role or always on."""
    if role == "training":
        return "training_job_hours_per_month" if compute_kind == JOBS_COMPUTE else "training_hours_per_month"
    if role == "inference":
        return None if always_on else "inference_hours_per_month"
    if role == "interactive":
        return "dev_hours_per_working_day"
    return None
