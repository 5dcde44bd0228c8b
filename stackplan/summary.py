"""Plain facts about recorded resources, shared by every renderer (table, Markdown, HTML)."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

SHORT_TYPES = {
    "databricks:index/cluster:Cluster": "Cluster",
    "databricks:index/job:Job": "Job",
    "databricks:index/instancePool:InstancePool": "InstancePool",
    "databricks:index/catalog:Catalog": "Catalog",
    "databricks:index/schema:Schema": "Schema",
    "databricks:index/volume:Volume": "Volume",
    "databricks:index/grants:Grants": "Grants",
    "databricks:index/clusterPolicy:ClusterPolicy": "ClusterPolicy",
    "databricks:index/permissions:Permissions": "Permissions",
}


def short_type(token: str) -> str:
    if token in SHORT_TYPES:
        return SHORT_TYPES[token]
    return token.rsplit(":", 1)[-1]


def _attributes(inputs: dict[str, Any]) -> dict[str, Any]:
    for key in ("awsAttributes", "azureAttributes", "gcpAttributes"):
        if isinstance(inputs.get(key), dict):
            return inputs[key]
    return {}


def cluster_facts(c: dict[str, Any]) -> str:
    node = c.get("nodeTypeId") or ("pool" if c.get("instancePoolId") else "?")
    if isinstance(c.get("autoscale"), dict):
        size = f"{c['autoscale'].get('minWorkers')}-{c['autoscale'].get('maxWorkers')} workers"
    else:
        size = f"{c.get('numWorkers', 0)} workers"
    attrs = _attributes(c)
    parts = [node, size]
    if attrs.get("availability"):
        parts.append(f"{attrs['availability']} (first_on_demand {attrs.get('firstOnDemand', 1)})")
    if c.get("autoterminationMinutes") is not None:
        parts.append(f"idle {c['autoterminationMinutes']} min")
    return ", ".join(parts)


def facts(resource: dict[str, Any]) -> str:
    """One line that says what a resource is, for a reviewer."""
    kind, inputs = short_type(resource["type"]), resource.get("inputs") or {}
    if kind == "Cluster":
        return cluster_facts(inputs)
    if kind == "Job":
        clusters = [jc.get("newCluster") or {} for jc in inputs.get("jobClusters") or []]
        tasks = inputs.get("tasks") or []
        retries = ", ".join(f"{t.get('taskKey')}: {t.get('maxRetries', 0)} retries" for t in tasks)
        return "; ".join([*(f"job cluster: {cluster_facts(c)}" for c in clusters), retries])
    if kind == "InstancePool":
        attrs = _attributes(inputs)
        availability = attrs.get("availability") or attrs.get("gcpAvailability") or "?"
        return (f"{inputs.get('nodeTypeId')}, {inputs.get('minIdleInstances', 0)} idle, "
                f"max {inputs.get('maxCapacity', 'unlimited')}, {availability}")
    if kind == "Volume":
        return f"/Volumes/{inputs.get('catalogName')}/{inputs.get('schemaName')}/{inputs.get('name')}"
    if kind == "Grants":
        target = next((f"{k} {v}" for k, v in inputs.items() if k != "grants"), "")
        who = "; ".join(f"{g.get('principal')}: {', '.join(g.get('privileges') or [])}" for g in inputs.get("grants") or [])
        return f"{target}: {who}"
    if kind in ("Catalog", "Schema"):
        return str(inputs.get("name", ""))
    if kind == "ClusterPolicy":
        return f"{len(json.loads(inputs.get('definition') or '{}'))} limited attributes"
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
