"""Node types that are retired, or being retired, should not be used for new clusters."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape, PoolShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, INSTANCE_POOL, JOB
from dbx_ai_infra.policies.common import catalog
from dbx_ai_infra.policies.rule import Rule


def check(view: ClusterShape | PoolShape, config: Mapping[str, Any]) -> list[str]:
    node_types = view.node_type_ids
    out = []
    for node_type in node_types:
        node = catalog().get(node_type)
        if node is None:
            continue
        if node.retired:
            why = f"was retired on {node.retired_on}"
        elif node.deprecated:
            why = f"is being retired ({node.deprecated.rstrip('.')})"
        else:
            continue
        out.append(f"node type {node_type} ({node.gpu}) {why}. Fix: move to {_instead(node.cloud, node.family)}.")
    return out


@functools.lru_cache(maxsize=64)
def _instead(cloud: str, family: str) -> str:
    """What to move to from a retiring node type of ``family`` (the same for every cluster on it)."""
    current = [n.node_type_id for n in catalog().family_nodes(cloud, family) if not n.deprecated]
    families = [f for f in catalog().families(cloud)
                if any(not n.deprecated for n in catalog().family_nodes(cloud, f))]
    return (f"a current {family} node type such as {current[0]}" if current
            else f"a current GPU family on {cloud} ({', '.join(families)})")


RULE = Rule(
    name="databricks-cluster-avoid-retiring-node-types",
    order=240,
    description="Clusters and pools should not use node types that are retired or being retired (node catalog).",
    details=("The node catalog (`dbx_ai_infra/gpucatalog/node_types.yaml`) marks a node type `retired_on` a date or "
             "`deprecated` with the notice and its source (Azure NCv3, AWS P3)."),
    enforcement="advisory",
    resource_types=(CLUSTER, JOB, INSTANCE_POOL),
    check=check,
    takes=(ClusterShape, PoolShape),
    stack_fields=('node_type_id', 'gpu_family'),
    remediation="Move to a current node type of the family, or to a current GPU family of the cloud.",
    severity="medium",
)
