"""Plain facts about recorded resources, shared by every renderer (table, Markdown, HTML)."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal

from dbxtypes.plan import Resource, Violation
from dbxtypes.shape import ClusterShape, as_mapping, as_number, pool_shape, shapes_of_resource
from dbxtypes.vocabulary import (
    CATALOG,
    CLUSTER,
    CLUSTER_POLICY,
    GRANTS,
    INSTANCE_POOL,
    JOB,
    PERMISSIONS,
    SCALE_DOWN_WINDOW_KEY,
    SCHEMA,
    VOLUME,
)

SHORT_TYPES = {
    CLUSTER: "Cluster",
    JOB: "Job",
    INSTANCE_POOL: "InstancePool",
    CATALOG: "Catalog",
    SCHEMA: "Schema",
    VOLUME: "Volume",
    GRANTS: "Grants",
    CLUSTER_POLICY: "ClusterPolicy",
    PERMISSIONS: "Permissions",
}


def short_type(token: str) -> str:
    if token in SHORT_TYPES:
        return SHORT_TYPES[token]
    return token.rsplit(":", 1)[-1]


def cluster_facts(shape: ClusterShape) -> str:
    """Node type, size, availability and idle timeout of one cluster definition."""
    node = shape.node_type_id or ("pool" if shape.pool_backed else "?")
    if shape.autoscale is not None:
        size = f"{shape.autoscale[0]}-{shape.autoscale[1]} workers"
    else:
        size = f"{shape.num_workers} workers"
    parts = [node, size]
    clouds = list(shape.blocks)
    if clouds and shape.availability_declared_in(clouds[0]):
        parts.append(f"{shape.availability_in(clouds[0])} (first_on_demand {shape.first_on_demand_in(clouds[0])})")
    window = as_number(shape.spark_conf.get(SCALE_DOWN_WINDOW_KEY))
    if window is not None:
        parts.append(f"scale down every {window / 60:g} min")
    if shape.autotermination_minutes == 0:
        parts.append("never auto-terminates")
    elif shape.autotermination_minutes is not None:
        parts.append(f"idle {shape.autotermination_minutes} min")
    return ", ".join(parts)


def facts(resource: Resource) -> str:
    """One line that says what a resource is, for a reviewer."""
    kind, inputs = short_type(resource.type), resource.inputs
    if kind == "Cluster":
        return cluster_facts(shapes_of_resource(resource.type, inputs)[0])
    if kind == "Job":
        shapes = shapes_of_resource(resource.type, inputs)
        tasks = [as_mapping(t) for t in inputs.get("tasks") or []]
        retries = ", ".join(f"{t.get('taskKey')}: {t.get('maxRetries', 0)} retries" for t in tasks)
        return "; ".join([*(f"job cluster: {cluster_facts(c)}" for c in shapes), retries])
    if kind == "InstancePool":
        pool = pool_shape(inputs)
        cloud = next(iter(pool.blocks), None)
        availability = (pool.declared_availability_in(cloud) if cloud else None) or "?"
        capacity = "unlimited" if pool.max_capacity is None else pool.max_capacity
        return f"{pool.node_type_id}, {pool.min_idle_instances} idle, max {capacity}, {availability}"
    if kind == "File":
        return str(inputs.get("path", ""))
    if kind == "Volume":
        return f"/Volumes/{inputs.get('catalogName')}/{inputs.get('schemaName')}/{inputs.get('name')}"
    if kind == "Grants":
        target = next((f"{k} {v}" for k, v in inputs.items() if k != "grants"), "")
        who = "; ".join(f"{g.get('principal')}: {', '.join(g.get('privileges') or [])}"
                        for g in inputs.get("grants") or [])
        return f"{target}: {who}"
    if kind in ("Catalog", "Schema"):
        return str(inputs.get("name", ""))
    if kind == "ClusterPolicy":
        return f"{len(json.loads(inputs.get('definition') or '{}'))} limited attributes"
    if kind == "ModelServing":
        entity = as_mapping((as_mapping(inputs.get("config")).get("servedEntities") or [{}])[0])
        gateway = as_mapping(inputs.get("aiGateway"))
        table = as_mapping(gateway.get("inferenceTableConfig"))
        limits = [as_mapping(r) for r in gateway.get("rateLimits") or []]
        parts = [f"{entity.get('entityName')} v{entity.get('entityVersion')} on {entity.get('workloadType')}",
                 f"concurrency {entity.get('minProvisionedConcurrency')}-{entity.get('maxProvisionedConcurrency')}",
                 "scales to zero" if entity.get("scaleToZeroEnabled") else "always warm"]
        if table.get("enabled"):
            parts.append(f"inference table {table.get('catalogName')}.{table.get('schemaName')}")
        parts += [f"{r.get('calls')} calls/{r.get('key')}/{r.get('renewalPeriod')}" for r in limits]
        return ", ".join(parts)
    if kind == "Permissions":
        return "; ".join(f"{a.get('groupName') or a.get('userName') or a.get('servicePrincipalName')}: "
                         f"{a.get('permissionLevel')}" for a in inputs.get("accessControls") or [])
    return ""


def money(value: float | None) -> str:
    """``$1,234.57``; ``unpriced`` for None. Rounded half away from zero to cents."""
    if value is None:
        return "unpriced"
    whole = cents(value)
    sign = "-" if whole < 0 else ""
    return f"{sign}${abs(whole) / 100:,.2f}"


def signed_money(value: float | None) -> str:
    """``+$1.00``, ``-$1.00`` or ``$0.00``; ``unknown`` for None (an unpriced side)."""
    if value is None:
        return "unknown"
    whole = cents(value)
    if whole == 0:
        return "$0.00"
    return ("+" if whole > 0 else "-") + f"${abs(whole) / 100:,.2f}"


def cents(value: float) -> int:
    """Whole cents, half away from zero, from the shortest decimal form of the float (1.005 -> 101)."""
    return int(Decimal(repr(float(value))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) * 100)


def violations_summary(violations: list[Violation]) -> str:
    """``2 mandatory, 1 advisory`` (``, 1 excepted`` when a stack exception accepted some): one wording for every
    report."""
    excepted = sum(1 for v in violations if v.excepted)
    mandatory = sum(1 for v in violations if v.mandatory)
    text = f"{mandatory} mandatory, {len(violations) - mandatory - excepted} advisory"
    return text + (f", {excepted} excepted" if excepted else "")
