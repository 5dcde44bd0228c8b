"""Serverless GPU (Databricks AI Runtime) accelerators: what one ``compute.hardware_accelerator`` node holds, and the
clouds Databricks offers it on.

The accelerator names are databricks-sdk 0.167's ``compute.HardwareAcceleratorType`` (``GPU_1xA10``, ``GPU_1xH100``,
``GPU_8xB300``, ``GPU_8xH100``: the per-node GPU count is in the name, as the SDK's ``jobs.ComputeSpecAcceleratorType``
docstring says, "GPU_8xH100 means 8 H100s per node"); a test holds this table to the SDK's enum. A GPU's memory comes
from the node catalog (``node_types.yaml``), which already knows the GPU: the A10 of Azure's NV A10 v5 nodes (24 GB)
and the H100 80GB (SXM) of p5.48xlarge. The B300 is in no node of the catalog, so its memory is unknown and a model's
fit on it is not judged (said, never assumed).

Clouds: Databricks' AI Runtime documentation has an AWS edition
(docs.databricks.com/aws/en/machine-learning/ai-runtime/: "Productionize training workloads", "Use the Databricks
CLI with AI Runtime") and an Azure one (learn.microsoft.com/en-us/azure/databricks/machine-learning/ai-runtime/); a
search of Databricks' documentation on 2026-12-06 found no Google Cloud edition (docs.databricks.com/gcp has no
ai-runtime pages, and its "Features with limited regional availability" page lists no serverless GPU), so GCP is
refused. Per-region availability inside AWS and Azure is not published in a form we could read: it is not judged (the
spec's resolve says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalog import Catalog

#: The clouds whose Databricks documentation has the AI Runtime (serverless GPU); see the module docstring.
SERVERLESS_GPU_CLOUDS = ("aws", "azure")
#: Where that was read, for messages.
SERVERLESS_GPU_DOCS = ("Databricks AI Runtime docs: docs.databricks.com/aws/en/machine-learning/ai-runtime/ and "
                       "learn.microsoft.com/en-us/azure/databricks/machine-learning/ai-runtime/; no Google Cloud "
                       "edition (checked 2026-12-06)")
#: The databricks-sdk enum the accelerator names come from.
SDK_ACCELERATOR_ENUM = "compute.HardwareAcceleratorType"


@dataclass(frozen=True)
class Accelerator:
    """One serverless GPU accelerator: its name, the GPU (as the node catalog names it) and GPUs per node."""

    name: str
    gpu: str
    gpus_per_node: int
    #: The node-catalog GPU name whose ``gpu_memory_gb`` this GPU has; None when the catalog has no such GPU.
    catalog_gpu: str | None

    def gpu_memory_gb(self, catalog: Catalog) -> float | None:
        """One GPU's memory, GB, read from the node catalog; None when unknown."""
        if self.catalog_gpu is None:
            return None
        return next((n.gpu_memory_gb for n in catalog.nodes if n.gpu == self.catalog_gpu), None)


ACCELERATORS: dict[str, Accelerator] = {a.name: a for a in (
    Accelerator("GPU_1xA10", "NVIDIA A10", 1, "NVIDIA A10"),
    Accelerator("GPU_1xH100", "NVIDIA H100", 1, "NVIDIA H100 80GB (SXM)"),
    Accelerator("GPU_8xB300", "NVIDIA B300", 8, None),
    Accelerator("GPU_8xH100", "NVIDIA H100", 8, "NVIDIA H100 80GB (SXM)"),
)}


def accelerator(name: str) -> Accelerator | None:
    return ACCELERATORS.get(name)
