"""The node type must hold the model: compare its GPU memory with the spec's estimate (tag gpu_memory_need_gb)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape, as_number, is_set
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, GPU_MEMORY_NEED_TAG, JOB
from dbx_ai_infra.policies.common import catalog
from dbx_ai_infra.policies.rule import Rule


def _fmt(x: float) -> str:
    return f"{x:g}"


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    raw = view.tags.get(GPU_MEMORY_NEED_TAG)
    if not is_set(raw):
        return []
    need = as_number(raw)
    if need is None:
        return [f"custom tag {GPU_MEMORY_NEED_TAG} is {raw!r}, not a number of GB. Fix: set {GPU_MEMORY_NEED_TAG} "
                f"to the estimated GPU memory in GB, e.g. '40'."]
    node_type = view.driver_node_type if view.is_single_node else view.node_type_id
    if node_type is None:
        return []  # pool-backed: the node type is the pool's
    node = catalog().get(node_type)
    if node is not None:
        have = node.total_gpu_memory_gb
        detail = f"{node.gpu_count} x {_fmt(node.gpu_memory_gb)} GB {node.gpu}"
    elif catalog().is_gpu_node(node_type) is False:
        have, detail = 0.0, "no GPU"
    else:
        return []  # unknown node type: no verdict
    if have >= need:
        return []
    return [f"node type {node_type} has {_fmt(have)} GB of GPU memory ({detail}) but the model needs about "
            f"{_fmt(need)} GB ({GPU_MEMORY_NEED_TAG}). Fix: choose a node type with at least {_fmt(need)} GB of GPU "
            f"memory, or a smaller or quantised model."]


RULE = Rule(
    name="databricks-cluster-require-gpu-memory-fit",
    order=230,
    description=("Node types should have at least the GPU memory the model is estimated to need, given by the custom "
                 "tag gpu_memory_need_gb."),
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('node_type_id', 'model', 'gpu_family'),
    remediation=("Pick a node type whose total GPU memory covers gpu_memory_need_gb, or shrink the model "
                 "(quantisation)."),
    severity="medium",
)
