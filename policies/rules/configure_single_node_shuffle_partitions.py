"""A single node has few cores: hundreds of shuffle partitions only add scheduling overhead."""

from __future__ import annotations

from typing import Any, Mapping

from policies.common import as_number, is_single_node, spark_conf
from policies.rule import CLUSTER, JOB, ClusterView, Rule, View

DEFAULT_MAX_SINGLE_NODE_SHUFFLE_PARTITIONS = 16
KEY = "spark.sql.shuffle.partitions"


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    if not isinstance(view, ClusterView) or not is_single_node(view.cluster):
        return []
    limit = config.get("max_single_node_shuffle_partitions", DEFAULT_MAX_SINGLE_NODE_SHUFFLE_PARTITIONS)
    value = as_number(spark_conf(view.cluster).get(KEY))  # "auto" and absent: no verdict
    if value is None or value <= limit:
        return []
    return [f"single-node cluster sets {KEY} to {value}, above {limit}; a single machine gains nothing from that "
            f"many partitions. Fix: set {KEY} to at most {limit} (about the driver's core count)."]


RULE = Rule(
    name="databricks-cluster-configure-single-node-shuffle-partitions",
    description="Single-node clusters should not set spark.sql.shuffle.partitions above the configured limit.",
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    remediation="Set spark.sql.shuffle.partitions near the driver's core count on single-node clusters.",
    severity="low",
    thresholds={"max_single_node_shuffle_partitions": DEFAULT_MAX_SINGLE_NODE_SHUFFLE_PARTITIONS},
    threshold_schema={"max_single_node_shuffle_partitions": {
        "type": "integer", "minimum": 1,
        "description": "Largest spark.sql.shuffle.partitions advised on a single-node cluster."}},
)
