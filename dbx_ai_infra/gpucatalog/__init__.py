"""GPU node types per cloud (data file ``node_types.yaml``) and GPU memory sizing.

Public API::

    from dbx_ai_infra.gpucatalog import load_catalog, memory_need_gb, pick_node_type

    catalog = load_catalog()
    need = memory_need_gb(7, "fp16", "inference")      # 16.8 GB
    node = pick_node_type(catalog, "aws", "a10g", need)  # g5.xlarge
"""

from .catalog import CLOUDS, GPU_FAMILIES, Catalog, NodeType, load_catalog
from .sizing import (
    BYTES_PER_PARAM,
    INFERENCE_OVERHEAD,
    Estimate,
    NodeChoice,
    SizingError,
    choose_node,
    choose_sharded_node,
    estimate,
    memory_need_gb,
    pick_node_type,
)

__all__ = [
    "BYTES_PER_PARAM",
    "CLOUDS",
    "GPU_FAMILIES",
    "INFERENCE_OVERHEAD",
    "Catalog",
    "Estimate",
    "NodeChoice",
    "NodeType",
    "SizingError",
    "choose_node",
    "choose_sharded_node",
    "estimate",
    "load_catalog",
    "memory_need_gb",
    "pick_node_type",
]
