"""gpu-underutilized: the GPUs mostly idle while the cluster works; fewer workers, or a smaller node."""

from __future__ import annotations

from dataclasses import replace

from dbx_ai_infra.advise.edits import at_least_one, resize, workload_spec
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import Target


def build(row: Row, t: Target, c: Context) -> Outcome:
    util, high = num(row, "median_busy_util"), float(c.settings.gpu_high_percent)
    evidence = (f"median GPU use of {int(num(row, 'busy_minutes')):,} busy minutes was {util:.0f}% (below "
                f"{c.settings.gpu_low_percent:g}%) on {t.node_type_id} x {t.min_workers} worker(s)"
                + (f" (up to {t.max_workers})" if t.max_workers > t.min_workers else "") + ".")
    workers = t.min_workers
    fewer = at_least_one(workers * util / high) if workers > 1 else workers
    section = workload_spec(t, c)
    if fewer < workers and t.section in ("training", "inference"):
        edit, current = resize(t, c, lo=fewer)
        return Outcome(evidence, Proposal(f"fewer workers: {workers} -> {fewer} (the same work at about {high:g}% "
                                          "GPU use)", edit, current))
    if section is not None and getattr(section, "node_type_id", None):
        return Outcome(evidence, Proposal(f"let the sizer pick the smallest node that fits the model instead of the "
                                          f"pinned {section.node_type_id}", {f"{t.key}.node_type_id": None},
                                          {f"{t.key}.node_type_id": section.node_type_id}))
    return Outcome(evidence, note=("already the fewest workers and the smallest node of its GPU family that fits the "
                                   "model; a smaller GPU family (gpu_family) or batching more work onto it is what is "
                                   "left."))


SPEC = FindingSpec(
    id="gpu-underutilized",
    severity="warning",
    summary="median GPU use of busy minutes below the low line",
    sql="""\
-- Median GPU use of busy minutes below the low line (not when latency is over the SLA: that is not-gpu-bound; not
-- when a multi-node training run waits on a slow network: that is poor-scaling-interconnect).
SELECT workload, CAST(NULL AS STRING) AS cluster_id, median_busy_util, busy_minutes, runs, min_workers, max_workers,
       median_workers
FROM workload_summary
WHERE {{ busy }} AND median_busy_util < {{ t.gpu_low_percent }}
  AND NOT coalesce(p99_ms > {{ sla }}, false) AND NOT coalesce({{ net_bound }}, false)
""",
    build=build,
    thresholds=("min_busy_minutes", "gpu_low_percent", "gpu_high_percent"),
    plant=Plant("training", run=lambda run, target: replace(run, util=15.0)),
)
