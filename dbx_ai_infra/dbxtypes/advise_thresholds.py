"""The thresholds of ``stackplan advise``, stated once.

Each is a setting of the policy config file's ``advise`` section (``{"advise": {"gpu_low_percent": 25}}``); the
offline loader (`dbx_ai_infra.policies.registry.load_policy_config`) validates them against this table. The Pulumi CLI
reads the same file for ``--policy-pack-config`` and validates only the keys of the pack's own policies, so the section
does not disturb ``pulumi preview`` (pulumi/pulumi, sdk ``resource/analyzer`` ``ValidatePolicyPackConfig``: it loops
over the pack's policies, read 2026-12-03).

The 30% and 60% GPU lines are the seed's (``../shared/seeds``: "below 30% GPU utilisation means too many workers or
too large a GPU"; "check that GPU utilisation is stable above 60%"). The others are this project's choices, stated
in the README's advise section.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final, NamedTuple


class AdviseThreshold(NamedTuple):
    default: float | None
    minimum: float
    integer: bool
    description: str
    maximum: float | None = None


#: Name -> (default, smallest allowed value, integer?, what it means, largest allowed value).
ADVISE_THRESHOLDS: Final = MappingProxyType({
    "gpu_low_percent": AdviseThreshold(
        30, 0, False, "Median GPU utilisation of busy minutes below this: too many workers or too large a GPU.", 100),
    "gpu_high_percent": AdviseThreshold(
        60, 0, False, "Median GPU utilisation of busy minutes at or above this: the GPUs are the busy part.", 100),
    "gpu_idle_percent": AdviseThreshold(
        5, 0, False, "A cluster minute whose mean GPU utilisation is at or below this is idle (not busy).", 100),
    "min_busy_minutes": AdviseThreshold(
        30, 1, True, "Fewest busy cluster minutes before a workload's GPU use is judged."),
    "sla_p99_ms": AdviseThreshold(
        None, 1, False, "Request P99 latency SLA, ms (--sla-p99-ms wins); none: latency is not judged."),
    "at_max_share_percent": AdviseThreshold(
        10, 0, False, "Share of minutes at max_workers above which the cluster 'sat at its maximum'.", 100),
    "breach_window_minutes": AdviseThreshold(
        15, 1, True, "Minutes after a spot reclaim in which an SLA breach counts as caused by it."),
    "churn_resizes_per_hour": AdviseThreshold(
        4, 0, False, "Resize events per hour of uptime above which autoscaling churns."),
    "idle_stretch_minutes": AdviseThreshold(
        30, 1, True, "An idle stretch before a cluster stops at least this long counts as idle time."),
    "idle_share_percent": AdviseThreshold(
        15, 0, False, "Share of a workload's up time spent in such idle stretches above which it is reported.", 100),
    "target_autotermination_minutes": AdviseThreshold(
        15, 10, True, "The auto-termination proposed for an idle cluster (Databricks' least is 10)."),
    "cost_drift_percent": AdviseThreshold(
        25, 0, False, "Billed DBU cost differing from the expected DBU cost by more than this: cost drift."),
    "network_high_mbps": AdviseThreshold(
        1000, 0, False, "Mean network traffic per training node (sent + received, Mbit/s) above which it is high."),
    "low_bandwidth_gbps": AdviseThreshold(
        200, 0, False, "A node type without GPU interconnect and below this bandwidth is a low-bandwidth family."),
    "gpu_mem_oversized_percent": AdviseThreshold(
        40, 0, False, "Peak GPU memory use under this share of a GPU's memory over the window: the GPU is oversized.",
        100),
    "gpu_mem_near_oom_percent": AdviseThreshold(
        95, 0, False, "The P99 of GPU memory use (per cluster minute, the fullest GPU) at or above this share: near "
        "out of memory.", 100),
    "gpu_mem_headroom_percent": AdviseThreshold(
        20, 0, False, "Headroom added to the observed peak when a smaller node is proposed for it.", 400),
    "serving_at_max_percent": AdviseThreshold(
        90, 1, False, "A serving endpoint minute whose requests in flight (Little's law) reach this share of its "
        "max provisioned concurrency is a minute at its maximum.", 100),
    "serving_overprovisioned_percent": AdviseThreshold(
        50, 0, False, "An endpoint whose peak requests in flight stay under this share of its min provisioned "
        "concurrency is over-provisioned.", 100),
    "serving_headroom_percent": AdviseThreshold(
        25, 0, False, "Headroom added to an endpoint's observed peak concurrency when a lower minimum is proposed.",
        400),
    "serving_scale_to_zero_minutes": AdviseThreshold(
        30, 1, True, "A request after this many minutes without one found a scale-to-zero endpoint scaled to zero "
        "(a launch, a cold start); this project's default: Model Serving scales an endpoint without traffic to zero "
        "after an idle period whose length its docs did not state where we read them (set it to what you see)."),
})

#: Thresholds that must stay in order, lower first (effective values: defaults overlaid by the config): a low line at
#: or above the high line would call the same GPUs both underused and the busy part.
ADVISE_ORDER: Final = (("gpu_idle_percent", "gpu_low_percent"), ("gpu_low_percent", "gpu_high_percent"),
                       ("gpu_mem_oversized_percent", "gpu_mem_near_oom_percent"))
