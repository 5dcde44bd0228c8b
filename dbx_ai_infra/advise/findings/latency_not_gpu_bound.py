"""latency-over-sla-not-gpu-bound: request P99 over the SLA while the GPUs idle: the bottleneck is elsewhere."""

from __future__ import annotations

from dataclasses import replace

from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Row, figure, num
from dbx_ai_infra.advise.targets import Target


def build(row: Row, t: Target, c: Context) -> Outcome:
    return Outcome(
        f"request P99 was {num(row, 'p99_ms'):,.0f} ms (SLA {c.settings.sla_p99_ms:g} ms) while the GPUs idled (median "
        f"{num(row, 'median_busy_util'):.0f}% of busy minutes): the bottleneck is not the GPU. CPU "
        f"{figure(row.get('cpu_percent'))}% on average (P90 {figure(row.get('cpu_p90_percent'))}%), I/O wait "
        f"{figure(row.get('cpu_wait_percent'), 1)}%, network {figure(row.get('network_mbps'))} Mbit/s per node, "
        f"memory {figure(row.get('mem_used_percent'))}%.",
        note=("more GPU workers will not help: look at the data pipeline (tokenisation and pre-processing on the CPU, "
              "reads from storage) and the batch size before any GPU change."))


SPEC = FindingSpec(
    id="latency-over-sla-not-gpu-bound",
    severity="critical",
    summary="request P99 over the SLA while the GPUs idle: not GPU-bound",
    sql="""\
SELECT workload, CAST(NULL AS STRING) AS cluster_id, p99_ms, p50_ms, requests, median_busy_util, cpu_percent,
       cpu_p90_percent, cpu_wait_percent, mem_used_percent, network_mbps
FROM workload_summary
WHERE p99_ms > {{ sla }} AND {{ busy }} AND median_busy_util < {{ t.gpu_low_percent }}
""",
    build=build,
    thresholds=("min_busy_minutes", "gpu_low_percent", "sla_p99_ms"),
    plant=Plant("inference", run=lambda run, target: replace(run, util=15.0, cpu=92.0, tail_factor=12.0)),
)
