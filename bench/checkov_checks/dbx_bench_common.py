"""Readers shared by the custom checks (checkov also imports this file as a check module; it registers nothing).

checkov hands a check the resource's HCL as parsed by python-hcl2: every attribute value is wrapped in a list
(``{"num_workers": [4]}``), nested blocks are lists of such dicts (``{"autoscale": [{"min_workers": [1]}]}``) and
maps are a one-item list holding the dict (``{"custom_tags": [{"workload": "genai"}]}``).
"""

from __future__ import annotations

import functools
import json
import os
import re
from typing import Any

BLOCKS = {"aws": "aws_attributes", "azure": "azure_attributes", "gcp": "gcp_attributes"}
ON_DEMAND = {"aws": "ON_DEMAND", "azure": "ON_DEMAND_AZURE", "gcp": "ON_DEMAND_GCP"}
SPOT_ONLY = {"aws": "SPOT", "azure": "SPOT_AZURE", "gcp": "PREEMPTIBLE_GCP"}
DEFAULT_AVAILABILITY = {"aws": "SPOT_WITH_FALLBACK", "azure": "SPOT_WITH_FALLBACK_AZURE",
                        "gcp": "PREEMPTIBLE_WITH_FALLBACK_GCP"}
ROLES = ("training", "inference", "interactive")


def value(conf: dict[str, Any], key: str, default: Any = None) -> Any:
    """An attribute's value, unwrapped from python-hcl2's one-item list."""
    raw = conf.get(key, None)
    if isinstance(raw, list):
        return raw[0] if raw else default
    return default if raw is None else raw


def block(conf: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The first nested block ``key { ... }``, or None."""
    raw = conf.get(key)
    if isinstance(raw, list) and raw and isinstance(raw[0], dict):
        return raw[0]
    return raw if isinstance(raw, dict) else None


def mapping(conf: dict[str, Any], key: str) -> dict[str, Any]:
    """A map attribute (``custom_tags = {...}``) as a plain dict, with unwrapped values and unquoted keys."""
    raw = value(conf, key)
    if not isinstance(raw, dict):
        return {}
    out = {}
    for k, v in raw.items():
        if isinstance(v, list) and len(v) == 1:
            v = v[0]
        out[str(k).strip('"')] = v
    return out


def number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return v
    try:
        return float(str(v))
    except ValueError:
        return None


def is_set(v: Any) -> bool:
    return v is not None and v != ""


def cloud_blocks(conf: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {cloud: block(conf, key) or {} for cloud, key in BLOCKS.items() if key in conf}


def node_types(conf: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("node_type_id", "driver_node_type_id"):
        v = value(conf, key)
        if isinstance(v, str) and v and v not in out:
            out.append(v)
    return out


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    path = os.environ.get("BENCH_NODE_TYPES")
    if path and os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return {"cloud": data.get("cloud", {}), "gpu": set(data.get("gpu", [])), "cpu": set(data.get("cpu", []))}
    return {"cloud": {}, "gpu": set(), "cpu": set()}


_GPU_PATTERN = re.compile(r"^(?:g4dn|g5|g6e?|p3dn|p3|p4de?|p5)\.|^Standard_N[CDV]|^(?:a2|a3|g2)-")


def cloud_of(node_type: str) -> str | None:
    known = _table()["cloud"].get(node_type)
    if known:
        return known
    if node_type.lower().startswith("standard_"):
        return "azure"
    if re.match(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$", node_type):
        return "aws"
    if re.match(r"^[a-z]\d[a-z]?-[a-z]+", node_type):
        return "gcp"
    return None


def is_gpu(node_type: str) -> bool | None:
    """True for a GPU node type, False for a CPU one, None when unknown."""
    table = _table()
    if node_type in table["gpu"]:
        return True
    if node_type in table["cpu"]:
        return False
    if table["gpu"] or table["cpu"]:
        return None
    return bool(_GPU_PATTERN.search(node_type))


def min_workers(conf: dict[str, Any]) -> float:
    scale = block(conf, "autoscale")
    if scale is not None:
        return number(value(scale, "min_workers")) or 0
    return number(value(conf, "num_workers")) or 0


def is_single_node(conf: dict[str, Any]) -> bool:
    if value(conf, "is_single_node") is True:
        return True
    return block(conf, "autoscale") is None and (number(value(conf, "num_workers")) or 0) == 0


def role(conf: dict[str, Any]) -> str:
    """training | inference | interactive | unknown: tag workload_type, then tag workload, then the shape."""
    tags = mapping(conf, "custom_tags")
    for key in ("workload_type", "workload"):
        v = tags.get(key)
        if isinstance(v, str) and v.strip().lower() in ROLES:
            return v.strip().lower()
    if block(conf, "autoscale") is not None:
        return "inference"
    profile = mapping(conf, "spark_conf").get("spark.databricks.cluster.profile")
    no_workers = (number(value(conf, "num_workers")) or 0) == 0
    if value(conf, "is_single_node") is True or (no_workers and profile == "singleNode"):
        return "interactive"
    return "unknown"


def effective_blocks(conf: dict[str, Any]) -> dict[str, dict[str, Any]]:
    blocks = cloud_blocks(conf)
    if blocks:
        return blocks
    for node in node_types(conf):
        cloud = cloud_of(node)
        if cloud:
            return {cloud: {}}
    return {"aws": {}}


def availability(blk: dict[str, Any], cloud: str) -> str:
    v = value(blk, "availability")
    return str(v) if is_set(v) else DEFAULT_AVAILABILITY[cloud]
