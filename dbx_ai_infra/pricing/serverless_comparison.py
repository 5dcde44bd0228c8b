"""Priced advice: a training workload's classic job cluster against serverless GPU for the same GPUs and hours, both
ways, like the cluster-vs-endpoint advice.

- A training job on a classic job cluster: what serverless GPU would cost for its workers' GPUs (the training GPUs;
  the driver coordinates), on the accelerator of the same GPU (an H100 node on ``GPU_8xH100``, or on ``GPU_1xH100``
  when the GPUs are fewer than a node; an A10 or A10G on ``GPU_1xA10``), rounded up to whole accelerator nodes, for
  the job's hours.
- A training job on serverless GPU: what a classic job cluster would cost for the same GPUs: workers of the node
  type of the cloud with that GPU and that many GPUs a node (the node catalog), spot workers with an on-demand CPU
  driver (the classic training defaults for a job that runs the project's train.py: its ranks run on the workers,
  none on the driver; issue 52 item 10), for the same hours.

Both sides are priced by the cost model itself (a resource made for the comparison, priced alone with the same price
book and usage assumptions), so the figures are the ones ``cost`` would show. A side that cannot be priced (an
accelerator or node type without a public rate) gives no advice; nothing is compared to $0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.clouds import profile
from dbx_ai_infra.dbxtypes.plan import Advice, Plan, Resource
from dbx_ai_infra.dbxtypes.serverless import serverless_gpu_tasks
from dbx_ai_infra.dbxtypes.shape import pool_shape, shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import GPUS_ARG, INSTANCE_POOL, JOB, ROLE_TAG, WORKLOAD_TAG, workload_key
from dbx_ai_infra.gpucatalog import load_catalog
from dbx_ai_infra.gpucatalog.accelerators import ACCELERATORS, SERVERLESS_GPU_CLOUDS

from .book import PriceBook
from .comparisons import _monthly, comparison
from .plan_cost import price_plan

JOB_CLUSTER_VS_SERVERLESS_GPU = "job-cluster-vs-serverless-gpu"
SERVERLESS_GPU_VS_JOB_CLUSTER = "serverless-gpu-vs-job-cluster"

#: Node-catalog GPUs that run on an accelerator of another name (the A10G of AWS's g5 nodes is an A10 part).
_SAME_GPU = {"NVIDIA A10G": "NVIDIA A10"}


def _accelerator_for(gpu: str, memory_gb: float, gpus: int, catalog: Any) -> tuple[str, int, bool] | None:
    """(accelerator, GPUs rounded up to its whole nodes, whether it is the same GPU) for ``gpus`` GPUs of node-catalog
    GPU ``gpu``: an accelerator of that GPU, else of the GPU with the least memory at least ``memory_gb`` (an A100
    runs on an H100: serverless GPU has no A100); the largest node the GPUs fill, else the smallest. None: none."""
    same = _SAME_GPU.get(gpu, gpu)
    fits = [a for a in ACCELERATORS.values() if a.catalog_gpu == same]
    if not fits:
        larger = [(m, a) for a in ACCELERATORS.values()
                  if (m := a.gpu_memory_gb(catalog)) is not None and m >= memory_gb]
        least = min((m for m, _ in larger), default=None)
        fits = [a for m, a in larger if m == least]
    if not fits:
        return None
    fits.sort(key=lambda a: -a.gpus_per_node)
    acc = next((a for a in fits if gpus >= a.gpus_per_node), fits[-1])
    return acc.name, math.ceil(gpus / acc.gpus_per_node) * acc.gpus_per_node, acc.catalog_gpu == same


def _serverless_job(resource: Resource, accelerator: str, gpus: int) -> Resource:
    """A serverless GPU job like ``resource`` (its name and tags) on ``gpus`` GPUs of ``accelerator``."""
    tags = dict(resource.inputs.get("tags") or {})
    inputs = {"name": resource.inputs.get("name"), "tags": tags, "tasks": [{
        "task_key": "train", "compute": {"hardware_accelerator": accelerator},
        "spark_python_task": {"python_file": "train.py", "parameters": [GPUS_ARG, str(gpus)]}}]}
    return resource.model_copy(update={"inputs": inputs})


def _classic_job(resource: Resource, node_type_id: str, workers: int, cloud: str, driver: str) -> Resource:
    """A job like ``resource`` on a classic job cluster of ``workers`` spot workers of ``node_type_id`` and an
    on-demand driver of node type ``driver``."""
    rules = profile(cloud)
    tags = dict(resource.inputs.get("tags") or {})
    cluster: dict[str, Any] = {"node_type_id": node_type_id, "driver_node_type_id": driver,
                               "num_workers": workers, "custom_tags": tags,
                               rules.attributes_block: {"availability": rules.spot_with_fallback,
                                                        "first_on_demand": 1}}
    inputs = {"name": resource.inputs.get("name"), "tags": tags,
              "job_clusters": [{"job_cluster_key": "train", "new_cluster": cluster}],
              "tasks": [{"task_key": "train", "job_cluster_key": "train"}]}
    return resource.model_copy(update={"inputs": inputs})


def _workload_key(resource: Resource) -> str:
    """The stack key of the job's workload (its workload tag; ``training`` without one)."""
    return workload_key(str((resource.inputs.get("tags") or {}).get(WORKLOAD_TAG) or "training"))


def pool_node_types(plan: Plan) -> dict[str, str]:
    """The node type of each instance pool of the plan, by the pool's id (what a cluster's ``instance_pool_id``
    names)."""
    return {r.id: node for r in plan.resources if r.type == INSTANCE_POOL and r.id
            and (node := pool_shape(r.inputs).node_type_id)}


def classic_training_gpus(resource: Resource, cloud: str, catalog: Any = None,
                          pools: Mapping[str, str] | None = None) -> tuple[Any, int] | None:
    """(the worker node type, the training GPUs) of a job's classic training cluster: its workers' GPUs (the driver
    coordinates, as train.py runs its ranks on the workers), the workers' node type its own or that of the instance
    pool it draws them from (``pools``, `pool_node_types`); None when it has no training cluster of a known node."""
    catalog = catalog if catalog is not None else load_catalog()
    shapes = shapes_of_resource(JOB, resource.inputs, cloud=cloud)
    training = [s for s in shapes if s.role == "training"]
    node_type = (training[0].node_type_id or (pools or {}).get(training[0].instance_pool_id or "")) \
        if training else None
    node = catalog.get(node_type) if node_type else None
    if node is None:
        return None
    return node, int(training[0].max_workers or training[0].min_workers or 0) * node.gpu_count


def _classic_side(plan: Plan, resource: Resource, current: float, hours: float, prices: PriceBook,
                  catalog: Any) -> Advice | None:
    found = classic_training_gpus(resource, plan.cloud, catalog, pool_node_types(plan))
    if found is None or plan.cloud not in SERVERLESS_GPU_CLOUDS:
        return None
    node, gpus = found
    chosen = _accelerator_for(node.gpu, node.gpu_memory_gb, gpus, catalog) if gpus else None
    if chosen is None:
        return None
    accelerator, rounded, same = chosen
    nearest = "" if same else f" (serverless GPU has no {node.gpu}: the accelerator with the least GPU memory that " \
                              f"holds its {node.gpu_memory_gb:g} GB)"
    other = _monthly(plan, _serverless_job(resource, accelerator, rounded), prices)
    if other is None:
        return None
    return comparison(JOB_CLUSTER_VS_SERVERLESS_GPU, resource, current, other, "this job cluster", "serverless GPU",
                   f"serverless GPU for the same GPUs ({gpus} x {node.gpu} of {node.node_type_id} workers -> "
                   f"{rounded} GPUs on {accelerator}{nearest}, {hours:g} h)",
                   f"set dbx-ai-infra:{_workload_key(resource)}.compute: serverless_gpu with accelerator: "
                   f"{accelerator} and gpus: {rounded} (and drop its cluster settings).")


def _serverless_side(plan: Plan, resource: Resource, current: float, hours: float, prices: PriceBook,
                     catalog: Any) -> Advice | None:
    tasks = serverless_gpu_tasks(resource.inputs)
    acc = ACCELERATORS.get(tasks[0].accelerator) if tasks else None
    if acc is None or acc.catalog_gpu is None or not tasks[0].gpus:
        return None
    gpus = tasks[0].gpus
    same = [n for n in catalog.nodes if n.cloud == plan.cloud and not n.retired and not n.deprecated
            and _SAME_GPU.get(n.gpu, n.gpu) == acc.catalog_gpu]
    node = next((n for n in sorted(same, key=lambda n: -n.gpu_count) if gpus % n.gpu_count == 0), None)
    if node is None:
        return None
    workers = gpus // node.gpu_count
    cpu = catalog.cpu_driver(plan.cloud)
    driver = cpu.node_type_id if cpu is not None else node.node_type_id
    other = _monthly(plan, _classic_job(resource, node.node_type_id, workers, plan.cloud, driver), prices)
    if other is None:
        return None
    return comparison(SERVERLESS_GPU_VS_JOB_CLUSTER, resource, current, other, "serverless GPU", "the job cluster",
                   f"a classic job cluster for the same GPUs ({gpus} x {acc.gpu} of {acc.name} -> {workers} "
                   f"{node.node_type_id} workers of {node.gpu_count} GPUs, spot with an on-demand {driver} "
                   f"driver, {hours:g} h)",
                   f"set dbx-ai-infra:{_workload_key(resource)}.compute: classic with num_workers: {workers} and "
                   f"gpu_family: {node.family} (drop accelerator and gpus).")


def serverless_gpu_comparison(plan: Plan, prices: PriceBook, catalog: Any = None) -> list[Advice]:
    """For each training job, the other way to run it (classic job cluster or serverless GPU) for the same GPUs and
    hours, priced; the delta is the other option's monthly cost minus this one's."""
    catalog = catalog or load_catalog()
    cost = plan.cost if plan.cost is not None else price_plan(plan, prices)
    out: list[Advice] = []
    for resource in plan.resources:
        entry = cost.resources.get(resource.urn)
        if resource.type != JOB or entry is None or entry.monthly.expected is None or not entry.hours_per_month:
            continue
        if str((resource.inputs.get("tags") or {}).get(ROLE_TAG) or entry.workload_type) != "training":
            continue
        side = _serverless_side if serverless_gpu_tasks(resource.inputs) else _classic_side
        found = side(plan, resource, float(entry.monthly.expected), float(entry.hours_per_month), prices, catalog)
        if found is not None:
            out.append(found)
    return out
