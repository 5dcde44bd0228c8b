"""autoscaling-churn: an autoscaled cluster resizing more often than the threshold: a higher minimum steadies it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dbx_ai_infra.advise.edits import resize, resize_text
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import Target


def build(row: Row, t: Target, c: Context) -> Outcome:
    rate = num(row, "resizes_per_hour")
    median = num(row, "median_workers")
    evidence = (f"{int(num(row, 'resizes'))} resizes in {num(row, 'minutes') / 60:,.1f} hours up: {rate:.1f} per hour"
                f" (threshold {c.settings.churn_resizes_per_hour:g}); median size {median:g} workers "
                f"between {t.min_workers} and {t.max_workers}.")
    if t.section != "inference":
        return Outcome(evidence, note="autoscaling churns: a higher minimum steadies it.")
    # the median size, kept below the maximum so that autoscaling still has room
    new_lo = max(t.min_workers + 1, min(math.ceil(median), t.max_workers - 1))
    edit, current = resize(t, c, lo=new_lo)
    return Outcome(evidence, Proposal(f"a higher minimum (scale_down_minutes is already at most 10, Databricks' "
                                      f"longest window): {resize_text(edit, current).removeprefix('raise ')}", edit,
                                      current))


def _events(run: Any, target: Target, at: Callable[[int], int]) -> list[dict[str, Any]]:
    """Up and down by one worker every five minutes."""
    out = []
    for minute in range(0, run.minutes, 5):
        up = (minute // 5) % 2 == 0
        out.append({"cluster_id": run.cluster_id, "timestamp": at(minute), "type": "RESIZING",
                    "details": {"current_num_workers": run.workers + (0 if up else 1),
                                "target_num_workers": run.workers + (1 if up else 0), "cause": "AUTOSCALE"}})
    return out


SPEC = FindingSpec(
    id="autoscaling-churn",
    severity="warning",
    summary="an autoscaled cluster resizing more often than the threshold",
    sql="""\
SELECT workload, CAST(NULL AS STRING) AS cluster_id, resizes, minutes, 60.0 * resizes / nullif(minutes, 0)
       AS resizes_per_hour, min_workers, max_workers, median_workers, autotermination_minutes
FROM workload_summary
WHERE max_workers > min_workers AND minutes > 0
  AND 60.0 * resizes / minutes > {{ t.churn_resizes_per_hour }}
""",
    build=build,
    thresholds=("churn_resizes_per_hour",),
    plant=Plant("inference", events=_events),
)
