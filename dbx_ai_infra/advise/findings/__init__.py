"""The findings of ``advise``, one module each (a `dbx_ai_infra.advise.record.FindingSpec` named ``SPEC``), registered
here in report order (within a severity). A new finding is one module and one line below."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from dbx_ai_infra.advise.findings import (
    autoscaling_churn,
    cost_drift,
    gpu_balanced,
    gpu_memory_near_oom,
    gpu_memory_oversized,
    gpu_underutilized,
    idle_cluster,
    latency_not_gpu_bound,
    latency_scale_out,
    poor_scaling_interconnect,
    serving_cold_starts,
    serving_latency_at_max,
    serving_overprovisioned,
    spot_reclaim,
    training_resized,
)
from dbx_ai_infra.advise.record import FindingSpec

FINDINGS: tuple[FindingSpec, ...] = (
    gpu_memory_near_oom.SPEC,
    gpu_underutilized.SPEC,
    gpu_memory_oversized.SPEC,
    gpu_balanced.SPEC,
    latency_scale_out.SPEC,
    latency_not_gpu_bound.SPEC,
    serving_latency_at_max.SPEC,
    serving_overprovisioned.SPEC,
    serving_cold_starts.SPEC,
    spot_reclaim.SPEC,
    training_resized.SPEC,
    autoscaling_churn.SPEC,
    idle_cluster.SPEC,
    cost_drift.SPEC,
    poor_scaling_interconnect.SPEC,
)
BY_ID: Mapping[str, FindingSpec] = MappingProxyType({f.id: f for f in FINDINGS})
FINDING_IDS: tuple[str, ...] = tuple(BY_ID)
#: The findings the telemetry generator can plant (a healthy state such as gpu-balanced is not planted).
PLANTS: tuple[str, ...] = tuple(f.id for f in FINDINGS if f.plant is not None)
