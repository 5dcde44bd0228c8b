"""serving-latency-at-max-concurrency: a serving endpoint's P99 over the SLA while its requests in flight sat at its
maximum provisioned concurrency: raise the maximum."""

from __future__ import annotations

from dataclasses import replace

from dbx_ai_infra.advise.edits import concurrency_step
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import EndpointTarget
from dbx_ai_infra.dbxtypes.vocabulary import MAX_CONCURRENCY_PER_MODEL


def build(row: Row, e: EndpointTarget, c: Context) -> Outcome:
    sla = c.settings.sla_p99_ms
    assert sla is not None  # the SQL selects no row without an SLA
    p99, hi = num(row, "p99_ms"), e.max_concurrency
    share = 100 * num(row, "minutes_at_max") / max(num(row, "minutes"), 1)
    evidence = (f"request P99 was {p99:,.0f} ms over {int(num(row, 'requests')):,} requests (SLA {sla:g} ms) while "
                f"the requests in flight reached {c.settings.serving_at_max_percent:g}% of its max provisioned "
                f"concurrency {hi} in {share:.0f}% of its minutes (peak {num(row, 'peak_concurrency'):,.1f}): "
                "requests queued for a replica.")
    if hi >= MAX_CONCURRENCY_PER_MODEL:
        return Outcome(evidence, note=f"the maximum is Model Serving's limit per served model "
                                      f"({MAX_CONCURRENCY_PER_MODEL}): serve the model on a second endpoint, or ask "
                                      "your Databricks account team for more.")
    # the queueing scales with the overload: the maximum grows by the P99's excess over the SLA, a replica at least
    new_hi = concurrency_step(hi * p99 / sla, at_least=concurrency_step(hi + 1))
    key = f"{e.key}.concurrency.max"
    return Outcome(evidence, Proposal(f"raise concurrency.max {hi} -> {new_hi} (the month at full size grows; the "
                                      "expected month keeps the minimum's replicas)", {key: new_hi}, {key: hi}))


SPEC = FindingSpec(
    id="serving-latency-at-max-concurrency",
    severity="critical",
    summary="a serving endpoint's request P99 over the SLA while it sat at its max provisioned concurrency",
    sql="""\
SELECT endpoint AS workload, CAST(NULL AS STRING) AS cluster_id, p99_ms, p50_ms, requests, peak_concurrency,
       p95_concurrency, min_concurrency, max_concurrency, minutes_at_max, minutes
FROM endpoint_summary
WHERE p99_ms > {{ sla }}
  AND CAST(100 AS DOUBLE) * minutes_at_max / nullif(minutes, 0) >= {{ t.at_max_share_percent }}
""",
    build=build,
    thresholds=("sla_p99_ms", "serving_at_max_percent", "at_max_share_percent"),
    plant=Plant("serving", traffic=lambda traffic, endpoint: replace(traffic, load=1.0, latency_ms=700.0,
                                                                     tail_factor=4.0)),
    subject="endpoint",
)
