"""A GPU ML runtime on GPU nodes, a CPU runtime on CPU nodes, and no Photon on GPUs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLUSTER,
    DEFAULT_RUNTIME,
    GPU_ML_MARKER,
    JOB,
    UNKNOWN_ARGUMENT,
    UNKNOWN_VALUE,
    SelectedValue,
)
from dbx_ai_infra.policies.common import gpu_node
from dbx_ai_infra.policies.rule import Rule


def _is_gpu_runtime(spark_version: str) -> bool:
    return GPU_ML_MARKER in spark_version.lower()


def _nodes(view: ClusterShape) -> tuple[str | None, list[str]]:
    """The node that runs the work (the driver on a single-node cluster, the workers otherwise), and the cluster's
    GPU node types."""
    workhorse = view.driver_node_type if view.is_single_node else view.node_type_id
    gpu_nodes = [n for n in dict.fromkeys(x for x in (view.node_type_id, view.driver_node_type) if x)
                 if gpu_node(n) is True]
    return workhorse, gpu_nodes


def _selected(spark_version: SelectedValue, view: ClusterShape) -> list[str]:
    """A runtime a ``databricks_spark_version`` data source chooses, judged by the arguments that choose it
    (``gpu = true`` selects GPU ML runtimes, the provider's docs, data-sources/spark_version.md)."""
    gpu, photon = spark_version.arguments.get("gpu"), spark_version.arguments.get("photon")
    if gpu == UNKNOWN_ARGUMENT:
        return []
    workhorse, gpu_nodes = _nodes(view)
    out = []
    if gpu is True and workhorse and gpu_node(workhorse) is False:
        out.append(f"runtime chosen by {spark_version.source} with gpu = true (a GPU ML runtime) on CPU node type "
                   f"{workhorse}: the GPU libraries have no GPU to use. Fix: use a GPU node type, or drop gpu = true.")
    if gpu is not True and gpu_nodes:
        out.append(f"runtime chosen by {spark_version.source} without gpu = true: a runtime without CUDA on node "
                   f"type {', '.join(gpu_nodes)}, which has GPUs. Fix: set gpu = true and ml = true in "
                   f"{spark_version.source}.")
    if photon is True and gpu_nodes:
        out.append(f"runtime chosen by {spark_version.source} with photon = true on GPU node type "
                   f"{', '.join(gpu_nodes)}; GPU node types cannot use Photon. Fix: drop photon = true.")
    return out


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    cluster = view.props
    spark_version = view.spark_version
    if isinstance(spark_version, SelectedValue):
        return _selected(spark_version, view)
    if not spark_version or spark_version == UNKNOWN_VALUE:  # known only after apply: not judged
        return []
    workhorse, gpu_nodes = _nodes(view)
    # kind CLASSIC_PREVIEW with use_ml_runtime: Databricks picks the GPU flavour of the runtime from the node type.
    auto_flavour = cluster.get("kind") == "CLASSIC_PREVIEW" and cluster.get("use_ml_runtime") is True
    gpu_runtime = _is_gpu_runtime(spark_version)
    out = []
    if gpu_runtime and workhorse and gpu_node(workhorse) is False:
        cpu_runtime = spark_version.replace(GPU_ML_MARKER, "-cpu-ml-")
        out.append(f"GPU ML runtime {spark_version} on CPU node type {workhorse}: the GPU libraries have no GPU to "
                   f"use. Fix: use a GPU node type, or the CPU ML runtime (e.g. {cpu_runtime}).")
    if not gpu_runtime and not auto_flavour and gpu_nodes:
        out.append(f"runtime {spark_version} is not a GPU ML runtime but node type {', '.join(gpu_nodes)} has GPUs: "
                   f"CUDA and the GPU drivers are missing. Fix: use a '-gpu-ml-' runtime such as {DEFAULT_RUNTIME}, "
                   f"or set kind CLASSIC_PREVIEW with use_ml_runtime true.")
    photon = str(cluster.get("runtime_engine", "")).upper() == "PHOTON" or "photon" in spark_version.lower()
    if photon and gpu_nodes:
        out.append(f"Photon is enabled on GPU node type {', '.join(gpu_nodes)}; GPU node types cannot use Photon. "
                   f"Fix: set runtime_engine STANDARD and a non-Photon GPU ML runtime.")
    return out


RULE = Rule(
    name="databricks-cluster-require-matching-runtime",
    order=80,
    description=("GPU node types must run a GPU ML runtime without Photon, and a GPU ML runtime must run on GPU node "
                 "types."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('runtime', 'node_type_id'),
    remediation=("Pair '-gpu-ml-' runtimes with GPU node types and CPU runtimes with CPU node types; disable Photon "
                 "on GPUs."),
    severity="high",
    reads=("spark_version", "spark_version(gpu)"),
)
