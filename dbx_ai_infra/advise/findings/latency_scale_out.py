"""latency-over-sla-scale-out: request P99 over the SLA while the GPUs are busy: more workers."""

from __future__ import annotations

from dataclasses import replace

from dbx_ai_infra.advise.edits import at_least_one, resize, resize_text
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import Target


def build(row: Row, t: Target, c: Context) -> Outcome:
    sla = c.settings.sla_p99_ms
    assert sla is not None  # the SQL selects no row without an SLA
    p99, lo, hi = num(row, "p99_ms"), t.min_workers, t.max_workers
    at_max = bool(row.get("sat_at_max"))
    share = 100 * num(row, "minutes_at_max") / max(num(row, "minutes"), 1)
    evidence = (f"request P99 was {p99:,.0f} ms over {int(num(row, 'requests')):,} requests (SLA {sla:g} ms) while "
                f"the GPUs were busy (median {num(row, 'median_busy_util'):.0f}%): too few workers"
                + (f"; the cluster sat at its maximum of {hi} workers {share:.0f}% of the time." if at_max else "."))
    new_lo = max(lo + 1, at_least_one(lo * p99 / sla))
    edit, current = resize(t, c, lo=new_lo, hi=hi + (new_lo - lo) if at_max else hi)
    return Outcome(evidence, Proposal(resize_text(edit, current), edit, current))


SPEC = FindingSpec(
    id="latency-over-sla-scale-out",
    severity="critical",
    summary="request P99 over the SLA with busy GPUs: too few workers",
    sql="""\
SELECT workload, CAST(NULL AS STRING) AS cluster_id, p99_ms, p50_ms, requests, median_busy_util, min_workers,
       max_workers, minutes_at_max, minutes,
       100.0 * minutes_at_max / nullif(minutes, 0) >= {{ t.at_max_share_percent }} AS sat_at_max
FROM workload_summary
WHERE p99_ms > {{ sla }} AND {{ busy }} AND median_busy_util >= {{ t.gpu_high_percent }}
""",
    build=build,
    thresholds=("min_busy_minutes", "gpu_high_percent", "at_max_share_percent", "sla_p99_ms"),
    plant=Plant("inference", run=lambda run, target: replace(run, util=85.0, tail_factor=12.0,
                                                             peak_workers=target.max_workers, peak_share=0.5)),
)
