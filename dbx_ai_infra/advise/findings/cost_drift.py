"""cost-drift: the bill's DBUs against the cost model's expected DBU part: the usage assumption that explains it."""

from __future__ import annotations

from dbx_ai_infra.advise.edits import usage_edit, usage_figure, usage_key
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import Target
from dbx_ai_infra.dbxtypes.money import money
from dbx_ai_infra.dbxtypes.vocabulary import HOURS_PER_MONTH


def build(row: Row, t: Target, c: Context) -> Outcome:
    billed, expected = num(row, "billed_monthly_usd"), num(row, "dbu_monthly_expected")
    ratio = billed / expected if expected else 0.0
    evidence = (f"billed ${billed:,.0f}/month of DBUs ({money(num(row, 'billed_usd'))} over "
                f"{num(row, 'usage_hours'):,.0f} h of usage, scaled to a month) against the stack's expected DBU "
                f"part ${expected:,.0f}/month ({100 * (ratio - 1):+.0f}%). The bill holds DBUs only; the cloud bills "
                "the VMs.")
    if int(num(row, "unpriced_rows")):
        evidence += f" {int(num(row, 'unpriced_rows'))} usage row(s) had no list price and count as $0."
    key = usage_key(t)
    if key is None and t.role == "inference":  # always on: the base is fixed, the burst explains the rest
        base = t.dbu_hourly * HOURS_PER_MONTH
        burst = expected - base
        now = float(usage_figure(t, c, "inference_burst_hours_per_month")[1] or 0)
        if burst <= 0 or billed <= base or now <= 0:
            return Outcome(evidence, note=("the always-on base alone costs more than the bill: check that the export "
                                           "covers the whole window, and the node types the cluster ran on."))
        new = now * (billed - base) / burst
        if new <= HOURS_PER_MONTH:
            return Outcome(evidence, Proposal(f"the usage assumption that explains the bill: "
                                              f"inference_burst_hours_per_month {now:g} -> {new:,.0f}",
                                              *usage_edit(t, c, "inference_burst_hours_per_month", round(new))))
        # bursting all month long is not enough: more workers above the base, on average, while bursting
        extra = min(t.extra_workers_expected * new / HOURS_PER_MONTH, float(t.max_workers - t.min_workers))
        edit, current = usage_edit(t, c, "inference_burst_hours_per_month", HOURS_PER_MONTH)
        more = usage_edit(t, c, "inference_burst_avg_extra_workers", round(extra, 1))
        edit.update(more[0])
        current.update(more[1])
        return Outcome(evidence, Proposal(f"the usage assumptions that explain the bill: bursting all month "
                                          f"({HOURS_PER_MONTH:g} h) with {extra:.1f} workers above the base on "
                                          "average", edit, current))
    if key is None:
        return Outcome(evidence)
    now = float(usage_figure(t, c, key)[1] or 0)
    new = now * ratio
    cap = 24.0 if key == "dev_hours_per_working_day" else float(HOURS_PER_MONTH)
    note = None
    if new > cap:
        note = (f"even {cap:g} h does not explain the bill: the cluster ran larger than the stack says (check the "
                "node types and worker counts it ran with) or the export holds clusters of another stack.")
        new = cap
    return Outcome(evidence, Proposal(f"the usage assumption that explains the bill: {key} {now:g} -> {new:,.1f}",
                                      *usage_edit(t, c, key, round(new, 1))), note)

SPEC = FindingSpec(
    id="cost-drift",
    severity="warning",
    summary="the billed DBUs differ from the cost model's expected DBU part",
    sql="""\
-- The Databricks bill holds DBUs only (the cloud bills the VMs): compared with the DBU part of the expected cost.
SELECT workload, CAST(NULL AS STRING) AS cluster_id, billed_usd, billed_monthly_usd, dbu_monthly_expected, dbus,
       usage_hours, dbu_hourly, unpriced_rows
FROM workload_summary
WHERE billed_monthly_usd IS NOT NULL AND dbu_monthly_expected > 0
  AND abs(billed_monthly_usd - dbu_monthly_expected) > {{ t.cost_drift_percent }} / 100.0 * dbu_monthly_expected
""",
    build=build,
    thresholds=("cost_drift_percent",),
    plant=Plant("inference", dbu_factor=2.0),
)
