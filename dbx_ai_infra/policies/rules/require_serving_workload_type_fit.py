"""A serving endpoint's GPU workload type must be offered on its cloud and hold the model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.endpoint import endpoint_tags, served_entities
from dbx_ai_infra.dbxtypes.shape import as_number
from dbx_ai_infra.dbxtypes.vocabulary import CLOUD_TAG, GPU_MEMORY_NEED_TAG, MODEL_SERVING_ENDPOINT
from dbx_ai_infra.gpucatalog.serving import load_serving_catalog
from dbx_ai_infra.policies.rule import ResourceView, Rule


def check(view: ResourceView, config: Mapping[str, Any]) -> list[str]:
    props = view.props
    catalog = load_serving_catalog()
    tags = endpoint_tags(props)
    cloud, need = tags.get(CLOUD_TAG), as_number(tags.get(GPU_MEMORY_NEED_TAG))
    out = []
    for i, entity in enumerate(served_entities(props)):
        wtype = entity.get("workload_type")
        if not isinstance(wtype, str) or not wtype.startswith(("GPU", "MULTIGPU")):
            continue
        offered = catalog.of_cloud(cloud) if cloud else ()
        chosen = next((t for t in offered if t.workload_type == wtype), None)
        where = f"served_entities[{i}]"
        if cloud and chosen is None:
            names = ", ".join(t.workload_type for t in offered) or "none"
            out.append(f"{where}: workload type {wtype} is not offered by Model Serving on {cloud}. Fix: use one of "
                       f"{names}.")
        elif chosen is not None and need is not None and chosen.gpu_memory_gb < need:
            fits = ", ".join(t.workload_type for t in offered if t.gpu_memory_gb >= need) or "none"
            out.append(f"{where}: workload type {wtype} has {chosen.gpu_memory_gb:g} GB of GPU memory; the model "
                       f"needs {need:g} GB ({GPU_MEMORY_NEED_TAG}). Fix: use one that fits: {fits}.")
    return out


RULE = Rule(
    name="databricks-serving-require-fitting-workload-type",
    order=180,
    description="GPU serving endpoints must use a workload type their cloud offers, with at least the GPU memory "
                "the model needs (the endpoint's tag gpu_memory_need_gb).",
    enforcement="mandatory",
    resource_types=(MODEL_SERVING_ENDPOINT,),
    check=check,
    takes=(ResourceView,),
    reads=("config.served_entities.workload_type",),
    stack_fields=("workload_type", "model"),
    remediation="Pick the smallest workload type of the cloud whose total GPU memory holds the model, or leave "
                "workload_type out and let the stack size it.",
)
