"""A single node has few cores: hundreds of shuffle partitions only add scheduling overhead."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from dbx_ai_infra.dbxtypes.shape import ClusterShape, as_number
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB, MAX_SINGLE_NODE_SHUFFLE_PARTITIONS, SHUFFLE_PARTITIONS_KEY
from dbx_ai_infra.policies.rule import Rule, Thresholds


def check(view: ClusterShape, config: Settings) -> list[str]:
    if not view.is_single_node:
        return []
    limit = config.max_single_node_shuffle_partitions
    value = as_number(view.spark_conf.get(SHUFFLE_PARTITIONS_KEY))  # "auto" and absent: no verdict
    if value is None or value <= limit:
        return []
    key = SHUFFLE_PARTITIONS_KEY
    return [f"single-node cluster sets {key} to {value}, above {limit}; a single machine gains nothing from that "
            f"many partitions. Fix: set {key} to at most {limit} (about the driver's core count)."]


class Settings(Thresholds):
    """Thresholds of databricks-cluster-configure-single-node-shuffle-partitions."""

    max_single_node_shuffle_partitions: Annotated[int, Field(
        ge=1, description="Largest spark.sql.shuffle.partitions advised on a single-node cluster.")] \
        = MAX_SINGLE_NODE_SHUFFLE_PARTITIONS


RULE = Rule(
    name="databricks-cluster-configure-single-node-shuffle-partitions",
    order=210,
    description="Single-node clusters should not set spark.sql.shuffle.partitions above the configured limit.",
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('shuffle_partitions',),
    remediation="Set spark.sql.shuffle.partitions near the driver's core count on single-node clusters.",
    severity="low",
    settings=Settings,
)
