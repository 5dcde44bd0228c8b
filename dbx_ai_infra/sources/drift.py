"""Drift between a stack and a workspace: what the stack decides that the workspace runs differently.

The stack's clusters, jobs and instance pools (its plan, run offline) are matched to the workspace's (a live read or
an export) by name: a cluster's ``cluster_name``, a job's ``name``, a pool's ``instance_pool_name``, each of which
the components set from the stack and resource name (``prod-inference``). Then, per matched resource, the fields the
stack decides are compared through the one reading of a cluster (`dbx_ai_infra.dbxtypes.shape`): node types, size or
autoscale range, availability, ``first_on_demand``, runtime, the stack's tags, and whether a cluster policy applies. A
job's job clusters are compared by ``job_cluster_key``.

Findings are `Violation`s (advisory), so every output format carries them:

- ``drift-changed``: one per field that differs (stack value, workspace value);
- ``drift-missing``: a stack resource the workspace does not have (not deployed, or renamed);
- ``drift-unowned-gpu``: GPU compute in the workspace that no stack resource owns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dbx_ai_infra.dbxtypes.plan import Plan, Violation
from dbx_ai_infra.dbxtypes.shape import ClusterShape, pool_shape, shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, INSTANCE_POOL, JOB
from dbx_ai_infra.policies.common import gpu_node, node_cloud

CHANGED, MISSING, UNOWNED = "drift-changed", "drift-missing", "drift-unowned-gpu"
#: The drift findings as rules: (id, description, remediation), for SARIF and the README.
DRIFT_RULES: tuple[tuple[str, str, str], ...] = (
    (CHANGED, "A field the stack decides (node type, size, availability, first_on_demand, runtime, tags, policy) "
              "differs in the workspace.",
     "Run `pulumi up` to restore the stack's value, or write what runs into the stack and preview the change."),
    (MISSING, "A cluster, job or instance pool of the stack is not in the workspace.",
     "Deploy the stack (`pulumi up`), or remove the resource from the stack."),
    (UNOWNED, "GPU compute in the workspace that no stack resource owns.",
     "Bring it under a stack (pulumi import) or give it an owner; at least tag it workload and cost_center."),
)
#: Stack fields behind each kind of drift, for the finding's line (see `dbx_ai_infra.reports.located.violation_lines`).
DRIFT_STACK_FIELDS: Mapping[str, tuple[str, ...]] = {
    CHANGED: ("node_type_id", "num_workers", "min_workers", "max_workers", "spot", "spot_above_base",
              "first_on_demand", "runtime", "tags"),
    MISSING: (),
    UNOWNED: (),
}
_NAME_KEYS = {CLUSTER: "cluster_name", JOB: "name", INSTANCE_POOL: "instance_pool_name"}
_KEY = re.compile(r"\[([^\]]+)\]")


def _size(shape: ClusterShape) -> str:
    if shape.autoscale is not None:
        return f"autoscale {_num(shape.autoscale[0])}-{_num(shape.autoscale[1])}"
    return f"num_workers {_num(shape.num_workers)}"


def _num(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _cluster_fields(shape: ClusterShape) -> dict[str, str]:
    """What the stack decides of a cluster definition, as comparable text."""
    cloud = shape.cloud or "aws"
    fields = {
        "node_type_id": str(shape.node_type_id or "(pool)"),
        "size": _size(shape),
        "availability": shape.availability_in(cloud),
        "first_on_demand": _num(shape.first_on_demand_in(cloud)),
        "spark_version": str(shape.spark_version),
        "policy": "set" if shape.props.get("policy_id") else "none",
    }
    if shape.driver_node_type_id:
        fields["driver_node_type_id"] = shape.driver_node_type_id
    return fields


def _compare(mine: Mapping[str, str], theirs: Mapping[str, str]) -> list[tuple[str, str, str]]:
    return [(k, v, theirs.get(k, "(none)")) for k, v in mine.items() if theirs.get(k, "(none)") != v]


def _tag_changes(stack_tags: Mapping[str, Any], workspace_tags: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    return [(f"tags.{k}", str(v), str(workspace_tags.get(k, "(none)"))) for k, v in stack_tags.items()
            if str(workspace_tags.get(k)) != str(v)]


def _by_key(shapes: Iterable[ClusterShape]) -> dict[str, ClusterShape]:
    """A job's cluster definitions by their key (``job_clusters[train]`` and ``jobClusters[train]`` alike)."""
    out = {}
    for shape in shapes:
        kind = "tasks" if shape.label.startswith("tasks") else "job_clusters"
        match = _KEY.search(shape.label)
        out[f"{kind}[{match.group(1)}]" if match else shape.label] = shape
    return out


def _differences(resource_type: str, stack_props: Mapping[str, Any], ws_props: Mapping[str, Any]
                 ) -> list[tuple[str, str, str]]:
    if resource_type == INSTANCE_POOL:
        mine, theirs = pool_shape(stack_props), pool_shape(ws_props, source="api")
        keys = ("node_type_id", "min_idle_instances", "max_capacity", "idle_instance_autotermination_minutes")
        a = {k: _num(mine.props.get(k)) for k in keys if mine.props.get(k) is not None}
        b = {k: _num(theirs.props.get(k)) for k in keys if theirs.props.get(k) is not None}
        return _compare(a, b) + _tag_changes(mine.custom_tags, theirs.custom_tags)
    stack_shapes = shapes_of_resource(resource_type, stack_props, "pulumi")
    ws_shapes = shapes_of_resource(resource_type, ws_props, "api")
    if resource_type == CLUSTER:
        (mine_c,), (theirs_c,) = stack_shapes, ws_shapes
        return (_compare(_cluster_fields(mine_c), _cluster_fields(theirs_c))
                + _tag_changes(mine_c.tags, theirs_c.tags))
    out: list[tuple[str, str, str]] = []
    theirs_by_key = _by_key(ws_shapes)
    for where, mine_s in _by_key(stack_shapes).items():
        other = theirs_by_key.get(where)
        if other is None:
            out.append((where, "a job cluster", "(none)"))
            continue
        out += [(f"{where}.{field}", a, b) for field, a, b in
                _compare(_cluster_fields(mine_s), _cluster_fields(other)) + _tag_changes(mine_s.tags, other.tags)]
    return out


def drift(plan: Plan, items: Sequence[Any]) -> list[Violation]:
    """Drift findings of a stack's plan against a workspace's export items
    (`dbx_ai_infra.policies.items.ExportItem`)."""
    workspace: dict[tuple[str, str], Any] = {}
    for item in items:
        name = item.props.get(_NAME_KEYS.get(item.resource_type, ""))
        if name:
            workspace.setdefault((item.resource_type, str(name)), item)
    owned: set[str] = set()
    out: list[Violation] = []
    for res in plan.resources:
        if res.type not in _NAME_KEYS:
            continue
        props = {**res.inputs}
        name = str(props.get({CLUSTER: "clusterName", JOB: "name", INSTANCE_POOL: "instancePoolName"}[res.type])
                   or res.name)
        match = workspace.get((res.type, name))
        if match is None:
            out.append(Violation(policy=MISSING, enforcement="advisory", urn=res.urn, resource_name=res.name,
                                 message=f"{name} is not in the workspace. Fix: deploy the stack (pulumi up), or "
                                         f"remove it from the stack."))
            continue
        owned.add(match.urn)
        for field, mine, theirs in _differences(res.type, props, match.props):
            out.append(Violation(policy=CHANGED, enforcement="advisory", urn=res.urn, resource_name=res.name,
                                 message=f"{field}: the stack says {mine}, the workspace runs {theirs} ({match.urn}). "
                                         f"Fix: run pulumi up to restore it, or write {theirs} into the stack."))
    for item in items:
        if item.urn in owned or item.resource_type not in (CLUSTER, JOB):
            continue
        shapes = shapes_of_resource(item.resource_type, item.props, "api", node_cloud=node_cloud, gpu_node=gpu_node)
        gpu = [s for s in shapes if s.gpu]
        if gpu:
            what = ", ".join(sorted({str(s.node_type_id or s.instance_pool_id) for s in gpu}))
            out.append(Violation(policy=UNOWNED, enforcement="advisory", urn=item.urn, resource_name=item.name,
                                 message=f"GPU compute ({what}) that no resource of stack {plan.stack} owns. Fix: "
                                         f"bring it under a stack (pulumi import) or give it an owner."))
    return out
