"""One reading of Databricks' serverless AI compute in a resource's properties (Pulumi's camelCase or the API's, a
Terraform plan's, snake_case): a job's serverless GPU tasks and a provisioned-throughput endpoint's served entity. The
cost model, the rules and the Terraform export read them here, as they read clusters through
`dbx_ai_infra.dbxtypes.shape`.

A serverless GPU task is a job task with ``compute.hardware_accelerator`` (Jobs API ``Task.compute``, pulumi-databricks
1.118 ``JobTaskComputeArgs``), or an ``ai_runtime_task`` whose deployments name ``compute.accelerator_type`` and
``accelerator_count`` (``JobTaskAiRuntimeTaskDeploymentComputeArgs``). Its GPU count: the ``accelerator_count``, or
the ``--gpus`` argument our jobs pass their entry point; a task that states neither runs on one accelerator node as
far as the definition says (the entry point may launch more: what it does is not known), and says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .shape import as_list, as_mapping, as_number, normalize_props
from .vocabulary import GPUS_ARG

#: The GPUs of one node, as the accelerator's name encodes it (databricks-sdk ``jobs.ComputeSpecAcceleratorType``:
#: "Per-node accelerator count is encoded in the value name (e.g. GPU_8xH100 means 8 H100s per node)").
_PER_NODE = re.compile(r"^GPU_(\d+)x")


def gpus_per_node(accelerator: str) -> int | None:
    found = _PER_NODE.match(accelerator)
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class GpuTask:
    """A job task on serverless GPU: its key, its accelerator and the GPUs it uses (``gpus_stated`` False: the
    definition states no count, and ``gpus`` is one node's)."""

    task_key: str
    accelerator: str
    gpus: int | None
    gpus_stated: bool


def _gpus_argument(parameters: Any) -> int | None:
    params = [str(p) for p in as_list(parameters)]
    for i, p in enumerate(params):
        value = params[i + 1] if p == GPUS_ARG and i + 1 < len(params) else \
            p.split("=", 1)[1] if p.startswith(f"{GPUS_ARG}=") else None
        number = as_number(value) if value is not None else None
        if number is not None and number >= 1 and float(number).is_integer():
            return int(number)
    return None


def _task(task: Mapping[str, Any]) -> GpuTask | None:
    key = str(task.get("task_key") or "")
    accelerator = as_mapping(task.get("compute")).get("hardware_accelerator")
    if isinstance(accelerator, str) and accelerator:
        stated = _gpus_argument(as_mapping(task.get("spark_python_task")).get("parameters"))
        gpus = stated if stated is not None else gpus_per_node(accelerator)
        return GpuTask(key, accelerator, gpus, stated is not None)
    for deployment in map(as_mapping, as_list(as_mapping(task.get("ai_runtime_task")).get("deployments"))):
        compute = as_mapping(deployment.get("compute"))
        kind, count = compute.get("accelerator_type"), as_number(compute.get("accelerator_count"))
        if isinstance(kind, str) and kind:
            return GpuTask(key, kind, int(count) if count else gpus_per_node(kind), bool(count))
    return None


def serverless_gpu_tasks(props: Mapping[str, Any] | None) -> list[GpuTask]:
    """The serverless GPU tasks of a job (either casing)."""
    p = normalize_props(props)
    return [t for t in (_task(as_mapping(task)) for task in as_list(p.get("tasks"))) if t is not None]


def usage_policy(props: Mapping[str, Any] | None) -> str | None:
    """The serverless usage (budget) policy a job or endpoint carries: ``budget_policy_id`` (what the provider
    documents for jobs and serving endpoints), or ``usage_policy_id`` (the name newer APIs give it); None: none."""
    p = normalize_props(props)
    for key in ("budget_policy_id", "usage_policy_id"):
        value = p.get(key)
        if isinstance(value, str) and value.strip():
            return value
    # what a workspace returns of a job: its effective policy
    value = p.get("effective_budget_policy_id") or p.get("effective_usage_policy_id")
    return value if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class ProvisionedEntity:
    """A provisioned-throughput endpoint's first served entity (the component serves one)."""

    name: str | None
    entity: str
    entity_version: str | None
    model_units: int | None
    tags: dict[str, str]
    gateway: Mapping[str, Any]
    #: A legacy family's tokens-per-second band (``min_provisioned_throughput``, ``max_provisioned_throughput``:
    #: databricks-sdk ``serving.ServedEntityOutput``), when the entity is provisioned so; None otherwise.
    band: tuple[int | None, int | None] | None = None

    @property
    def inference_table(self) -> Mapping[str, Any]:
        return as_mapping(self.gateway.get("inference_table_config"))


def _band(entity: Mapping[str, Any]) -> tuple[int | None, int | None] | None:
    low, high = (as_number(entity.get(k)) for k in ("min_provisioned_throughput", "max_provisioned_throughput"))
    if low is None and high is None:
        return None
    return (int(low) if low is not None else None, int(high) if high is not None else None)


def is_provisioned_entity(entity: Mapping[str, Any]) -> bool:
    """A served entity on provisioned throughput, as the API returns it (snake_case): model units
    (``provisioned_model_units``) or a tokens-per-second band (``min/max_provisioned_throughput``)."""
    return any(entity.get(k) is not None for k in ("provisioned_model_units", "min_provisioned_throughput",
                                                    "max_provisioned_throughput"))


def provisioned_entity(props: Mapping[str, Any] | None) -> ProvisionedEntity:
    """The shape of a provisioned-throughput endpoint's properties (either casing)."""
    p = normalize_props(props)
    entities = [as_mapping(e) for e in as_list(as_mapping(p.get("config")).get("served_entities"))]
    first = entities[0] if entities else {}
    units = as_number(first.get("provisioned_model_units"))
    tags = {str(t.get("key")): str(t.get("value")) for t in map(as_mapping, as_list(p.get("tags")))
            if t.get("key") is not None}
    version = first.get("entity_version")
    return ProvisionedEntity(name=str(p["name"]) if p.get("name") else None, entity=str(first.get("entity_name") or ""),
                             entity_version=str(version) if version is not None else None,
                             model_units=int(units) if units is not None else None, tags=tags,
                             gateway=as_mapping(p.get("ai_gateway")), band=_band(first))
