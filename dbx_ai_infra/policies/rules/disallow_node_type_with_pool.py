"""A pool-backed cluster takes its node type from the pool: node_type_id and instance_pool_id exclude each other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape, is_set
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.rule import Rule

_PAIRS = (("instance_pool_id", "node_type_id"), ("driver_instance_pool_id", "driver_node_type_id"))


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    cluster = view.props
    return [
        f"sets both {pool} and {node} ({cluster[node]}); the API rejects the pair because the pool decides the node "
        f"type. Fix: remove {node} and pick the node type on the pool."
        for pool, node in _PAIRS
        if is_set(cluster.get(pool)) and is_set(cluster.get(node))
    ]


RULE = Rule(
    name="databricks-cluster-disallow-node-type-with-instance-pool",
    order=90,
    description="Clusters on an instance pool must not also set a node type for the same nodes.",
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('node_type_id',),
    remediation="Remove node_type_id (driver_node_type_id) when instance_pool_id (driver_instance_pool_id) is set.",
    severity="medium",
    reads=("instance_pool_id", "node_type_id"),
)
