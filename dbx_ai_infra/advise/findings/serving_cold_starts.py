"""serving-cold-starts: a scale-to-zero endpoint whose requests after an idle stretch (launches) waited longer than
the SLA: keep it warm, priced."""

from __future__ import annotations

from dataclasses import replace

from dbx_ai_infra.advise.edits import concurrency_step
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, figure, num
from dbx_ai_infra.advise.targets import EndpointTarget


def build(row: Row, e: EndpointTarget, c: Context) -> Outcome:
    launches, errors = int(num(row, "launches")), int(num(row, "launch_errors"))
    evidence = (f"{launches:,} launch{'es' if launches != 1 else ''} from zero (a request after "
                f"{c.settings.serving_scale_to_zero_minutes:g} idle minutes or more): their latency P50 "
                f"{figure(row.get('launch_p50_ms'))} ms, worst {figure(row.get('launch_max_ms'))} ms (SLA "
                f"{c.settings.sla_p99_ms:g} ms)" + (f", {errors} of them failed (5xx)" if errors else "") +
                f"; every other request's P50 was {figure(row.get('p50_ms'))} ms.")
    key = e.key
    edit: dict[str, object] = {f"{key}.scale_to_zero": False}
    current: dict[str, object] = {f"{key}.scale_to_zero": True}
    lo = e.min_concurrency
    if lo == 0:  # warm means at least one replica
        edit[f"{key}.concurrency.min"], current[f"{key}.concurrency.min"] = concurrency_step(1), lo
    return Outcome(evidence, Proposal("keep the endpoint warm (scale_to_zero false): no launch waits, the month pays "
                                      "for its replicas around the clock", edit, current))


SPEC = FindingSpec(
    id="serving-cold-starts",
    severity="warning",
    summary="a scale-to-zero endpoint's launches (cold starts) slower than the SLA",
    sql="""\
SELECT endpoint AS workload, CAST(NULL AS STRING) AS cluster_id, launches, launch_p50_ms, launch_max_ms,
       launch_errors, p50_ms, requests, min_concurrency
FROM endpoint_summary
WHERE scale_to_zero AND launches > 0 AND launch_p50_ms > {{ sla }}
""",
    build=build,
    thresholds=("sla_p99_ms", "serving_scale_to_zero_minutes"),
    plant=Plant("serving", traffic=lambda traffic, endpoint: replace(traffic, active_minutes=60,
                                                                     idle_minutes=90, launch_ms=95000.0),
                applies=lambda endpoint: endpoint.scale_to_zero),
    subject="endpoint",
)
