"""The stack spec: typed, validated description of one environment (pydantic, ``extra="forbid"``).

Every field states its default once, here. Units are in the names. Where a field mirrors a Databricks API
field, it uses the API's name (``num_workers``, ``autotermination_minutes``, ``min_idle_instances``).
Cross-field rules live in one validator per model; rules that need the node catalog (sizing, pinned node
types) live in :mod:`dbx_ai_infra.stackspec.resolve`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationInfo,
    field_validator,
    model_validator,
)

from dbx_ai_infra.dbxtypes.clouds import profile, region_problem
from dbx_ai_infra.dbxtypes.errors import FIX_MARK
from dbx_ai_infra.dbxtypes.pip import is_bare_pip, is_pinned_pip
from dbx_ai_infra.dbxtypes.prices import PriceOverrides
from dbx_ai_infra.dbxtypes.sdk_types import enum_values
from dbx_ai_infra.dbxtypes.unity_catalog import privilege_problems
from dbx_ai_infra.dbxtypes.vocabulary import (
    CHECKPOINT_DIR_ARG,
    CODE_RESOURCE,
    COLLECTOR_RESOURCE,
    DEFAULT_RUNTIME,
    GPU_ML_RUNTIME_PATTERN,
    MAX_AUTOTERMINATION_MINUTES,
    MAX_CONCURRENCY_PER_MODEL,
    MAX_CONCURRENCY_PER_WORKSPACE,
    MAX_SCALE_DOWN_SECONDS,
    MAX_SINGLE_NODE_SHUFFLE_PARTITIONS,
    MAX_WORKERS_CAP,
    PERMISSION_LEVELS,
    POLICY_RESOURCE,
    POOL_RESOURCE_SUFFIX,
    PRINCIPAL_FIELDS,
    REQUIRED_TAGS,
    RESERVED_TAGS,
    ROLE_OF_SECTION,
    SCALE_DOWN_WINDOW_KEY,
    SECTIONS,
    SERVING_RESOURCE_PREFIX,
    SHARED_WORKSPACE_PATTERN,
    UC_RESOURCE,
    USAGE_DEFAULTS,
    WORKLOAD_NAME_PATTERN,
    WRITE_PRIVILEGES,
    Cloud,
    GpuFamily,
    Precision,
    Section,
    autoscale_range_problem,
    is_application_id,
    workload_key,
)

# --------------------------------------------------------------------------------------------------------------------
# Limits a policy config can move
# --------------------------------------------------------------------------------------------------------------------
#: The upper bounds below are the policy pack's thresholds, so a spec this validator accepts never breaks a mandatory
#: policy. A --policy-config that changes a threshold reaches the spec through pydantic's validation context
#: (``StackSpec.model_validate(data, context={"limits": {...}})``), so one file moves both the spec and the rules.
LIMIT_DEFAULTS: Mapping[str, int] = {
    "max_workers_cap": MAX_WORKERS_CAP,
    "max_autotermination_minutes": MAX_AUTOTERMINATION_MINUTES,
    "max_single_node_shuffle_partitions": MAX_SINGLE_NODE_SHUFFLE_PARTITIONS,
}


def _at_most(limit: str) -> AfterValidator:
    """A validator: the value is at most the limit ``limit`` of the validation context (default: the vocabulary's)."""

    def check(value: Any, info: ValidationInfo) -> Any:
        limits = (info.context or {}).get("limits") or {}
        bound = limits.get(limit, LIMIT_DEFAULTS[limit])
        if value is not None and value > bound:
            raise ValueError(f"must be at most {bound} (the policy threshold {limit}), got {value}; lower it, or "
                             f"raise {limit} in the policy config")
        return value

    return AfterValidator(check)


def _stringify(value: Any) -> Any:
    """Numbers and booleans where Databricks wants strings (tag values, env vars) become their text, as a Pulumi CLI
    user expects: ``pulumi config set --path dbx-ai-infra:tags.cost_center 1234`` stores an integer."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return value


#: A string setting that also takes a number or a boolean (converted to text).
ConfigString = Annotated[str, BeforeValidator(_stringify)]

#: The catalog's name where neither the stack file nor the stack's name gives one (`default_catalog`).
DEFAULT_CATALOG = "ai"

#: The training entry point's checkpoint flag, which the job sets itself.
CHECKPOINT_FLAGS = (CHECKPOINT_DIR_ARG, "--checkpoint_dir")

def tag_problems(cloud: str, tags: Mapping[str, str]) -> list[str]:
    """Why some tags cannot be applied on ``cloud`` (its profile's limits and rules); empty when all can."""
    rules = profile(cloud)
    return [problem for key, value in tags.items() if (problem := rules.tag_problem(key, value))]


Workers = Annotated[int, Field(ge=1), _at_most("max_workers_cap")]
IdleMinutes = Annotated[int, Field(ge=10), _at_most("max_autotermination_minutes")]

_NAME = r"^[a-z][a-z0-9_]{0,62}$"
Identifier = Annotated[str, Field(pattern=_NAME)]


class _Spec(BaseModel):
    # strict: a YAML boolean or a quoted number is not a number (num_workers: true is refused, not 1 worker); no
    # infinity or NaN (.inf, 1e400) anywhere: a figure that is not finite breaks every total and report downstream
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class ModelSpec(_Spec):
    """The model a workload serves or trains; its GPU memory need picks the node type."""

    params_billions: float = Field(gt=0, le=2000, description="Model size in billions of parameters.")
    precision: Precision = Field("bf16", description="Weight precision. Default bf16.")
    method: Literal["full", "lora"] = Field("full", description="Training method (training only). Default full.")
    sharding: Literal["none", "fsdp", "deepspeed_zero3"] = Field("none", description=(
        "Training only: none (the model fits one node, sharded over its GPUs if needed), or fsdp / deepspeed_zero3 "
        "(weights, gradients and optimizer state split over every GPU of every worker). Default none."))


class TrainingJobSpec(_Spec):
    """A Databricks job that runs training on a job cluster and retries after a spot reclaim."""

    python_file: str | None = Field(None, min_length=1, description=(
        "Training entry point. Default: the project's dbx_ai_infra/workloads/train.py, which the stack uploads to "
        "its code Volume "
        "(unity_catalog.code_volume, written only by the deployer). A path of your own must be one only its owners "
        "can change: never under /Workspace/Shared, where every user can edit what runs as the job's identity."))
    parameters: list[str] = Field(default_factory=list, description="Extra arguments for the entry point.")
    max_retries: int = Field(3, ge=0, le=20, description="Retries per run (a reclaim counts as a failure). Default 3.")
    min_retry_interval_millis: int = Field(60_000, ge=0, description="Wait before a retry, ms. Default 60000.")
    timeout_seconds: int | None = Field(None, ge=1, description=(
        "Time limit of a run, seconds (the task's timeout_seconds). Default none: a run is never timed out."))
    retry_on_timeout: bool | None = Field(None, description=(
        "Retry a run that hit timeout_seconds. Default: true when timeout_seconds is set; refused without it, where "
        "it has no effect."))

    @field_validator("python_file")
    @classmethod
    def _not_shared(cls, path: str | None) -> str | None:
        if path is not None and re.match(SHARED_WORKSPACE_PATTERN, path):
            raise ValueError(f"{path!r} is under the workspace's Shared folder, where every user can manage files: "
                             f"anyone could change code that runs as the job's identity; leave python_file out (the "
                             f"stack uploads dbx_ai_infra/workloads/train.py to its code Volume) or use a path only "
                             f"its owners can write")
        return path

    @model_validator(mode="after")
    def _timeout_for_retry(self) -> TrainingJobSpec:
        if self.retry_on_timeout and self.timeout_seconds is None:
            raise ValueError("retry_on_timeout has no effect without timeout_seconds; set timeout_seconds (the run's "
                             "time limit) or remove retry_on_timeout")
        return self


class WorkloadSpec(_Spec):
    """What every workload section states: its GPU family, a pinned node type, its pip libraries."""

    gpu_family: GpuFamily | None = Field(None, description="GPU family for this workload. Default: the stack's.")
    node_type_id: str | None = Field(None, description="Pin a node type instead of sizing from the model.")
    libraries: list[str] = Field(default_factory=list, description=(
        "Pip packages: pinned (pkg==x.y.z), or a bare name (transformers, peft, accelerate, vllm) that takes the "
        "runtime's pin from the runtime library table (docs/stack-inputs.md, library pins per runtime)."))
    single_user_name: str | None = Field(None, min_length=1, description=(
        "The user (or service principal, by application id) this workload's clusters are dedicated to, and its job "
        "runs as. Default: the stack's single_user_name. A dev workload is dedicated to a person: a service "
        "principal there admits no one to attach a notebook."))
    dedicated_group: str | None = Field(None, min_length=1, description=(
        "Dedicate the workload's all-purpose clusters to this group instead of single_user_name (Databricks dedicated "
        "group access: every member can attach, with the group's permissions; runtime 15.4 or later, and kind "
        "CLASSIC_PREVIEW with DATA_SECURITY_MODE_DEDICATED, which the stack sets). Give the group CAN MANAGE on a "
        "/Workspace/Groups/<group> folder for its notebooks and MLflow experiments. A training job still runs as "
        "single_user_name. Default: none (dedicated to single_user_name)."))
    memory_need_gb: float | None = Field(None, gt=0, le=100_000, description=(
        "A measured GPU memory need of one node, GB (e.g. advise's observed peak plus headroom): overrides the "
        "model's estimate when the node is sized or a pinned node is checked. Default: the model's estimate."))


class ClusterWorkloadSpec(WorkloadSpec):
    """A workload on a driver and workers: the driver's node too."""

    driver: Literal["gpu", "cpu"] | None = Field(None, description=(
        "The driver's node: gpu (the workers' node type) or cpu (a CPU node type of the cloud from the node "
        "catalog: the driver only coordinates unless it aggregates or serves). Default: cpu for a training job "
        "on workers that runs the project's dbx_ai_infra/workloads/train.py (its launcher runs no rank on the "
        "driver), unless its workers come from an instance pool (the driver then comes from the pool: cpu is "
        "refused there); gpu "
        "elsewhere, and the preview says why (a single node's driver is the node; code people bring to an inference "
        "or all-purpose cluster, or a job's own python_file, may use the driver's GPU)."))
    driver_node_type_id: str | None = Field(None, description="With driver: cpu, the CPU node type (default: the "
                                                              "catalog's CPU driver of the cloud).")


#: The training fields that describe a cluster of our own (classic compute): a serverless GPU workload refuses them.
CLASSIC_ONLY_FIELDS = ("num_workers", "spot", "first_on_demand", "autotermination_minutes", "gpu_family",
                       "node_type_id", "driver", "driver_node_type_id", "all_purpose_cluster")


class TrainingSpec(ClusterWorkloadSpec):
    """Training: a fixed-size cluster (spot with fallback, on-demand driver) or serverless GPU, checkpoints on a
    Volume."""

    num_workers: Workers | None = Field(None, description=(
        "Fixed worker count (never autoscaled). Required with compute: classic."))
    compute: Literal["classic", "serverless_gpu"] = Field("classic", description=(
        "How the training runs: classic (a job cluster, or an all-purpose cluster, of GPU nodes) or serverless_gpu "
        "(a job task on Databricks serverless GPU compute, the AI Runtime: no cluster, policy or pool; needs job, "
        "accelerator and gpus). Default classic."))
    accelerator: str | None = Field(None, description=(
        "With compute: serverless_gpu, the accelerator of each node, as databricks-sdk's HardwareAcceleratorType "
        "names it (GPU_1xA10, GPU_1xH100, GPU_8xH100, GPU_8xB300)."))
    gpus: int | None = Field(None, ge=1, le=1024, description=(
        "With compute: serverless_gpu, the GPUs the training uses: a multiple of the accelerator's GPUs per node."))
    model: ModelSpec = Field(description="The model trained: sizes the node (training need).")
    spot: bool = Field(True, description="Workers on spot with fallback to on-demand. false = all on-demand.")
    first_on_demand: int = Field(1, ge=1, description="Nodes kept on-demand, driver included. Default 1.")
    checkpoint_volume: str = Field("models.checkpoints", description="<schema>.<volume> for checkpoints.")
    autotermination_minutes: IdleMinutes = Field(60, description="Idle minutes before the cluster stops. Default 60.")
    job: TrainingJobSpec | None = Field(None, description="Optional training job on a job cluster.")
    all_purpose_cluster: bool | None = Field(None, description=(
        "Also an all-purpose training cluster beside the job. Default: only when there is no job (a workload with a "
        "job runs on the job's compute, and no multi-GPU cluster sits idle beside it); true asks for the cluster "
        "anyway; false needs job."))

    @field_validator("accelerator")
    @classmethod
    def _known_accelerator(cls, value: str | None) -> str | None:
        known = enum_values("compute.HardwareAcceleratorType")
        if value is not None and value not in known:
            raise ValueError(f"{value!r} is not a serverless GPU accelerator; use one of {', '.join(known)} "
                             f"(databricks-sdk HardwareAcceleratorType)")
        return value

    @property
    def serverless(self) -> bool:
        """Whether the workload runs on serverless GPU (``compute: serverless_gpu``)."""
        return self.compute == "serverless_gpu"

    @property
    def makes_cluster(self) -> bool:
        """Whether the workload has an all-purpose cluster (`all_purpose_cluster`, its default: no job); never on
        serverless GPU."""
        if self.serverless:
            return False
        return self.all_purpose_cluster if self.all_purpose_cluster is not None else self.job is None

    @property
    def workers(self) -> int:
        """The fixed worker count of a classic workload (validated present)."""
        assert self.num_workers is not None, "a classic training workload has num_workers (validated)"
        return self.num_workers

    def _serverless_fields(self) -> None:
        """compute: serverless_gpu takes a job, an accelerator and a GPU count, and none of a cluster's settings;
        classic takes num_workers and neither accelerator nor gpus."""
        if not self.serverless:
            if self.num_workers is None:
                raise ValueError("num_workers is required with compute: classic (the fixed worker count); set it, or "
                                 "set compute: serverless_gpu with accelerator and gpus")
            extra = [f for f in ("accelerator", "gpus") if getattr(self, f) is not None]
            if extra:
                raise ValueError(f"{' and '.join(extra)} are for compute: serverless_gpu; set compute: serverless_gpu "
                                 f"or remove {' and '.join(extra)}")
            return
        cluster = [f for f in CLASSIC_ONLY_FIELDS if f in self.model_fields_set]
        if cluster:
            raise ValueError(f"{', '.join(cluster)} describe a cluster of our own, and compute: serverless_gpu runs on "
                             f"Databricks' serverless GPU compute (no cluster, policy or pool); remove them, or set "
                             f"compute: classic")
        missing = [f for f in ("accelerator", "gpus", "job") if getattr(self, f) is None]
        if missing:
            raise ValueError(f"compute: serverless_gpu needs {', '.join(missing)} (the accelerator of each node, the "
                             f"GPU count, and the job that runs the training: job: {{}} takes its defaults); add "
                             f"{' and '.join(missing)}")

    @model_validator(mode="after")
    def _driver_within_cluster(self) -> TrainingSpec:
        self._serverless_fields()
        if self.num_workers is not None and self.first_on_demand > self.num_workers + 1:
            raise ValueError(
                f"first_on_demand must be <= num_workers + 1 (the driver plus every worker), "
                f"got {self.first_on_demand} > {self.num_workers + 1}")
        if self.all_purpose_cluster is False and self.job is None:
            raise ValueError("all_purpose_cluster is false but job is not set: the training would have no compute; "
                             "add job or set all_purpose_cluster: true")
        if self.job:
            repeated = [p for p in self.job.parameters if p.split("=", 1)[0] in CHECKPOINT_FLAGS]
            if repeated:
                raise ValueError(f"job.parameters repeats {repeated[0].split('=', 1)[0]}: the job already passes the "
                                 f"checkpoint Volume; remove it (set checkpoint_volume instead)")
        return self


class InferenceSpec(ClusterWorkloadSpec):
    """Inference cluster: autoscaled, on-demand base (driver + min_workers), spot only above it."""

    min_workers: Workers = Field(2, description="On-demand base workers. Default 2.")
    max_workers: Workers = Field(10, description="Autoscale ceiling. Default 10.")
    model: ModelSpec = Field(description="The model served: sizes the node (inference need).")
    spot_above_base: bool = Field(True, description="Workers above the base on spot with fallback. Default true.")
    scale_down_minutes: int = Field(10, ge=1, description=(
        "How often optimized autoscaling may release idle workers down to min_workers, in minutes (emitted as "
        "spark.databricks.aggressiveWindowDownS, at most 10 minutes). Default 10, the seed's idle time."))
    autotermination_minutes: Annotated[int, Field(ge=0), _at_most("max_autotermination_minutes")] = Field(
        60, description=("Idle minutes before the whole cluster stops. Default 60 (0 with always_on: never). "
                         "A cluster that never stops says why: always_on with always_on_reason."))
    always_on: bool = Field(False, description=(
        "The cluster never auto-terminates (autotermination_minutes 0, its default then): priced for the whole "
        "month; needs always_on_reason. Default false."))
    always_on_reason: str | None = Field(None, min_length=1, description=(
        "Why the cluster stays up (the preview shows it beside the month it is priced for). Needed by always_on."))

    @model_validator(mode="before")
    @classmethod
    def _always_on_default(cls, data: Any) -> Any:
        """always_on without autotermination_minutes: 0 (never stop)."""
        if isinstance(data, Mapping) and data.get("always_on") is True and "autotermination_minutes" not in data:
            return {**data, "autotermination_minutes": 0}
        return data

    @model_validator(mode="after")
    def _min_le_max(self) -> InferenceSpec:
        if autoscale_range_problem(self.min_workers, self.max_workers):
            raise ValueError(f"max_workers must be above min_workers (the autoscale API needs max > min), got "
                             f"min_workers {self.min_workers} and max_workers {self.max_workers}; raise max_workers")
        if self.scale_down_minutes * 60 > MAX_SCALE_DOWN_SECONDS:
            raise ValueError(f"scale_down_minutes must be at most {MAX_SCALE_DOWN_SECONDS // 60} "
                             f"({SCALE_DOWN_WINDOW_KEY} is at most {MAX_SCALE_DOWN_SECONDS} seconds), got "
                             f"{self.scale_down_minutes}; for a longer idle time before the whole cluster stops, set "
                             f"autotermination_minutes")
        if 0 < self.autotermination_minutes < 10:
            raise ValueError(f"autotermination_minutes must be 0 (never) or at least 10, got "
                             f"{self.autotermination_minutes}")
        self._always_on_said()
        return self

    def _always_on_said(self) -> None:
        """A cluster that never stops says why (issue 52: inference clusters nobody used, up the whole month)."""
        # autotermination_minutes 0 without always_on (the way a stack said "never stop" before issue 52) is read,
        # priced for the whole month, and named by the preview with its fix (resolve.compute_access): an advisory
        # for a release, not exit 2 for a stack that deployed as it is.
        if self.always_on and self.autotermination_minutes:
            raise ValueError(f"always_on is set but autotermination_minutes is {self.autotermination_minutes}; "
                             f"remove autotermination_minutes (always_on never stops the cluster) or always_on")
        if self.always_on and not self.always_on_reason:
            raise ValueError("always_on needs always_on_reason: why the cluster stays up the whole month")
        if self.always_on_reason and not self.always_on:
            raise ValueError("always_on_reason is set without always_on: true; remove it or set always_on")


class DevSpec(WorkloadSpec):
    """Interactive dev cluster: single GPU node, short auto-termination, model cache on a Volume."""

    model: ModelSpec | None = Field(None, description="Size the node for this model (inference need).")
    node_type_id: str | None = Field(None, description="Pin a node type; without model or pin: the smallest node.")
    autotermination_minutes: IdleMinutes = Field(30, description="Idle minutes before the cluster stops. Default 30.")
    shuffle_partitions: Annotated[int, Field(ge=1), _at_most("max_single_node_shuffle_partitions")] = Field(
        8, description="spark.sql.shuffle.partitions on the single node. Default 8.")
    spark_env_vars: dict[str, ConfigString] = Field(default_factory=dict, description="Extra environment variables.")


class TrainingWorkloadSpec(TrainingSpec):
    """A training workload of ``dbx-ai-infra:workloads``: ``role: training`` and the training section's keys."""

    role: Literal["training"] = Field(description="training, inference or dev: which role's keys follow.")


class InferenceWorkloadSpec(InferenceSpec):
    """An inference workload of ``dbx-ai-infra:workloads``: ``role: inference`` and the inference section's keys."""

    role: Literal["inference"]


class DevWorkloadSpec(DevSpec):
    """A dev workload of ``dbx-ai-infra:workloads``: ``role: dev`` and the dev section's keys."""

    role: Literal["dev"]


WorkloadEntry = Annotated[TrainingWorkloadSpec | InferenceWorkloadSpec | DevWorkloadSpec, Field(discriminator="role")]
SectionSpec = TrainingSpec | InferenceSpec | DevSpec


@dataclass(frozen=True)
class NamedWorkload:
    """One workload of the stack, whichever way the file states it: ``name`` (a ``workloads`` key, or the section's
    name for ``dbx-ai-infra:training|inference|dev``), ``section`` its role's section (training | inference | dev),
    ``key`` where its settings are in the stack (``inference`` or ``workloads.chat``) and its settings."""

    name: str
    section: Section
    key: str
    spec: SectionSpec

    @property
    def role(self) -> str:
        """The cluster role (the ``workload_type`` tag): training | inference | interactive."""
        return ROLE_OF_SECTION[self.section]


class VolumeSpec(_Spec):
    """A Unity Catalog Volume."""

    name: Identifier = Field(description="The Volume's name.")
    volume_type: Literal["MANAGED", "EXTERNAL"] = Field("MANAGED", description="Default MANAGED.")
    storage_location: str | None = Field(None, description="Cloud URI; required for EXTERNAL volumes.")
    comment: str | None = Field(None, description="A comment on the Volume.")

    @model_validator(mode="after")
    def _external_needs_location(self) -> VolumeSpec:
        if self.volume_type == "EXTERNAL" and not self.storage_location:
            raise ValueError("an EXTERNAL volume needs storage_location (e.g. s3://bucket/path)")
        if self.volume_type == "MANAGED" and self.storage_location:
            raise ValueError("storage_location is only for EXTERNAL volumes; remove it or set volume_type: EXTERNAL")
        return self


class SchemaSpec(_Spec):
    volumes: list[VolumeSpec] = Field(default_factory=list)
    existing: bool = Field(False, description=(
        "The schema exists already in the (existing) catalog: no Schema resource; its Volumes are made under it and "
        "its grants are added per principal (databricks.Grant), never replacing the schema's other grants. Needs "
        "unity_catalog.existing_catalog. Default false."))

    @field_validator("volumes", mode="before")
    @classmethod
    def _names_as_volumes(cls, value: object) -> object:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value


class GrantSpec(_Spec):
    """Privileges for one principal on the catalog, a schema (``raw``) or a volume (``models.hf_cache``)."""

    principal: str = Field(min_length=1, description="A user, group or service principal.")
    privileges: list[str] = Field(min_length=1, description="Unity Catalog privileges (USE_CATALOG, READ_VOLUME, ...).")
    securable: str = Field("catalog", description="catalog | <schema> | <schema>.<volume>. Default catalog.")

    @property
    def securable_kind(self) -> str:
        """``catalog``, ``schema`` or ``volume``."""
        return "catalog" if self.securable == "catalog" else "volume" if "." in self.securable else "schema"

    @model_validator(mode="after")
    def _privileges_apply(self) -> GrantSpec:
        problems = privilege_problems(self.privileges, self.securable_kind)
        if problems:
            raise ValueError("; ".join(problems))
        return self


class StorageCredentialSpec(_Spec):
    """The cloud identity Unity Catalog reaches the catalog's managed location with: the stack creates a storage
    credential of it and an external location over ``storage_root`` (pulumi-databricks 1.118 StorageCredential
    ``aws_iam_role.role_arn``, ``azure_managed_identity.access_connector_id``, ``databricks_gcp_service_account``;
    ExternalLocation ``url``, ``credential_name``). Exactly one, of the stack's cloud."""

    aws_iam_role_arn: str | None = Field(None, pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/\S+$", description=(
        "AWS: the IAM role Databricks assumes for the bucket (arn:aws:iam::<account>:role/<name>)."))
    azure_access_connector_id: str | None = Field(
        None, pattern=r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Databricks/accessConnectors/"
                      r"[^/]+$", description="Azure: the Access Connector for Azure Databricks (its resource id).")
    gcp_databricks_service_account: bool = Field(False, description=(
        "GCP: a Databricks-managed service account (grant it on the bucket after the first run)."))

    def cloud(self) -> str | None:
        """The cloud the named identity belongs to (None: none named)."""
        named = [c for c, v in (("aws", self.aws_iam_role_arn), ("azure", self.azure_access_connector_id),
                                ("gcp", self.gcp_databricks_service_account or None)) if v]
        return named[0] if len(named) == 1 else None

    @model_validator(mode="after")
    def _one(self) -> StorageCredentialSpec:
        count = sum(bool(v) for v in (self.aws_iam_role_arn, self.azure_access_connector_id,
                                      self.gcp_databricks_service_account))
        if count != 1:
            raise ValueError("name exactly one identity: aws_iam_role_arn, azure_access_connector_id or "
                             "gcp_databricks_service_account: true (the stack's cloud's)")
        return self


def _default_schemas() -> dict[str, SchemaSpec]:
    return {
        "raw": SchemaSpec(volumes=[VolumeSpec(name="corpus")]),
        "processed": SchemaSpec(volumes=[VolumeSpec(name="datasets")]),
        "models": SchemaSpec(volumes=[VolumeSpec(name="hf_cache"), VolumeSpec(name="checkpoints")]),
        "vector_index": SchemaSpec(volumes=[VolumeSpec(name="indexes")]),
    }


class UnityCatalogSpec(_Spec):
    """Catalog, schemas and volumes for data, model caches, checkpoints and vector indexes, with grants."""

    catalog: Identifier = Field(DEFAULT_CATALOG, description=(
        "Catalog name. Default ai_<stack> (the stack's name, lower case, other characters as _): a metastore serves "
        "every workspace of a region, so two stacks deployed there cannot both create one catalog; the stack's own "
        "name keeps them apart (``stackplan preview --all`` refuses two stacks that would create the same one)."))
    schemas: dict[Identifier, SchemaSpec] = Field(default_factory=_default_schemas,
                                                  description="Schemas and their volumes (default layout).")
    model_cache_volume: str = Field("models.hf_cache", description="<schema>.<volume> for HF_HOME.")
    grants: list[GrantSpec] = Field(default_factory=list, description=(
        "Privileges for principals on the catalog, a schema or a Volume (completed with the USE_* they need)."))
    storage_root: str | None = Field(None, min_length=1, description=(
        "The catalog's managed location (s3://, abfss:// or gs://, the stack's cloud). Needed where the metastore "
        "has no storage root, the default for workspaces enabled for Unity Catalog automatically."))
    registrars: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list, description=(
        "Principals (groups) who register model versions in models_schema (MLflow, registry_uri databricks-uc), the "
        "documented step before an endpoint's run: each gets USE_CATALOG, USE_SCHEMA and CREATE_MODEL there. "
        "Default none."))
    models_schema: Identifier = Field("models", description=(
        "The schema models are registered in (registrars' CREATE_MODEL). Default models."))
    storage_credential: StorageCredentialSpec | None = Field(None, description=(
        "Create the storage credential (this cloud identity) and an external location over storage_root, which the "
        "catalog's managed location needs; the deployer then owns both (so holds CREATE MANAGED STORAGE), and needs "
        "CREATE STORAGE CREDENTIAL and CREATE EXTERNAL LOCATION on the metastore. Default: none (see "
        "external_location)."))
    external_location: str | None = Field(None, min_length=1, description=(
        "The existing external location covering storage_root, a prerequisite the preview names (the deployer needs "
        "CREATE MANAGED STORAGE on it). Default: none; with neither this nor storage_credential the preview says "
        "what storage_root needs."))
    code_volume: str = Field("platform.code", pattern=r"^[a-z][a-z0-9_]{0,62}\.[a-z][a-z0-9_]{0,62}$", description=(
        "<schema>.<volume> for the code the stack runs with its clusters' identity (the training entry point, the "
        "GPU collector's init script); added to the layout. Only the deployer writes it: no grant may give "
        "WRITE_VOLUME, ALL_PRIVILEGES or MANAGE over it (on the catalog, its schema or itself). Default "
        "platform.code."))
    existing_catalog: bool = Field(False, description=(
        "Use a catalog that already exists: no Catalog resource; schemas are made under it, and catalog grants "
        "are added per principal (databricks.Grant), never replacing the catalog's other grants."))

    def volume_refs(self) -> set[str]:
        return {f"{s}.{v.name}" for s, schema in self.schemas.items() for v in schema.volumes}

    @model_validator(mode="after")
    def _references_exist(self) -> UnityCatalogSpec:
        adopted = [name for name, schema in self.schemas.items() if schema.existing]
        if adopted and not self.existing_catalog:
            raise ValueError(f"schema {adopted[0]} is existing, but the stack creates catalog {self.catalog}, where no "
                             f"schema can exist yet; set existing_catalog: true (the catalog is there) or remove "
                             f"existing from the schema")
        if self.registrars and self.models_schema not in self.schemas:
            raise ValueError(f"registrars register models in models_schema {self.models_schema!r}, which is not a "
                             f"schema of the layout ({', '.join(sorted(self.schemas))}); add it or name another")
        refs = self.volume_refs()
        if self.model_cache_volume not in refs:
            raise ValueError(f"model_cache_volume {self.model_cache_volume!r} is not a volume of the layout; "
                             f"volumes: {', '.join(sorted(refs))}")
        code_schema = self.code_volume.split(".", 1)[0]
        for g in self.grants:
            if g.securable not in ("catalog", code_schema, self.code_volume) and g.securable not in self.schemas \
                    and g.securable not in refs:
                raise ValueError(f"grant on {g.securable!r} names no schema or volume; use catalog, a schema "
                                 f"({', '.join(sorted(self.schemas))}) or a volume")
            writes = [p for p in g.privileges if p in WRITE_PRIVILEGES]
            if writes and g.securable in ("catalog", code_schema, self.code_volume):
                raise ValueError(f"grant of {', '.join(writes)} to {g.principal} on {g.securable} reaches the code "
                                 f"Volume {self.code_volume}, where the job code and init scripts that run as the "
                                 f"clusters' identity live: only the deployer may write it; grant it on the schemas "
                                 f"or Volumes that need it instead")
        return self


class PoolSpec(_Spec):
    """An on-demand instance pool that keeps warm nodes for fast starts."""

    min_idle_instances: Annotated[int, Field(ge=0), _at_most("max_workers_cap")] = Field(
        0, description="Warm idle nodes. Default 0.")
    max_capacity: int | None = Field(None, ge=1, description="Most nodes the pool holds. Default: unlimited.")
    idle_instance_autotermination_minutes: int = Field(15, ge=0, le=10_000,
                                                       description="Idle node lifetime, minutes. Default 15.")

    @model_validator(mode="after")
    def _idle_within_capacity(self) -> PoolSpec:
        if self.max_capacity is not None and self.min_idle_instances > self.max_capacity:
            raise ValueError(f"min_idle_instances must be <= max_capacity, got "
                             f"{self.min_idle_instances} > {self.max_capacity}")
        return self




def _usage(key: str, le: float | None = 744) -> Any:
    """A usage field whose default and description come from the vocabulary's USAGE_DEFAULTS."""
    usage = USAGE_DEFAULTS[key]
    described = f"{usage.label} ({usage.unit}). Default {usage.default if usage.default is not None else 'none'}."
    return Field(usage.default, ge=0, le=le, description=described)


def _usage_override(key: str, le: float | None = 744) -> Any:
    """A per-workload usage field: unset (None) keeps the stack's figure; its meaning from USAGE_DEFAULTS."""
    usage = USAGE_DEFAULTS[key]
    return Field(None, ge=0, le=le, description=f"{usage.label} ({usage.unit}) of this workload. Default: the "
                                                f"stack's.")


class WorkloadUsageSpec(_Spec):
    """One workload's own usage assumptions (``usage.<workload>``); each unset one is the stack's. A field applies to
    the workload's role only (training_*, inference_*, dev_*; pool_idle_hours_per_month to a pool-backed one)."""

    training_hours_per_month: float | None = _usage_override("training_hours_per_month")
    training_job_hours_per_month: float | None = _usage_override("training_job_hours_per_month")
    pool_idle_hours_per_month: float | None = _usage_override("pool_idle_hours_per_month")
    inference_hours_per_month: float | None = _usage_override("inference_hours_per_month")
    inference_burst_hours_per_month: float | None = _usage_override("inference_burst_hours_per_month")
    inference_burst_avg_extra_workers: float | None = _usage_override("inference_burst_avg_extra_workers", le=None)
    dev_hours_per_working_day: float | None = _usage_override("dev_hours_per_working_day", le=24)

    def set_fields(self) -> dict[str, float]:
        return {k: v for k, v in self.model_dump().items() if v is not None}

    @classmethod
    def belongs_elsewhere(cls, key: str) -> tuple[str, str] | None:
        """Where a usage key that no workload takes belongs (its own words, and the fix), or None: a Model Serving
        figure is the endpoints' (the stack's usage, or an endpoint's own key), working days are the stack's."""
        if key.startswith("serving_") and key in USAGE_DEFAULTS:
            own = {"serving_active_hours_per_month": "active_hours_per_month"}.get(key)
            return (f"{key} belongs to Model Serving endpoints, not to a workload (a cluster's role: training, "
                    f"inference or dev)",
                    f"move it to the stack's usage (dbx-ai-infra:usage.{key}: every endpoint)"
                    + (f", or set {own} on the endpoint in dbx-ai-infra:serving.endpoints.<name>" if own else "")
                    + ".")
        if key == "working_days_per_month":
            return (f"{key} is the stack's, for every dev workload",
                    f"move it to the stack's usage (dbx-ai-infra:usage.{key}).")
        return None


class UsageSpec(_Spec):
    """Usage assumptions for the monthly cost estimate (defaults: `dbx_ai_infra.dbxtypes.vocabulary.USAGE_DEFAULTS`). A
    key that names a workload (or a role: the default of every workload of that role) holds that workload's own
    assumptions (`WorkloadUsageSpec`):
    ``usage: {inference_hours_per_month: 300, embed: {inference_hours_per_month: 100}}``."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True, allow_inf_nan=False)
    __pydantic_extra__: dict[str, WorkloadUsageSpec] = Field(init=False)

    @model_validator(mode="before")
    @classmethod
    def _workload_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key, value in data.items():
                if key not in cls.model_fields and not isinstance(value, Mapping):
                    raise ValueError(f"{key!r} is not a usage assumption ({', '.join(cls.model_fields)}), nor a "
                                     f"workload name with a mapping of its own assumptions; fix the key")
        return data

    def of_workloads(self) -> dict[str, WorkloadUsageSpec]:
        """The per-workload (or per-role) assumptions, by their key."""
        return dict(self.__pydantic_extra__ or {})

    training_hours_per_month: float = _usage("training_hours_per_month")
    training_job_hours_per_month: float = _usage("training_job_hours_per_month")
    pool_idle_hours_per_month: float = _usage("pool_idle_hours_per_month")
    inference_hours_per_month: float = _usage("inference_hours_per_month")
    inference_burst_hours_per_month: float = _usage("inference_burst_hours_per_month")
    inference_burst_avg_extra_workers: float | None = _usage("inference_burst_avg_extra_workers", le=None)
    dev_hours_per_working_day: float = _usage("dev_hours_per_working_day", le=24)
    working_days_per_month: float = _usage("working_days_per_month", le=31)
    serving_active_hours_per_month: float = _usage("serving_active_hours_per_month")
    serving_launches_per_month: float = _usage("serving_launches_per_month", le=None)


class ClusterPoliciesSpec(_Spec):
    """Workspace cluster policies generated from this stack (so UI-made clusters obey it too)."""

    enabled: bool = Field(True, description="Create the policies and put the stack's clusters under them.")
    can_use: dict[str, list[str]] = Field(
        default_factory=dict, description=("Groups granted CAN_USE per workload's policy, by workload name (a role "
                                           "name: every workload of that role without its own entry)."))
    max_clusters_per_user: int | None = Field(None, ge=1, description="Per-user cluster limit per policy.")


class AccessControlSpec(_Spec):
    """One principal and the permission level it gets (the Permissions API's field names)."""

    group_name: str | None = Field(None, min_length=1, description="A workspace group.")
    user_name: str | None = Field(None, min_length=1, description="A user, by user name (e-mail).")
    service_principal_name: str | None = Field(None, min_length=1, description="A service principal's application id.")
    permission_level: str = Field(description="The level, e.g. CAN_RESTART (the levels each object takes: README).")

    @model_validator(mode="after")
    def _one_principal(self) -> AccessControlSpec:
        named = [f for f in PRINCIPAL_FIELDS if getattr(self, f) is not None]
        if len(named) != 1:
            raise ValueError(f"names {' and '.join(named) or 'no principal'}; give exactly one of "
                             f"{', '.join(PRINCIPAL_FIELDS)}")
        return self

    def principal(self) -> dict[str, str]:
        return {f: getattr(self, f) for f in PRINCIPAL_FIELDS if getattr(self, f) is not None}


def _levels(kind: str) -> AfterValidator:
    levels = PERMISSION_LEVELS[kind]

    def check(entries: list[AccessControlSpec]) -> list[AccessControlSpec]:
        seen: dict[tuple[tuple[str, str], ...], str] = {}
        for entry in entries:
            if entry.permission_level not in levels:
                raise ValueError(f"permission_level {entry.permission_level!r} is not one a {kind} takes; use one of "
                                 f"{', '.join(levels)}")
            who = tuple(entry.principal().items())
            if who in seen:  # the Permissions API keeps one level per principal
                name = "=".join(who[0])
                raise ValueError(f"{name} is named twice ({seen[who]} and {entry.permission_level}); an object keeps "
                                 f"one level per principal: keep one entry, with the level it needs")
            seen[who] = entry.permission_level
        return entries
    return AfterValidator(check)


ClusterAccess = Annotated[list[AccessControlSpec], _levels("cluster")]
JobAccess = Annotated[list[AccessControlSpec], _levels("job")]
PoolAccess = Annotated[list[AccessControlSpec], _levels("pool")]


class WorkloadPermissionsSpec(_Spec):
    """More access to one workload's objects, beyond what the stack already gives (README: who can do what)."""

    cluster: ClusterAccess = Field(default_factory=list, description="On each of the workload's clusters.")
    job: JobAccess = Field(default_factory=list, description="On the training job (training only).")
    pool: PoolAccess = Field(default_factory=list, description="On the workload's instance pool.")




class ConcurrencySpec(_Spec):
    """Provisioned concurrency of an endpoint: each replica serves 4 concurrent requests (workload size Small)."""

    min: int = Field(4, ge=0, description=(
        "Provisioned concurrency kept ready. Default 4 (one replica). An endpoint that scales to zero sends 0 (its "
        "lower bound when idle), whatever this says."))
    max: int = Field(4, ge=1, le=MAX_CONCURRENCY_PER_MODEL, description=(
        f"Most provisioned concurrency. Default 4; at most {MAX_CONCURRENCY_PER_MODEL}, Model Serving's limit per "
        f"served model."))

    @model_validator(mode="after")
    def _order(self) -> ConcurrencySpec:
        if self.max < self.min:
            raise ValueError(f"max {self.max} is below min {self.min}; raise max to at least {self.min}")
        return self


class ProvisionedThroughputSpec(_Spec):
    """A Foundation Model served with provisioned throughput (``serving.endpoints.<name>.provisioned_throughput``, a
    contract of issue 55): a ``databricks.ModelServingProvisionedThroughput`` of ``model_units`` model units instead
    of a GPU workload type sized from the model (pulumi-databricks 1.118
    ``ModelServingProvisionedThroughputConfigServedEntityArgs``: entity_name, entity_version,
    provisioned_model_units)."""

    entity: str = Field(pattern=r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+$", description=(
        "The foundation model in Unity Catalog, catalog.schema.model (system.ai.<model> for Databricks' own)."))
    entity_version: ConfigString = Field(min_length=1, description="The model version to serve.")
    model_units: int = Field(ge=1, le=100_000, description=(
        "Model units provisioned (provisioned_model_units): the endpoint's dedicated throughput, billed per model "
        "unit-hour whether it is used or not."))


class EndpointSpec(_Spec):
    """A Model Serving endpoint (``dbx-ai-infra:serving.endpoints.<name>``): a Unity Catalog model on a GPU workload
    type sized from the model, or a foundation model on provisioned throughput (``provisioned_throughput``)."""

    entity: str | None = Field(None, pattern=r"^[A-Za-z0-9_]+\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+$",
                               description="The Unity Catalog registered model, catalog.schema.model (GPU endpoints).")
    entity_version: ConfigString | None = Field(None, min_length=1, description="The model version to serve (GPU "
                                                                               "endpoints).")
    model: ModelSpec | None = Field(None, description="Sizes the GPU workload type (inference need); GPU endpoints.")
    provisioned_throughput: ProvisionedThroughputSpec | None = Field(None, description=(
        "Serve a foundation model with provisioned throughput instead (entity, entity_version, model_units): no GPU "
        "sizing, no concurrency, no scale to zero."))
    workload_type: str | None = Field(None, description="Pin a GPU workload type; checked against the cloud and "
                                                        "the model.")
    concurrency: ConcurrencySpec = Field(default_factory=ConcurrencySpec, description=(
        "Provisioned concurrency, min and max (a replica serves 4)."))
    scale_to_zero: bool = Field(True, description="Scale to zero when idle. Default true (refused in production).")
    inference_table: bool = Field(True, description="Log payloads to an inference table in the stack's catalog.")
    rate_limit_per_user_per_minute: int | None = Field(None, ge=1, description="AI Gateway calls per user a minute.")
    active_hours_per_month: float | None = Field(None, ge=0, le=744, description=(
        "Hours a scale-to-zero endpoint is up (default: usage.serving_active_hours_per_month)."))
    model_registered: bool = Field(False, description=(
        "The model version is registered in Unity Catalog (the second run). Needed where the stack creates the "
        "entity's catalog itself: on the first run no version can exist there, so that run leaves the endpoint out "
        "and this run adds it; check refuses the endpoint without it (databricks-serving-require-registered-model)."))
    can_query: list[str] = Field(default_factory=list, description="Groups given CAN_QUERY.")
    can_manage: list[str] = Field(default_factory=list, description="Groups given CAN_MANAGE (which includes "
                                                                    "querying).")

    @property
    def served_entity(self) -> tuple[str, str]:
        """(entity, version) the endpoint serves, whichever way it serves it."""
        pt = self.provisioned_throughput
        if pt is not None:
            return pt.entity, pt.entity_version
        assert self.entity is not None and self.entity_version is not None  # validated
        return self.entity, self.entity_version

    def _one_way(self) -> None:
        """A GPU endpoint names its entity, version and model; a provisioned-throughput one names them under
        provisioned_throughput and takes none of the GPU sizing fields."""
        if self.provisioned_throughput is None:
            missing = [f for f in ("entity", "entity_version", "model") if getattr(self, f) is None]
            if missing:
                raise ValueError(f"needs {', '.join(missing)} (a GPU endpoint serves a Unity Catalog model sized by "
                                 f"its model), or provisioned_throughput: {{entity, entity_version, model_units}}")
            return
        gpu = [f for f in ("entity", "entity_version", "model", "workload_type", "concurrency", "scale_to_zero",
                           "active_hours_per_month") if f in self.model_fields_set]
        if gpu:
            raise ValueError(f"{', '.join(gpu)} are for a GPU endpoint, and this one serves provisioned_throughput "
                             f"(model units, always provisioned: no GPU sizing, concurrency or scale to zero); remove "
                             f"them (the entity and version go under provisioned_throughput)")

    @model_validator(mode="after")
    def _one_level_per_group(self) -> EndpointSpec:
        self._one_way()
        both = [g for g in dict.fromkeys(self.can_query) if g in self.can_manage]
        if both:
            raise ValueError(f"group {both[0]!r} is in both can_query and can_manage; an endpoint keeps one level per "
                             f"principal and CAN_MANAGE includes CAN_QUERY: remove it from can_query")
        return self


class ServingSpec(_Spec):
    """GPU Model Serving endpoints (``dbx-ai-infra:serving``)."""

    endpoints: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")], EndpointSpec] = Field(
        min_length=1, description="Endpoints by name (unique in the workspace).")
    inference_table_schema: Identifier = Field("serving", description="Schema of the inference tables. Default "
                                                                      "serving.")
    deployer: str | None = Field(None, min_length=1, description=(
        "Who runs `pulumi up` (a user, or a service principal by application id). An endpoint runs as its creator, "
        "for good, who needs EXECUTE on the served model: the stack grants it on each served model of its own catalog "
        "(on the run that adds the endpoint, once a registrar's version exists). Default: none, and the preview says "
        "the deployer needs it."))

    @model_validator(mode="after")
    def _workspace_concurrency(self) -> ServingSpec:
        total = sum(e.concurrency.max for e in self.endpoints.values() if e.provisioned_throughput is None)
        if total > MAX_CONCURRENCY_PER_WORKSPACE:
            raise ValueError(f"the endpoints' concurrency.max add up to {total:,}, over Model Serving's "
                             f"{MAX_CONCURRENCY_PER_WORKSPACE:,} per workspace; lower them (or raise the limit "
                             f"with your Databricks account team first)")
        return self


class BudgetSpec(_Spec):
    """What the stack may cost (``dbx-ai-infra:budget``): limits of the policy ``databricks-stack-budget``."""

    monthly_expected_max: float | None = Field(None, gt=0, description="Most the expected month may cost, USD.")
    monthly_max_max: float | None = Field(None, gt=0, description="Most the month may cost at full size, USD.")
    increase_max: float | None = Field(None, ge=0, description="Most a change may add a month (cost --against), USD.")
    increase_max_percent: float | None = Field(None, ge=0, description=(
        "Most a change may add a month, percent of the base's expected month (cost --against)."))

    @model_validator(mode="after")
    def _some(self) -> BudgetSpec:
        if all(v is None for v in self.model_dump().values()):
            raise ValueError("sets no limit; set monthly_expected_max, monthly_max_max, increase_max or "
                             "increase_max_percent, or remove budget")
        return self


class ExceptionSpec(_Spec):
    """An accepted exception (``dbx-ai-infra:exceptions``): a finding the team has reviewed and accepts, with why and
    until when. The finding is still reported, marked excepted with its reason; after ``expires`` it fails again."""

    rule: str = Field(min_length=1, description="The policy's name, e.g. databricks-cluster-require-autotermination.")
    resource: str = Field(min_length=1, description="The resource's name as reports show it, e.g. prod-inference.")
    reason: str = Field(min_length=1, description="Why the finding is accepted (a ticket, a decision).")
    expires: Annotated[date, Strict(False)] | None = Field(
        None, description="The last day the exception holds (YYYY-MM-DD); none: no end.")


class MonitoringSpec(_Spec):
    """The GPU collector (``dbx-ai-infra:monitoring``): an init script on every GPU cluster that samples nvidia-smi
    and writes the samples to a Volume, for ``python -m stackplan advise``."""

    enabled: bool = Field(True, description="Attach the GPU collector to the stack's clusters. Default true.")
    volume: str = Field("ops.telemetry", pattern=r"^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$",
                        description="<schema>.<volume> for the script and the samples; added to the layout.")
    interval_seconds: int = Field(60, ge=10, le=3600, description="Seconds between samples. Default 60.")


def default_catalog(stack: str) -> str:
    """The catalog a stack creates when it names none: ``ai_<stack>``, the stack's name lower-cased with every other
    character than a letter, digit or _ as _, cut to Unity Catalog's 63-character identifier of the spec."""
    return f"{DEFAULT_CATALOG}_{re.sub(r'[^a-z0-9_]', '_', stack.lower())}"[:63]


class StackSpec(_Spec):
    """One environment: cloud, GPU family, runtime, tags and its workloads (a section per role, or several of a role
    in ``workloads``)."""

    cloud: Cloud = Field(description="The workspace's cloud.")
    region: str | None = Field(None, description=(
        "The workspace's region (eu-west-1, westeurope, europe-west1): costs use its VM prices and Model Serving "
        "$/DBU where the data has them (docs: cost.md). None: the cloud's reference region (us-east-1, eastus, "
        "us-central1)."))
    gpu_family: GpuFamily = Field(description="The GPU family; a workload may name its own.")
    runtime: str = Field(DEFAULT_RUNTIME, pattern=GPU_ML_RUNTIME_PATTERN, description="GPU ML runtime (spark_version).")
    single_user_name: str = Field(min_length=1, description="User or service principal the clusters run as.")
    tags: dict[str, ConfigString] = Field(description=(
        "Tags on every resource; workload and cost_center are required (numbers and booleans become text)."))
    training: TrainingSpec | None = Field(None, description="The training workload (named training).")
    inference: InferenceSpec | None = Field(None, description="The inference workload (named inference).")
    dev: DevSpec | None = Field(None, description="The interactive dev workload (named dev).")
    workloads: dict[str, WorkloadEntry] = Field(
        default_factory=dict, description=(
            "More workloads, by name: each a role (training | inference | dev) and that role's section keys. A role "
            "section is the workload named by its role."))
    unity_catalog: UnityCatalogSpec = Field(default_factory=UnityCatalogSpec, description=(
        "The catalog, its schemas and Volumes, and grants (the default layout when absent)."))
    instance_pools: dict[str, PoolSpec] = Field(default_factory=dict, description=(
        "An instance pool per workload, by workload name (a role name: every workload of that role without its own "
        "entry). A pool-backed cluster is all on-demand (the pool sets availability)."))
    usage: UsageSpec = Field(default_factory=UsageSpec, description="Usage assumptions for the monthly costs.")
    cluster_policies: ClusterPoliciesSpec = Field(default_factory=ClusterPoliciesSpec, description=(
        "Workspace cluster policies generated from the stack (enabled by default)."))
    pricing: PriceOverrides | None = Field(None, description="Price overrides (negotiated rates, another region).")
    exceptions: list[ExceptionSpec] = Field(default_factory=list, description="Accepted policy findings.")
    serving: ServingSpec | None = Field(None, description="GPU Model Serving endpoints.")
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec, description=(
        "The GPU collector (enabled by default)."))
    budget: BudgetSpec | None = Field(None, description="Cost limits: a mandatory finding when the stack breaks one.")
    policy: dict[str, Any] | None = Field(None, description=(
        "Policy levels and thresholds for this stack, in the policy config's shape, over --policy-config (read and "
        "checked before the rest of the stack: its thresholds bound it)."))
    usage_policy_id: str | None = Field(None, min_length=1, description=(
        "The serverless usage (budget) policy every serverless job and endpoint of the stack carries (its id, from the "
        "account console), so their spend is attributable: the provider's budget_policy_id on jobs and serving "
        "endpoints. Default none (the rule databricks-serverless-require-usage-policy warns)."))
    permissions: dict[str, WorkloadPermissionsSpec] = Field(default_factory=dict, description=(
        "More access per workload (cluster, job, pool) beyond its single user and cluster_policies.can_use groups, by "
        "workload name (a role name: every workload of that role without its own entry)."))

    @model_validator(mode="before")
    @classmethod
    def _stack_catalog(cls, data: Any, info: ValidationInfo) -> Any:
        """The catalog's default comes from the stack's name (the validation context's ``stack``), where it is known:
        `default_catalog`."""
        stack = (info.context or {}).get("stack")
        if not stack or not isinstance(data, Mapping):
            return data
        uc = data.get("unity_catalog")
        if uc is None:
            return {**data, "unity_catalog": {"catalog": default_catalog(stack)}}
        if isinstance(uc, Mapping) and "catalog" not in uc:
            return {**data, "unity_catalog": {**uc, "catalog": default_catalog(stack)}}
        return data

    # ---- the workloads, whichever way the file states them -----------------------------------------------------------

    def named_workloads(self) -> dict[str, NamedWorkload]:
        """Every workload by name: the role sections first (named by their role), then ``workloads`` in file order."""
        out: dict[str, NamedWorkload] = {}
        for section in SECTIONS:
            spec = getattr(self, section)
            if spec is not None:
                out[section] = NamedWorkload(section, section, section, spec)
        for name, entry in self.workloads.items():
            if name not in out:  # a name used twice is refused by the validator
                out[name] = NamedWorkload(name, entry.role, workload_key(name), entry)
        return out

    @staticmethod
    def keyed(mapping: Mapping[str, Any], workload: NamedWorkload) -> Any:
        """A workload's entry of a map keyed by workload name, its role's entry as the default (None: neither)."""
        return mapping.get(workload.name, mapping.get(workload.section))

    def pool_of(self, workload: NamedWorkload) -> PoolSpec | None:
        return self.keyed(self.instance_pools, workload)

    def pool_key(self, workload: NamedWorkload) -> str | None:
        """Which ``instance_pools`` key gives the workload its pool (its name, or its role's)."""
        return next((k for k in (workload.name, workload.section) if k in self.instance_pools), None)

    def users_of(self, workload: NamedWorkload) -> list[str]:
        """The groups that use the workload (``cluster_policies.can_use``)."""
        return list(self.keyed(self.cluster_policies.can_use, workload) or [])

    def identity_of(self, workload: NamedWorkload) -> str:
        """Who the workload's clusters are dedicated to and its job runs as: its own ``single_user_name``, else the
        stack's."""
        return workload.spec.single_user_name or self.single_user_name

    def identities(self) -> list[str]:
        """Every identity a cluster of the stack runs as (the stack's first), once each: the users and service
        principals its clusters are dedicated to and its jobs run as, and each group an all-purpose cluster is
        dedicated to (``dedicated_group``). A cluster in dedicated access mode runs its init scripts, and its people's
        code, as its assigned principal, user or group (Databricks docs, "What files can I reference in an init
        script?": "In dedicated access mode, the identity of the assigned principal (the user or group) is used")."""
        groups = [w.spec.dedicated_group for w in self.named_workloads().values()
                  if w.spec.dedicated_group is not None
                  and not (isinstance(w.spec, TrainingSpec) and not w.spec.makes_cluster)]
        return list(dict.fromkeys([self.single_user_name,
                                   *(self.identity_of(w) for w in self.named_workloads().values()), *groups]))

    def permissions_of(self, workload: NamedWorkload) -> WorkloadPermissionsSpec | None:
        return self.keyed(self.permissions, workload)

    def usage_of(self, workload: NamedWorkload) -> dict[str, float]:
        """The workload's own usage assumptions: its role's entry, its own over it (the stack's figures elsewhere)."""
        per = self.usage.of_workloads()
        role, own = per.get(workload.section), per.get(workload.name) if workload.name != workload.section else None
        return {**(role.set_fields() if role else {}), **(own.set_fields() if own else {})}

    def usage_assumptions(self) -> dict[str, Any]:
        """The usage assumptions the cost model prices the stack by: the ``usage`` section's figures, each workload's
        own (``<assumption>.<workload>``, matched by its ``dbx_workload`` tag) and each scale-to-zero endpoint's active
        hours where it states them (``serving_active_hours_per_month.<endpoint>``)."""
        assumptions: dict[str, Any] = {k: v for k, v in self.usage.model_dump().items()
                                       if k in UsageSpec.model_fields}
        for name, workload in self.named_workloads().items():
            assumptions.update({f"{key}.{name}": value for key, value in self.usage_of(workload).items()})
        if self.serving is not None:
            assumptions.update({f"serving_active_hours_per_month.{name}": e.active_hours_per_month
                                for name, e in self.serving.endpoints.items()
                                if e.scale_to_zero and e.active_hours_per_month is not None})
        return assumptions

    # ---- validation --------------------------------------------------------------------------------------------------

    @field_validator("region")
    @classmethod
    def _region(cls, region: str | None, info: ValidationInfo) -> str | None:
        cloud = info.data.get("cloud")
        problem = region_problem(cloud, region) if region is not None and isinstance(cloud, str) else None
        if problem and isinstance(cloud, str):
            raise ValueError(f"{problem}. Fix: name the workspace's {profile(cloud).display} region, or remove "
                             f"region to price at {profile(cloud).reference_region}.")
        return region

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        missing = [t for t in REQUIRED_TAGS if not tags.get(t)]
        if missing:
            raise ValueError(f"missing required tag(s) {', '.join(missing)}; every resource carries "
                             f"{' and '.join(REQUIRED_TAGS)}")
        reserved = [t for t in tags if t in RESERVED_TAGS]
        if reserved:
            raise ValueError(f"tag(s) {', '.join(reserved)} are set by the components or by Databricks")
        cloud = info.data.get("cloud")
        for problem in tag_problems(cloud, tags) if cloud else []:
            raise ValueError(problem)
        return tags

    @field_validator("workloads", mode="before")
    @classmethod
    def _workload_names(cls, workloads: Any, info: ValidationInfo) -> Any:
        """A name is an identifier with hyphens, used once, not a role's name (that is its section's workload), and
        none of the stack's own resource names (``<stack>-<name>``: the catalog, the policies, the collector, an
        endpoint, a pool)."""
        if not isinstance(workloads, Mapping):
            return workloads
        taken = [s for s in SECTIONS if info.data.get(s) is not None]
        names = [*taken, *map(str, workloads)]
        own = {UC_RESOURCE: "the Unity Catalog storage", POLICY_RESOURCE: "the cluster policies",
               COLLECTOR_RESOURCE: "the GPU collector", CODE_RESOURCE: "the code uploaded to the code Volume"}
        own.update({f"{n}{POOL_RESOURCE_SUFFIX}": f"the instance pool of workload {n}" for n in names})
        for name in map(str, workloads):
            if not re.match(WORKLOAD_NAME_PATTERN, name):
                raise ValueError(f"the name {name[:60]!r} is not a workload name: lower-case letters, digits, - and _, "
                                 f"starting with a letter and ending with a letter or digit, at most 40 characters; "
                                 f"rename it")
            if name in taken:
                raise ValueError(f"the name {name!r} is used twice (dbx-ai-infra:{name} is the workload named {name}); "
                                 f"rename one")
            if name in SECTIONS:
                raise ValueError(f"{name}: a role's name is its section's workload; write it as dbx-ai-infra:{name}, "
                                 f"or give the workload another name")
            made = own.get(name)
            if made:
                raise ValueError(f"{name}: the name collides with {made}, which the stack names <stack>-{name}; rename "
                                 f"the workload")
            kept = ((SERVING_RESOURCE_PREFIX, "the serving endpoints' resources (<stack>-serving-<endpoint>)"),
                    (f"{POLICY_RESOURCE}-", "the workloads' cluster policies (<stack>-policy-<workload>)"))
            for prefix, owner in kept:
                if name.startswith(prefix):
                    raise ValueError(f"{name}: names starting with {prefix} are kept for {owner}, which such a "
                                     f"workload's resources could collide with; rename the workload")
        return workloads

    def _monitoring_layout(self) -> None:
        """The collector's Volume: added to the layout (its schema too) when the layout does not have it."""
        if not self.monitoring.enabled or self.monitoring.volume in self.unity_catalog.volume_refs():
            return
        schema, volume = self.monitoring.volume.split(".")
        self.unity_catalog.schemas.setdefault(schema, SchemaSpec()).volumes.append(VolumeSpec(name=volume))

    def _code_layout(self) -> None:
        """The code Volume (`UnityCatalogSpec.code_volume`): added to the layout, its schema too, when the stack runs
        code from it (the collector's init script, a training job's default entry point)."""
        refs = self.unity_catalog.volume_refs()
        needed = self.monitoring.enabled or any(
            isinstance(w.spec, TrainingSpec) and w.spec.job is not None and w.spec.job.python_file is None
            for w in self.named_workloads().values())
        if not needed or self.unity_catalog.code_volume in refs:
            return
        schema, volume = self.unity_catalog.code_volume.split(".")
        self.unity_catalog.schemas.setdefault(schema, SchemaSpec()).volumes.append(
            VolumeSpec(name=volume, comment="Code the stack runs (job entry points, init scripts): written only by "
                                            "the deployer"))

    def _serving_layout(self) -> None:
        """Endpoints with an inference table log into a schema of the stack's catalog: add it (and SELECT for the
        groups that manage the endpoints) when the layout does not have it."""
        if self.serving is None:
            return
        logging = [e for e in self.serving.endpoints.values() if e.inference_table]
        schema = self.serving.inference_table_schema
        if not logging or schema in self.unity_catalog.schemas:
            return
        self.unity_catalog.schemas[schema] = SchemaSpec()
        for group in dict.fromkeys(g for e in logging for g in e.can_manage):
            self.unity_catalog.grants.append(GrantSpec(principal=group, privileges=["USE_SCHEMA", "SELECT"],
                                                       securable=schema))

    def _keys_name_workloads(self, workloads: Mapping[str, NamedWorkload]) -> None:
        """Every key of a map keyed by workload names one, or a role some workload has."""
        roles = {w.section for w in workloads.values()}
        for where, mapping in (("instance_pools", self.instance_pools), ("cluster_policies.can_use",
                               self.cluster_policies.can_use), ("permissions", self.permissions),
                               ("usage", self.usage.of_workloads())):
            for key in mapping:
                if key not in workloads and key not in roles:
                    raise ValueError(f"{where}.{key} names no workload of the stack (workloads: "
                                     f"{', '.join(workloads)}; a role name applies to every workload of that role); "
                                     f"fix the key or remove it")

    def _usage_applies(self, workloads: Mapping[str, NamedWorkload]) -> None:
        """A workload's own usage figure is one its role is priced by."""
        for key, entry in self.usage.of_workloads().items():
            sections = {w.section for w in workloads.values() if key in (w.name, w.section)}
            pooled = any(self.pool_of(w) is not None for w in workloads.values() if key in (w.name, w.section))
            for field_name in entry.set_fields():
                applies = field_name.startswith(tuple(f"{s}_" for s in sections)) or (
                    field_name == "pool_idle_hours_per_month" and pooled)
                if not applies:
                    owner = ("a pool-backed workload's" if field_name == "pool_idle_hours_per_month" else
                             f"a {field_name.split('_', 1)[0]} workload's")
                    raise ValueError(f"usage.{key}.{field_name} does not apply to {key} (a {'/'.join(sorted(sections))}"
                                     f" workload{'' if pooled else ' without a pool'}): it is {owner}.{FIX_MARK}"
                                     f"remove it, or move it under {owner} usage (usage.<its name>)")

    def _permission_targets(self, workloads: Mapping[str, NamedWorkload]) -> None:
        """Each permissions entry names an object the stack makes."""
        for key, access in self.permissions.items():
            covered = [w for w in workloads.values() if key in (w.name, w.section)]
            if access.job and not any(isinstance(w.spec, TrainingSpec) and w.spec.job for w in covered):
                raise ValueError(f"permissions.{key}.job is set but {key} makes no job (only a training workload's "
                                 f"job makes one); remove it")
            if access.cluster and not any(not isinstance(w.spec, TrainingSpec) or w.spec.makes_cluster
                                          for w in covered):
                who = ", ".join("=".join(next(iter(e.principal().items()))) for e in access.cluster)
                raise ValueError(f"permissions.{key}.cluster gives {who} access to a cluster, but {key} makes no "
                                 f"all-purpose cluster (a training workload with a job runs on the job's compute); "
                                 f"give them access to the job (permissions.{key}.job), or set "
                                 f"{key}.all_purpose_cluster: true")
            if access.pool and not any(self.pool_of(w) is not None for w in covered):
                raise ValueError(f"permissions.{key}.pool is set but {key} has no instance pool (instance_pools); "
                                 f"remove it or add the pool")

    @model_validator(mode="after")
    def _catalog_location(self) -> StackSpec:
        uc = self.unity_catalog
        if uc.storage_root is not None and uc.existing_catalog:
            raise ValueError("unity_catalog.storage_root and existing_catalog are both set: an existing catalog keeps "
                             "its own managed location; remove storage_root")
        if (uc.storage_credential or uc.external_location) and uc.storage_root is None:
            raise ValueError("unity_catalog.storage_credential / external_location are for storage_root, which is not "
                             "set; set storage_root (the catalog's managed location) or remove them")
        if uc.storage_credential and uc.external_location:
            raise ValueError("unity_catalog sets both storage_credential (create a credential and an external "
                             "location) and external_location (use an existing one); keep one")
        if uc.storage_credential and uc.storage_credential.cloud() != self.cloud:
            raise ValueError(f"unity_catalog.storage_credential names a {uc.storage_credential.cloud()} identity; this "
                             f"stack is on {self.cloud}: name its {self.cloud} identity")
        schemes = profile(self.cloud).storage_schemes
        if uc.storage_root is not None and not uc.storage_root.startswith(schemes):
            raise ValueError(f"unity_catalog.storage_root {uc.storage_root!r} is not {self.cloud} storage; use a "
                             f"{' or '.join(schemes)} URI")
        return self

    @model_validator(mode="after")
    def _cross_section(self) -> StackSpec:
        if not (self.training or self.inference or self.dev or self.workloads or self.serving):
            raise ValueError("the stack defines no workload; add at least one of training, inference, dev, "
                             "workloads, serving")
        workloads = self.named_workloads()
        self._keys_name_workloads(workloads)
        self._serving_layout()
        self._monitoring_layout()
        self._code_layout()
        refs = self.unity_catalog.volume_refs()
        for w in workloads.values():
            pool, section = self.pool_of(w), w.spec
            if pool is not None and isinstance(section, TrainingSpec) and section.serverless \
                    and self.pool_key(w) == w.name:
                raise ValueError(f"instance_pools.{w.name}: {w.name} runs on serverless GPU (compute: serverless_gpu), "
                                 f"which takes no instance pool; remove the pool")
            if pool is not None and pool.max_capacity is not None and not (
                    isinstance(section, TrainingSpec) and section.serverless):
                largest = 1 + (section.max_workers if isinstance(section, InferenceSpec)
                               else getattr(section, "num_workers", 0) or 0)
                if pool.max_capacity < largest:
                    raise ValueError(f"instance_pools.{self.pool_key(w)}.max_capacity {pool.max_capacity} is below "
                                     f"the {largest} nodes the {w.name} cluster needs at its largest (the driver and "
                                     f"its workers); raise max_capacity to at least {largest}")
            if isinstance(section, TrainingSpec) and section.checkpoint_volume not in refs:
                raise ValueError(f"{w.key}.checkpoint_volume {section.checkpoint_volume!r} is not a volume of "
                                 f"unity_catalog; volumes: {', '.join(sorted(refs))}")
            for lib in section.libraries:
                if not (is_pinned_pip(lib) or is_bare_pip(lib)):
                    raise ValueError(f"{w.key}.libraries: {lib!r} is not pinned; write it as package==x.y.z, or "
                                     f"as the bare name (e.g. transformers) to take the runtime's pin")
        self._usage_applies(workloads)
        self._permission_targets(workloads)
        self._people_on_interactive(workloads)
        return self

    def _group_runtime(self, w: NamedWorkload) -> None:
        """Dedicated group access needs Databricks Runtime 15.4 or later (Databricks docs, "Dedicated group access")."""
        found = re.match(r"^(\d+)(?:\.(\d+))?\.x-", self.runtime)
        if found and (int(found.group(1)), int(found.group(2) or 0)) < (15, 4):
            raise ValueError(f"{w.key}.dedicated_group needs runtime 15.4 or later (dedicated group access), the stack "
                             f"runs {self.runtime}; move runtime to an LTS release from 15.4 on")

    def _people_on_interactive(self, workloads: Mapping[str, NamedWorkload]) -> None:
        """An interactive (dev) cluster is dedicated to a person: in dedicated access mode only its single user can
        attach to it, so one dedicated to a service principal is of use to no one (jobs keep running as the
        service principal)."""
        for w in workloads.values():
            who = self.identity_of(w)
            if w.spec.dedicated_group is not None:
                self._group_runtime(w)
                continue
            if isinstance(w.spec, InferenceSpec) and is_application_id(who):
                raise ValueError(f"{w.key} is an inference cluster dedicated to the service principal {who}, so no "
                                 f"person can attach to it and no job of the stack runs on it; set "
                                 f"{w.key}.dedicated_group to the group that serves from it (Databricks dedicated "
                                 f"group access)")
            if isinstance(w.spec, DevSpec) and is_application_id(who):
                raise ValueError(f"{w.key} is an interactive cluster dedicated to the service principal {who} (the "
                                 f"stack's single_user_name), so no person can attach a notebook to it; set "
                                 f"{w.key}.single_user_name to the user it is for (jobs keep running as the service "
                                 f"principal)")
