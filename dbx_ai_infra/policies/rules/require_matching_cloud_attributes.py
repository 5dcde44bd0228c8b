"""The cloud attributes block must belong to the node type's cloud, and there must be at most one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape, PoolShape
from dbx_ai_infra.dbxtypes.vocabulary import ATTRIBUTES_BLOCK, CLOUD_NAMES, CLUSTER, INSTANCE_POOL, JOB
from dbx_ai_infra.policies.common import catalog
from dbx_ai_infra.policies.rule import Rule


def check(view: ClusterShape | PoolShape, config: Mapping[str, Any]) -> list[str]:
    node_types = view.node_type_ids
    blocks = view.blocks
    out = []
    if len(blocks) > 1:
        names = " and ".join(ATTRIBUTES_BLOCK[c] for c in blocks)
        out.append(f"sets {names}; a workspace runs on one cloud. Fix: keep only the block of the workspace's cloud.")
    node_clouds: dict[str, list[str]] = {}
    for node_type in node_types:
        cloud = catalog().cloud_of(node_type)
        if cloud:
            node_clouds.setdefault(cloud, []).append(node_type)
    if len(node_clouds) > 1:
        described = "; ".join(f"{', '.join(ids)} ({CLOUD_NAMES[c]})" for c, ids in node_clouds.items())
        out.append(f"node types come from different clouds: {described}. "
                   f"Fix: use node types of the workspace's cloud for both workers and driver.")
    if node_clouds:
        for cloud in blocks:
            if cloud not in node_clouds:
                ids = ", ".join(i for ids in node_clouds.values() for i in ids)
                owner = "/".join(CLOUD_NAMES[c] for c in node_clouds)
                expected = " or ".join(ATTRIBUTES_BLOCK[c] for c in node_clouds)
                out.append(f"sets {ATTRIBUTES_BLOCK[cloud]} but node type {ids} belongs to {owner}, so the attributes "
                           f"are ignored or rejected. Fix: replace {ATTRIBUTES_BLOCK[cloud]} with {expected}.")
    return out


RULE = Rule(
    name="databricks-cluster-require-matching-cloud-attributes",
    order=60,
    description=("Clusters and instance pools must set at most one cloud attributes block, the one of their node "
                 "type's cloud."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB, INSTANCE_POOL),
    check=check,
    takes=(ClusterShape, PoolShape),
    stack_fields=('node_type_id', 'cloud'),
    remediation="Keep only aws_attributes, azure_attributes or gcp_attributes, matching the node type's cloud.",
    severity="high",
)
