"""The thresholds of ``stackplan advise``, stated once.

Each is a setting of the policy config file's ``advise`` section (``{"advise": {"gpu_low_percent": 25}}``); the
offline loader (`dbx_ai_infra.policies.registry.load_policy_config`) validates them against this model. The Pulumi CLI
reads the same file for ``--policy-pack-config`` and validates only the keys of the pack's own policies, so the section
does not disturb ``pulumi preview`` (pulumi/pulumi, sdk ``resource/analyzer`` ``ValidatePolicyPackConfig``: it loops
over the pack's policies, read 2026-12-03).

The 30% and 60% GPU lines are the seed's (``../shared/seeds``: "below 30% GPU utilisation means too many workers or
too large a GPU"; "check that GPU utilisation is stable above 60%"). The others are this project's choices, stated
in the README's advise section.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Final, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

#: The kinds of threshold by their bounds, each stated once: a share in percent, a headroom over an observed peak in
#: percent (up to five times the peak), a count of minutes, and a rate or a size that only has to be positive.
Percent = Annotated[float, Field(ge=0, le=100)]
Headroom = Annotated[float, Field(ge=0, le=400)]
Minutes = Annotated[int, Field(ge=1)]
NonNegative = Annotated[float, Field(ge=0)]


class AdviseSettings(BaseModel):
    """Every threshold of ``stackplan advise``, typed: one field each, its type (an integer or a number), its bounds,
    its default and its meaning in the field; `ADVISE_THRESHOLDS` is read from it."""

    # Built when a config's ``advise`` section is first validated, not at import: a preview or an audit reads only
    # the fields' defaults and bounds, and building the validator was about 17 ms of their start-up.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    gpu_low_percent: Percent = Field(30, description=
        'Median GPU utilisation of busy minutes below this: too many workers or too large a GPU.')
    gpu_high_percent: Percent = Field(60, description=
        'Median GPU utilisation of busy minutes at or above this: the GPUs are the busy part.')
    gpu_idle_percent: Percent = Field(5, description=
        'A cluster minute whose mean GPU utilisation is at or below this is idle (not busy).')
    min_busy_minutes: Minutes = Field(30, description=
        "Fewest busy cluster minutes before a workload's GPU use is judged.")
    sla_p99_ms: Annotated[float | None, Field(ge=1, description=
        'Request P99 latency SLA, ms (--sla-p99-ms wins); none: latency is not judged.')] = None
    at_max_share_percent: Percent = Field(10, description=
        "Share of minutes at max_workers above which the cluster 'sat at its maximum'.")
    breach_window_minutes: Minutes = Field(15, description=
        'Minutes after a spot reclaim in which an SLA breach counts as caused by it.')
    churn_resizes_per_hour: NonNegative = Field(4, description=
        'Resize events per hour of uptime above which autoscaling churns.')
    idle_stretch_minutes: Minutes = Field(30, description=
        'An idle stretch before a cluster stops at least this long counts as idle time.')
    idle_share_percent: Percent = Field(15, description=
        "Share of a workload's up time spent in such idle stretches above which it is reported.")
    target_autotermination_minutes: Annotated[int, Field(ge=10, description=
        "The auto-termination proposed for an idle cluster (Databricks' least is 10).")] = 15
    cost_drift_percent: NonNegative = Field(25, description=
        'Billed DBU cost differing from the expected DBU cost by more than this: cost drift.')
    network_high_mbps: NonNegative = Field(1000, description=
        'Mean network traffic per training node (sent + received, Mbit/s) above which it is high.')
    low_bandwidth_gbps: NonNegative = Field(200, description=
        'A node type without GPU interconnect and below this bandwidth is a low-bandwidth family.')
    gpu_mem_oversized_percent: Percent = Field(40, description=
        "Peak GPU memory use under this share of a GPU's memory over the window: the GPU is oversized.")
    gpu_mem_near_oom_percent: Percent = Field(95, description=
        'The P99 of GPU memory use (per cluster minute, the fullest GPU) at or above this share: near out of '
        'memory.')
    gpu_mem_headroom_percent: Headroom = Field(20, description=
        'Headroom added to the observed peak when a smaller node is proposed for it.')
    serving_at_max_percent: Annotated[float, Field(ge=1, le=100, description=
        "A serving endpoint minute whose requests in flight (Little's law) reach this share of its max "
        'provisioned concurrency is a minute at its maximum.')] = 90
    serving_overprovisioned_percent: Percent = Field(50, description=
        'An endpoint whose peak requests in flight stay under this share of its min provisioned concurrency is '
        'over-provisioned.')
    serving_headroom_percent: Headroom = Field(25, description=
        "Headroom added to an endpoint's observed peak concurrency when a lower minimum is proposed.")
    serving_scale_to_zero_minutes: Minutes = Field(30, description=
        'A request after this many minutes without one found a scale-to-zero endpoint scaled to zero (a launch, a '
        "cold start); this project's default: Model Serving scales an endpoint without traffic to zero after an "
        'idle period whose length its docs did not state where we read them (set it to what you see).')


class AdviseThreshold(NamedTuple):
    """One threshold as the policy config's ``advise`` section checks it, read from its `AdviseSettings` field."""

    default: float | None
    minimum: float
    integer: bool
    description: str
    maximum: float | None = None


def _bound(field: Any, name: str) -> Any:
    """A field's bound (``ge``, ``le``) from its metadata, or None."""
    return next((getattr(m, name) for m in field.metadata if getattr(m, name, None) is not None), None)


def advise_settings(section: Mapping[str, float | None], sla_p99_ms: float | None = None) -> AdviseSettings:
    """The settings of one advise run, built once: the policy config's ``advise`` section (validated by its loader,
    `dbx_ai_infra.policies.config`) over the defaults, and ``--sla-p99-ms``, when given, over both. A finding reads
    them by attribute (``settings.gpu_low_percent``), so a misspelt name is a mypy error, not a KeyError at run time.

    The command line's SLA is checked by its command (a positive number of ms, exit 2 otherwise) and set without a
    second validation: the field's bound (at least 1 ms) is the config file's, and the command line has always taken
    any positive figure."""
    settings = AdviseSettings.model_validate(dict(section))
    return settings if sla_p99_ms is None else settings.model_copy(update={"sla_p99_ms": sla_p99_ms})


#: Name -> its default, smallest and largest allowed values, whether it is an integer, and what it means.
ADVISE_THRESHOLDS: Final[Mapping[str, AdviseThreshold]] = MappingProxyType({
    name: AdviseThreshold(default=field.default, minimum=_bound(field, "ge"), integer=int in (field.annotation,
                          *getattr(field.annotation, "__args__", ())), description=str(field.description),
                          maximum=_bound(field, "le"))
    for name, field in AdviseSettings.model_fields.items()})

#: Thresholds that must stay in order, lower first (effective values: defaults overlaid by the config): a low line at
#: or above the high line would call the same GPUs both underused and the busy part.
ADVISE_ORDER: Final = (("gpu_idle_percent", "gpu_low_percent"), ("gpu_low_percent", "gpu_high_percent"),
                       ("gpu_mem_oversized_percent", "gpu_mem_near_oom_percent"))
