"""What the Databricks API would refuse or silently drop: every field and enum value checked against databricks-sdk.

The generator and the other rules agree with each other; this rule makes them agree with the API. Each resource is
read as the REST API JSON it becomes (snake_case, as `dbx_ai_infra.dbxtypes.shape.normalize_props` gives it) and walked
against databricks-sdk's own dataclasses and enums (pinned in requirements.txt): a field the API type does not have, or
an enum value the SDK does not know, is a violation naming its path. The documented cross-field limits the SDK types
cannot express are checked here too (a pool keeps idle instances at most 10,000 minutes; a privilege must apply to its
securable). An autoscale range (``max_workers`` above ``min_workers``) is the worker-bounds rule's.

API types used (databricks-sdk): ``compute.ClusterSpec`` (Pulumi clusters) or ``compute.ClusterDetails`` (exported
Clusters API JSON), ``compute.Library``, ``jobs.JobSettings``, ``compute.InstancePoolAndStats``,
``catalog.CatalogInfo``, ``catalog.SchemaInfo``, ``catalog.VolumeInfo``; privileges:
`dbx_ai_infra.dbxtypes.unity_catalog`.

Read from Terraform (``check --terraform``/``--terraform-plan``: a view's ``terraform``), a resource is written in the
provider's schema, not the API's: every argument the provider documents for the resource
(`dbx_ai_infra.dbxtypes.terraform_docs`, the snapshot of ``docs/resources/*.md`` of terraform-provider-databricks at
the pinned tag: ``git_source { url }``, ``parameter``, ``environment`` on ``databricks_job``) is a field, and
``dynamic`` (a Terraform construct that generates blocks, never an argument) is never reported as one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.sdk_types import enum_values, fields_of
from dbx_ai_infra.dbxtypes.shape import ClusterShape, PoolShape, as_list, as_mapping, as_number
from dbx_ai_infra.dbxtypes.terraform_docs import documented_names
from dbx_ai_infra.dbxtypes.unity_catalog import privilege_problems
from dbx_ai_infra.dbxtypes.vocabulary import (
    CATALOG,
    CLUSTER,
    GRANT,
    GRANTS,
    INSTANCE_POOL,
    JOB,
    SCHEMA,
    UNKNOWN_VALUE,
    VOLUME,
)
from dbx_ai_infra.policies.rule import Rule, View

#: Inputs the Pulumi provider takes that are not fields of the API object (it acts on them itself).
PROVIDER_ONLY: Mapping[str, frozenset[str]] = {
    CLUSTER: frozenset({"libraries", "is_pinned", "no_wait", "idempotency_token", "cluster_id"}),
    JOB: frozenset({"always_running", "control_run_state", "url", "provider_config", "job_id"}),
    INSTANCE_POOL: frozenset({"provider_config"}),
    CATALOG: frozenset({"force_destroy", "provider_config"}),
    SCHEMA: frozenset({"force_destroy", "provider_config"}),
    VOLUME: frozenset({"provider_config"}),
}
#: Longest idle time of an instance pool's idle instances (Instance Pools API, idle_instance_autotermination_minutes:
#: "must be between 0 and 10000 minutes"; read 2026-12).
MAX_POOL_IDLE_MINUTES = 10_000
#: What a document given to ``--cluster-json`` may hold besides databricks-sdk's response type, for it may be a
#: response the workspace wrote or a request someone would send: the request type's fields ...
REQUEST_TWIN: Mapping[str, str] = {"compute.ClusterDetails": "compute.ClusterSpec"}
#: ... and fields Databricks writes in its responses that the pinned databricks-sdk does not model (seen in
#: clusters/get, clusters/list and instance-pools/list responses of real workspaces; Clusters API reference, the
#: ClusterDetails and SparkNode objects; read 2026-12). A value is a field description as
#: `dbx_ai_infra.dbxtypes.sdk_types` gives it ({}: not looked into).
RESPONSE_EXTRA: Mapping[str, Mapping[str, Any]] = {
    "compute.ClusterDetails": {k: {} for k in (
        "disk_spec", "instance_source", "driver_instance_source", "effective_spark_version", "last_activity_time",
        "init_scripts_safe_mode", "driver_healthy", "pinned_by_user_name", "assigned_principal",
        "cluster_log_status", "enable_local_disk_encryption", "last_state_loss_time")},
    "compute.SparkNode": {"node_attributes": {}},
    "compute.InstancePoolAndStats": {"instance_pool_fleet_attributes": {}},
    # Jobs API 2.0: a job's single task at the job level (jobs/get and jobs/list of jobs made with 2.0, the
    # Terraform exporter, Overwatch); judged like a 2.1 task's fields.
    "jobs.JobSettings": {
        "new_cluster": {"type": "compute.ClusterSpec"}, "existing_cluster_id": {},
        "libraries": {"list": {"type": "compute.Library"}}, "notebook_task": {"type": "jobs.NotebookTask"},
        "spark_jar_task": {"type": "jobs.SparkJarTask"}, "spark_python_task": {"type": "jobs.SparkPythonTask"},
        "spark_submit_task": {"type": "jobs.SparkSubmitTask"}, "python_wheel_task": {"type": "jobs.PythonWheelTask"},
        "pipeline_task": {"type": "jobs.PipelineTask"}, "max_retries": {}, "min_retry_interval_millis": {},
        "retry_on_timeout": {},
        # a one-off run (Jobs API runs/submit): the run's own fields
        "run_name": {}, "idempotency_token": {}, "access_control_list": {}},
}


@functools.cache
def _known_fields(type_name: str, lenient: bool) -> Mapping[str, Any]:
    """The fields of an API type; ``lenient`` (a document given to the audit): its request twin's and the
    documented response fields too."""
    fields = dict(fields_of(type_name))
    if lenient:
        twin = REQUEST_TWIN.get(type_name)
        for name, field in (fields_of(twin) if twin else {}).items():
            fields.setdefault(name, field)
        for name, field in RESPONSE_EXTRA.get(type_name, {}).items():
            fields.setdefault(name, field)
    return fields


#: The provider resources whose documented arguments a Terraform view of each kind may use (a job's clusters are
#: written with the cluster resource's arguments).
TERRAFORM_DOCS: Mapping[str, tuple[str, ...]] = {
    CLUSTER: ("databricks_cluster",), JOB: ("databricks_job", "databricks_cluster"),
    INSTANCE_POOL: ("databricks_instance_pool",)}
#: Terraform's own block that generates blocks (``dynamic "library" { ... }``): never an argument of a resource.
TERRAFORM_META = frozenset({"dynamic"})


@functools.cache
def terraform_fields(resource_type: str) -> frozenset[str]:
    """What a resource read from Terraform may hold besides the API type's fields: the arguments the provider
    documents for it, and Terraform's ``dynamic``."""
    return TERRAFORM_META.union(*(documented_names(r) for r in TERRAFORM_DOCS.get(resource_type, ())))


def conformance(type_name: str, data: Any, path: str = "", skip: frozenset[str] = frozenset(), *,
                lenient: bool = False, documented: frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
    """Where ``data`` (API JSON) does not fit the databricks-sdk type ``type_name`` (``compute.ClusterSpec``, read
    from the SDK snapshot in `dbx_ai_infra.dbxtypes.sdk_types`): (wrong shapes and, unless ``lenient``, unknown fields
    and enum values; the unknown fields and enum values of a ``lenient`` walk). Map-typed fields (tags, Spark conf) are
    not looked into. ``documented``: names a Terraform resource may hold at any depth (`terraform_fields`), accepted
    where the API type has no such field (the docs list names per resource, not per block)."""
    short = type_name.split(".", 1)[1]
    if data == UNKNOWN_VALUE:  # known only after apply: not judged as a value
        return [], []
    if not isinstance(data, Mapping):
        return [f"{path or 'the resource'}: expected an object ({short}), got {type(data).__name__}"], []
    fields = _known_fields(type_name, lenient)
    strict: list[str] = []
    unknown: list[str] = []
    for key, value in data.items():
        if value is None or key in skip or value == UNKNOWN_VALUE:
            continue
        field = fields.get(key)
        if field is None and key in documented:
            continue
        if field is None:
            (unknown if lenient else strict).append(
                f"{path}.{key} is not a field of the Databricks API object {short}" if path else
                f"{key} is not a field of the Databricks API object {short}")
        elif field:  # a scalar or map field ({}) is not looked into
            more, odd = _value_problems(field, value, f"{path}.{key}" if path else str(key), lenient, documented)
            strict += more
            unknown += odd
    return strict, unknown


def api_problems(type_name: str, data: Any, path: str = "", skip: frozenset[str] = frozenset()) -> list[str]:
    """`conformance` of what we send (strict): every problem."""
    return conformance(type_name, data, path, skip)[0]


def _value_problems(field: Mapping[str, Any], value: Any, where: str, lenient: bool,
                    documented: frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
    if "enum" in field:
        if value not in _enum_set(field["enum"]):
            allowed = enum_values(field["enum"])
            name = field["enum"].split(".", 1)[1]
            message = f"{where} is {value!r}, which the API does not know ({name}: {', '.join(allowed)})"
            return ([], [message]) if lenient else ([message], [])
        return [], []
    if "type" in field:
        return conformance(field["type"], value, where, lenient=lenient, documented=documented)
    if "list" in field:
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"], []
        strict: list[str] = []
        unknown: list[str] = []
        for i, element in enumerate(value):
            if element == UNKNOWN_VALUE:
                continue
            more, odd = _value_problems(field["list"], element, f"{where}[{i}]", lenient, documented)
            strict += more
            unknown += odd
        return strict, unknown
    return [], []


@functools.cache
def _enum_set(enum_name: str) -> frozenset[Any]:
    return frozenset(enum_values(enum_name))


def _documented(view: View) -> frozenset[str]:
    return terraform_fields(view.resource_type) if view.terraform else frozenset()


def _cluster(view: ClusterShape) -> tuple[list[str], list[str]]:
    lenient = view.source == "api"
    cls = "compute.ClusterDetails" if lenient else "compute.ClusterSpec"
    documented = _documented(view)
    strict, unknown = conformance(cls, view.props, skip=PROVIDER_ONLY[CLUSTER], lenient=lenient,
                                  documented=documented)
    for i, library in enumerate(as_list(view.props.get("libraries"))):
        more, odd = conformance("compute.Library", library, f"libraries[{i}]", lenient=lenient,
                                documented=documented)
        strict += more
        unknown += odd
    return strict, unknown


def _job(props: Mapping[str, Any], lenient: bool, documented: frozenset[str]) -> tuple[list[str], list[str]]:
    return conformance("jobs.JobSettings", props, skip=PROVIDER_ONLY[JOB], lenient=lenient, documented=documented)


def _pool(view: PoolShape) -> tuple[list[str], list[str]]:
    strict, unknown = conformance("compute.InstancePoolAndStats", view.props, skip=PROVIDER_ONLY[INSTANCE_POOL],
                                  lenient=view.source == "api", documented=_documented(view))
    idle = as_number(view.props.get("idle_instance_autotermination_minutes"))
    if idle is not None and not 0 <= idle <= MAX_POOL_IDLE_MINUTES:
        strict.append(f"idle_instance_autotermination_minutes is {idle}; the API takes 0 to "
                      f"{MAX_POOL_IDLE_MINUTES:,}. Fix: set it within that range.")
    return strict, unknown


def _grants(props: Mapping[str, Any]) -> list[str]:
    securable = next((k for k in ("volume", "schema", "catalog") if props.get(k)), None)
    out: list[str] = []
    for i, grant in enumerate(as_list(props.get("grants"))):
        grant = as_mapping(grant)
        where = f"grants[{i}] ({grant.get('principal')})"
        out.extend(f"{where}: {p}" for p in privilege_problems(as_list(grant.get("privileges")), securable or ""))
    return out


_INFO = {CATALOG: "catalog.CatalogInfo", SCHEMA: "catalog.SchemaInfo", VOLUME: "catalog.VolumeInfo"}


#: The last view judged and its outcome: the two rules that read `judged` run one after the other on a view.
_LAST: list[Any] = [None, None]


def judged(view: View) -> tuple[list[str], list[str]]:
    """(what the API refuses; what a document given to the audit holds that the API types do not know: the
    advisory `databricks-export-unrecognised-field`'s)."""
    if _LAST[0] is view:
        return _LAST[1]
    outcome = _judge(view)
    _LAST[0], _LAST[1] = view, outcome
    return outcome


def _judge(view: View) -> tuple[list[str], list[str]]:
    if isinstance(view, ClusterShape):
        return _cluster(view) if view.resource_type == CLUSTER else ([], [])
    if isinstance(view, PoolShape):
        return _pool(view)
    if view.resource_type == JOB:
        return _job(view.props, view.source == "api", _documented(view))
    if view.resource_type == GRANTS:
        return _grants(view.props), []
    if view.resource_type == GRANT:  # one principal's: the same check, over its one entry
        entry = {k: view.props.get(k) for k in ("principal", "privileges")}
        return _grants({**view.props, "grants": [entry]}), []
    if view.resource_type in _INFO:
        return api_problems(_INFO[view.resource_type], view.props, skip=PROVIDER_ONLY[view.resource_type]), []
    return [], []


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    return [p if "Fix:" in p else f"{p}. Fix: remove or correct it (the workspace refuses it or drops it silently)."
            for p in judged(view)[0]]


RULE = Rule(
    name="databricks-api-conformance",
    order=10,
    description=("Every cluster, job, pool, catalog, schema, volume and grant must be what the Databricks API takes: "
                 "fields and enum values of databricks-sdk's types, and the API's documented cross-field limits."),
    details=("The types are databricks-sdk's `compute.ClusterSpec`, `jobs.JobSettings`, "
             "`compute.InstancePoolAndStats`, `catalog.*Info` and `catalog.Privilege`; the limits are the pool's idle "
             "minutes (0..10,000) and a privilege applying to its securable (the autoscale range is "
             "`databricks-cluster-configure-worker-bounds`'s). Libraries on a shared job cluster are refused: they go "
             "on the task."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB, INSTANCE_POOL, CATALOG, SCHEMA, VOLUME, GRANTS, GRANT),
    check=check,
    remediation=("Remove fields the API object does not have (libraries go on job tasks, not shared job clusters), "
                 "use enum values the API knows, and keep pool and grant values within the API's limits."),
    severity="high",
)
