"""gpu-balanced: the GPUs are busy and latency is within the SLA; no change (shown so the reader sees it judged)."""

from __future__ import annotations

from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Row, figure, num
from dbx_ai_infra.advise.targets import Target


def build(row: Row, t: Target, c: Context) -> Outcome:
    latency = (f"; request P99 {figure(row.get('p99_ms'))} ms is within the SLA of {c.settings.sla_p99_ms:g} ms"
               if row.get("p99_ms") is not None and c.settings.sla_p99_ms is not None else "")
    return Outcome(f"median GPU use of {int(num(row, 'busy_minutes')):,} busy minutes was "
                   f"{num(row, 'median_busy_util'):.0f}% (at or above {c.settings.gpu_high_percent:g}%)"
                   f"{latency}. No change.")


SPEC = FindingSpec(
    id="gpu-balanced",
    severity="info",
    summary="GPUs busy and latency within the SLA: no change",
    sql="""\
SELECT workload, CAST(NULL AS STRING) AS cluster_id, median_busy_util, busy_minutes, p99_ms, requests
FROM workload_summary
WHERE {{ busy }} AND median_busy_util >= {{ t.gpu_high_percent }}
  AND (p99_ms IS NULL OR {{ sla }} IS NULL OR p99_ms <= {{ sla }})
""",
    build=build,
    thresholds=("min_busy_minutes", "gpu_high_percent"),
)
