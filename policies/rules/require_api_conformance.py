"""What the Databricks API would refuse or silently drop: every field and enum value checked against databricks-sdk.

The generator and the other rules agree with each other; this rule makes them agree with the API. Each resource is
read as the REST API JSON it becomes (snake_case, as `dbxtypes.shape.normalize_props` gives it) and walked against
databricks-sdk's own dataclasses and enums (pinned in requirements.txt): a field the API type does not have, or an
enum value the SDK does not know, is a violation naming its path. The documented cross-field limits the SDK types
cannot express are checked here too (a pool keeps idle instances at most 10,000 minutes; a privilege must apply to
its securable). An autoscale range (``max_workers`` above ``min_workers``) is the worker-bounds rule's.

API types used (databricks-sdk): ``compute.ClusterSpec`` (Pulumi clusters) or ``compute.ClusterDetails`` (exported
Clusters API JSON), ``compute.Library``, ``jobs.JobSettings``, ``compute.InstancePoolAndStats``,
``catalog.CatalogInfo``, ``catalog.SchemaInfo``, ``catalog.VolumeInfo``; privileges: `dbxtypes.unity_catalog`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from dbxtypes.sdk_types import enum_values, fields_of
from dbxtypes.shape import ClusterShape, PoolShape, as_list, as_mapping, as_number
from dbxtypes.unity_catalog import privilege_problems
from dbxtypes.vocabulary import CATALOG, CLUSTER, GRANTS, INSTANCE_POOL, JOB, SCHEMA, VOLUME
from policies.rule import Rule, View

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
def api_problems(type_name: str, data: Any, path: str = "", skip: frozenset[str] = frozenset()) -> list[str]:
    """Where ``data`` (API JSON) does not fit the databricks-sdk type ``type_name`` (``compute.ClusterSpec``, read
    from the SDK snapshot in `dbxtypes.sdk_types`): unknown fields, unknown enum values, wrong shapes. Map-typed
    fields (tags, Spark conf) are not looked into."""
    short = type_name.split(".", 1)[1]
    if not isinstance(data, Mapping):
        return [f"{path or 'the resource'}: expected an object ({short}), got {type(data).__name__}"]
    fields = fields_of(type_name)
    out: list[str] = []
    for key, value in data.items():
        if value is None or key in skip:
            continue
        field = fields.get(key)
        if field is None:
            out.append(f"{path}.{key} is not a field of the Databricks API object {short}" if path else
                       f"{key} is not a field of the Databricks API object {short}")
        elif field:  # a scalar or map field ({}) is not looked into
            out.extend(_value_problems(field, value, f"{path}.{key}" if path else str(key)))
    return out


def _value_problems(field: Mapping[str, Any], value: Any, where: str) -> list[str]:
    if "enum" in field:
        if value not in _enum_set(field["enum"]):
            allowed = enum_values(field["enum"])
            name = field["enum"].split(".", 1)[1]
            return [f"{where} is {value!r}, which the API does not know ({name}: {', '.join(allowed)})"]
        return []
    if "type" in field:
        return api_problems(field["type"], value, where)
    if "list" in field:
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        out: list[str] = []
        for i, element in enumerate(value):
            out.extend(_value_problems(field["list"], element, f"{where}[{i}]"))
        return out
    return []


@functools.cache
def _enum_set(enum_name: str) -> frozenset[Any]:
    return frozenset(enum_values(enum_name))


def _cluster(view: ClusterShape) -> list[str]:
    cls = "compute.ClusterDetails" if view.source == "api" else "compute.ClusterSpec"
    out = api_problems(cls, view.props, skip=PROVIDER_ONLY[CLUSTER])
    for i, library in enumerate(as_list(view.props.get("libraries"))):
        out.extend(api_problems("compute.Library", library, f"libraries[{i}]"))
    return out


def _job(props: Mapping[str, Any]) -> list[str]:
    return api_problems("jobs.JobSettings", props, skip=PROVIDER_ONLY[JOB])


def _pool(view: PoolShape) -> list[str]:
    out = api_problems("compute.InstancePoolAndStats", view.props, skip=PROVIDER_ONLY[INSTANCE_POOL])
    idle = as_number(view.props.get("idle_instance_autotermination_minutes"))
    if idle is not None and not 0 <= idle <= MAX_POOL_IDLE_MINUTES:
        out.append(f"idle_instance_autotermination_minutes is {idle}; the API takes 0 to {MAX_POOL_IDLE_MINUTES:,}. "
                   f"Fix: set it within that range.")
    return out


def _grants(props: Mapping[str, Any]) -> list[str]:
    securable = next((k for k in ("volume", "schema", "catalog") if props.get(k)), None)
    out: list[str] = []
    for i, grant in enumerate(as_list(props.get("grants"))):
        grant = as_mapping(grant)
        where = f"grants[{i}] ({grant.get('principal')})"
        out.extend(f"{where}: {p}" for p in privilege_problems(as_list(grant.get("privileges")), securable or ""))
    return out


_INFO = {CATALOG: "catalog.CatalogInfo", SCHEMA: "catalog.SchemaInfo", VOLUME: "catalog.VolumeInfo"}


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    if isinstance(view, ClusterShape):
        problems = _cluster(view) if view.resource_type == CLUSTER else []
    elif isinstance(view, PoolShape):
        problems = _pool(view)
    elif view.resource_type == JOB:
        problems = _job(view.props)
    elif view.resource_type == GRANTS:
        problems = _grants(view.props)
    elif view.resource_type in _INFO:
        problems = api_problems(_INFO[view.resource_type], view.props, skip=PROVIDER_ONLY[view.resource_type])
    else:
        problems = []
    return [p if "Fix:" in p else f"{p}. Fix: remove or correct it (the workspace refuses it or drops it silently)."
            for p in problems]


RULE = Rule(
    name="databricks-api-conformance",
    description=("Every cluster, job, pool, catalog, schema, volume and grant must be what the Databricks API takes: "
                 "fields and enum values of databricks-sdk's types, and the API's documented cross-field limits."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB, INSTANCE_POOL, CATALOG, SCHEMA, VOLUME, GRANTS),
    check=check,
    remediation=("Remove fields the API object does not have (libraries go on job tasks, not shared job clusters), "
                 "use enum values the API knows, and keep pool and grant values within the API's limits."),
    severity="high",
)
