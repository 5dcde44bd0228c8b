"""idle-cluster: runs that end with long stretches of idle GPUs: shorter auto-termination, fewer hours assumed."""

from __future__ import annotations

from typing import Any

from dbx_ai_infra.advise.edits import usage_edit, usage_figure, usage_key
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import Target
from dbx_ai_infra.dbxtypes.vocabulary import HOURS_PER_MONTH


def build(row: Row, t: Target, c: Context) -> Outcome:
    target = c.settings.target_autotermination_minutes
    idle, up = num(row, "idle_minutes"), max(num(row, "up_minutes"), 1)
    evidence = (f"{int(num(row, 'idle_runs'))} of {int(num(row, 'runs'))} run(s) ended with at least "
                f"{c.settings.idle_stretch_minutes:g} minutes of near-zero GPU use (median tail "
                f"{num(row, 'median_tail_minutes'):.0f} min): {idle / 60:,.1f} of {up / 60:,.1f} hours up "
                f"({100 * idle / up:.0f}%); auto-termination is {t.autotermination_minutes} min.")
    window = num(row, "window_hours")  # the bill's span in whole days, else the GPU telemetry's
    saved_month = num(row, "saveable_minutes") / 60 * HOURS_PER_MONTH / window if window else 0.0
    key = usage_key(t)
    edit: dict[str, Any] = {}
    current: dict[str, Any] = {}
    if target < t.autotermination_minutes:
        edit[f"{t.key}.autotermination_minutes"] = target
        current[f"{t.key}.autotermination_minutes"] = t.autotermination_minutes
    if key and saved_month > 0:
        now = float(usage_figure(t, c, key)[1] or 0)
        if key == "dev_hours_per_working_day":
            days = float((c.plan.assumptions or {}).get("working_days_per_month") or 21)
            new = max(0.0, now - saved_month / days)
        else:
            new = max(0.0, now - saved_month)
        more = usage_edit(t, c, key, round(new, 1))
        edit.update(more[0])
        current.update(more[1])
    if not edit:
        return Outcome(evidence, note=("auto-termination is already short: the idle time is work that leaves the "
                                       "GPUs idle (notebooks doing CPU work); move it to a CPU cluster."))
    return Outcome(evidence, Proposal(f"auto-termination {t.autotermination_minutes} -> {target} min, and the usage "
                                      f"assumption lowered by the {saved_month:,.0f} idle hours a month it removes",
                                      edit, current))


SPEC = FindingSpec(
    id="idle-cluster",
    severity="warning",
    summary="runs that end with long idle stretches before auto-termination",
    sql="""\
SELECT workload, CAST(NULL AS STRING) AS cluster_id, idle_runs, runs, idle_minutes, up_minutes,
       median_tail_minutes, saveable_minutes, autotermination_minutes, window_hours
FROM workload_summary
WHERE autotermination_minutes > 0 AND idle_runs > 0
  AND 100.0 * idle_minutes / nullif(up_minutes, 0) >= {{ t.idle_share_percent }}
""",
    build=build,
    thresholds=("idle_stretch_minutes", "idle_share_percent", "target_autotermination_minutes"),
    plant=Plant("interactive", idle_minutes=150),
)
