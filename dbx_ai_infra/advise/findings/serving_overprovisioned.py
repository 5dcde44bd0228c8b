"""serving-overprovisioned: a serving endpoint whose requests in flight never came near its min provisioned
concurrency: lower the minimum (the replicas it keeps warm, and pays for, all month)."""

from __future__ import annotations

from dataclasses import replace

from dbx_ai_infra.advise.edits import concurrency_step
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import EndpointTarget


def build(row: Row, e: EndpointTarget, c: Context) -> Outcome:
    lo, peak = e.min_concurrency, num(row, "peak_concurrency")
    headroom = float(c.settings.serving_headroom_percent)
    evidence = (f"the requests in flight peaked at {peak:,.1f} (P95 {num(row, 'p95_concurrency'):,.1f}) over "
                f"{int(num(row, 'minutes')):,} minutes with requests, under "
                f"{c.settings.serving_overprovisioned_percent:g}% of its min provisioned concurrency {lo}: "
                "replicas kept warm for traffic that did not come.")
    new_lo = concurrency_step(peak * (1 + headroom / 100), at_least=concurrency_step(1))
    if new_lo >= lo:
        return Outcome(evidence, note="the minimum is already one replica: nothing lower keeps the endpoint warm.")
    key = f"{e.key}.concurrency.min"
    return Outcome(evidence, Proposal(f"lower concurrency.min {lo} -> {new_lo} (the peak plus {headroom:g}%, in "
                                      "whole replicas)", {key: new_lo}, {key: lo}))


SPEC = FindingSpec(
    id="serving-overprovisioned",
    severity="warning",
    summary="a serving endpoint's peak requests in flight far under its min provisioned concurrency",
    sql="""\
SELECT endpoint AS workload, CAST(NULL AS STRING) AS cluster_id, peak_concurrency, p95_concurrency, min_concurrency,
       max_concurrency, requests, minutes
FROM endpoint_summary
WHERE min_concurrency > 0 AND minutes >= {{ t.min_busy_minutes }}
  AND peak_concurrency < min_concurrency * {{ t.serving_overprovisioned_percent }} / 100
""",
    build=build,
    thresholds=("min_busy_minutes", "serving_overprovisioned_percent", "serving_headroom_percent"),
    plant=Plant("serving", traffic=lambda traffic, endpoint: replace(traffic, load=0.05),
                applies=lambda endpoint: endpoint.min_concurrency > 4),
    subject="endpoint",
)
