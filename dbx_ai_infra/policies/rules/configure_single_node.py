"""A cluster with no workers must be configured as a single-node cluster."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLUSTER,
    JOB,
    SINGLE_NODE_PROFILE,
    SINGLE_NODE_PROFILE_KEY,
    SINGLE_NODE_TAGS,
)
from dbx_ai_infra.policies.rule import Rule


def missing_settings(view: ClusterShape) -> list[str]:
    """The legacy single-node settings a cluster lacks (empty when all three are there)."""
    missing = []
    if not view.has_single_node_profile:
        missing.append(f"spark_conf {SINGLE_NODE_PROFILE_KEY}={SINGLE_NODE_PROFILE}")
    master = view.spark_conf.get("spark.master")
    if not (isinstance(master, str) and master.startswith("local[")):
        missing.append("spark_conf spark.master=local[*]")
    for tag, value in SINGLE_NODE_TAGS.items():
        if view.tags.get(tag) != value:
            missing.append(f"custom_tags {tag}={value}")
    return missing


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    if not view.is_single_node:
        return []
    cluster = view.props
    if cluster.get("is_single_node") is True and cluster.get("kind") == "CLASSIC_PREVIEW":
        return []  # the modern form: Databricks sets the profile, the master and the tag itself
    missing = missing_settings(view)
    if not missing:
        return []
    if cluster.get("is_single_node") is True:
        return [f"is_single_node is set without kind CLASSIC_PREVIEW, and the legacy settings are incomplete "
                f"(missing {', '.join(missing)}). Fix: set kind CLASSIC_PREVIEW, or add {', '.join(missing)}."]
    spark = [m for m in missing if m.startswith("spark_conf")]
    why = ("without them Spark waits for workers that never come" if spark else
           "without it Databricks does not treat the cluster as a single node (the tag marks it, and cluster "
           "policies for single nodes match on it)")
    return [f"cluster has no workers (num_workers 0, no autoscale) but is not configured as single node: missing "
            f"{', '.join(missing)}; {why}. "
            f"Fix: set is_single_node true with kind CLASSIC_PREVIEW (the current form: Databricks sets them itself; "
            f"provider docs, resources/cluster.md), or add {', '.join(missing)} (the legacy form, without kind)."]


RULE = Rule(
    name="databricks-cluster-configure-single-node",
    order=110,
    description=("Clusters without workers must be configured as single-node clusters: with is_single_node and kind "
                 "CLASSIC_PREVIEW, or (the legacy form) with the singleNode profile, a local Spark master and the "
                 "ResourceClass tag."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('node_type_id',),
    remediation=("Set is_single_node true with kind CLASSIC_PREVIEW, or (the legacy form, without kind) spark_conf "
                 "spark.databricks.cluster.profile=singleNode and spark.master=local[*] plus custom tag "
                 "ResourceClass=SingleNode."),
    severity="medium",
    reads=("num_workers", "autoscale", "is_single_node", "spark_conf", "custom_tags"),
    # an unknown worker count reads as 0 workers: such a cluster is not judged either
    concerns=lambda view: view.is_single_node,
)
