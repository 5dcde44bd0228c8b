"""Multi-node training wants a high-bandwidth interconnect between nodes.

The seed on cluster configuration contrasts p4d's 400 Gbps (EFA) with nodes built for single-node work: gradients are
exchanged every step, so training across several g4dn, g5, g6, NVads A10 or g2 nodes (10 to 100 Gbps, no GPU
interconnect) spends its time on the network. Bandwidths are the node catalog's ``network_gbps`` and
``interconnect_gbps`` (AWS EFA, Azure InfiniBand, GCP GPUDirect-TCPX), each with its source.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

from pydantic import Field

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.common import catalog
from dbx_ai_infra.policies.rule import Rule, Thresholds

DEFAULT_MIN_INTERCONNECT_GBPS = 200
DEFAULT_MIN_TRAINING_NODES = 2


def _bandwidth(node: Any) -> float | None:
    figures = [f for f in (node.network_gbps, node.interconnect_gbps) if f is not None]
    return max(figures) if figures else None


def check(view: ClusterShape, config: Settings) -> list[str]:
    if view.role != "training" or not view.node_type_id:
        return []
    workers = view.max_workers
    if workers < config.min_training_nodes:
        return []
    node = catalog().get(view.node_type_id)
    if node is None or node.interconnect_gbps is not None:
        return []
    bandwidth = _bandwidth(node)
    limit = config.min_interconnect_gbps
    if bandwidth is not None and bandwidth >= limit:
        return []
    shown = "an unknown bandwidth" if bandwidth is None else f"{bandwidth:g} Gbps"
    return [f"{view.role_subject()} runs on {workers:g} workers of {node.node_type_id} ({shown}, no GPU "
            f"interconnect): every step exchanges gradients over the network, so adding nodes scales poorly. Fix: use "
            f"{_suggestion(node.node_type_id, limit)}."]


@functools.lru_cache(maxsize=512)
def _suggestion(node_type_id: str, limit: float) -> str:
    """What to train on instead of ``node_type_id`` (a catalog node): the same for every cluster of that node type,
    so it is worked out once."""
    node = catalog().get(node_type_id)
    assert node is not None  # check() looked it up
    family = catalog().family_nodes(node.cloud, node.family)
    larger = [n for n in family if n.gpu_count > node.gpu_count and not n.deprecated]
    fast = sorted((n for n in catalog().nodes if n.cloud == node.cloud and not n.retired and not n.deprecated
                   and (_bandwidth(n) or 0) >= limit and n.interconnect_gbps is not None),
                  key=lambda n: n.usd_per_hour_on_demand or float("inf"))
    ideas = []
    if larger:
        biggest = larger[-1]
        ideas.append(f"fewer, larger nodes ({biggest.node_type_id}: {biggest.gpu_count} GPUs on one node)")
    if fast:
        ideas.append(f"a family with a GPU interconnect ({fast[0].family}: {fast[0].node_type_id}, "
                     f"{_bandwidth(fast[0]):g} Gbps)")
    return " or ".join(ideas) or "a node type with a GPU interconnect"


class Settings(Thresholds):
    """Thresholds of databricks-cluster-prefer-interconnect-for-multi-node-training."""

    min_interconnect_gbps: Annotated[int, Field(
        ge=1, description="Bandwidth below which multi-node training is flagged, Gbps.",
    )] = DEFAULT_MIN_INTERCONNECT_GBPS
    min_training_nodes: Annotated[int, Field(
        ge=2, description="Workers from which a training cluster counts as multi-node.",
    )] = DEFAULT_MIN_TRAINING_NODES


RULE = Rule(
    name="databricks-cluster-prefer-interconnect-for-multi-node-training",
    order=250,
    description=("Training across several nodes should use node types with a GPU interconnect (EFA, InfiniBand, "
                 "GPUDirect) of at least min_interconnect_gbps."),
    details="The message proposes fewer, larger nodes or an A100/H100 family.",
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('gpu_family', 'node_type_id', 'num_workers'),
    remediation="Train on fewer, larger nodes, or on a family with a GPU interconnect (A100/H100 nodes).",
    severity="medium",
    settings=Settings,
)
