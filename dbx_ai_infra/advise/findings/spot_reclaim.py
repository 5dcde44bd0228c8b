"""spot-reclaim-hits-base: spot reclaims that took an inference cluster below its base or broke the SLA (a larger
on-demand base), or that hit training runs (did they resume from the checkpoint Volume?)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dbx_ai_infra.advise.edits import resize, resize_text
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import Target


def build(row: Row, t: Target, c: Context) -> Outcome:
    n = int(num(row, "reclaims"))
    if t.role == "training":
        runs, resumed = int(num(row, "runs_hit")), int(num(row, "runs_resumed"))
        evidence = (f"{n} spot reclaim(s) hit {runs} of {int(num(row, 'runs'))} run(s) ({n / max(runs, 1):.1f} per "
                    f"run hit); {resumed} of those run(s) had busy GPUs again after the reclaim.")
        if resumed >= runs:  # the runs came back: worth knowing, not urgent
            return Outcome(evidence, note="runs resumed after the reclaims: check they resumed from the checkpoint "
                                          "Volume rather than from the start.", severity="info")
        return Outcome(evidence, note=f"{runs - resumed} run(s) did not resume after a reclaim: check the job's "
                                      "retries and that the training script restarts from its last checkpoint on the "
                                      "Volume.")
    lo = t.min_workers
    least = int(num(row, "least_workers_after")) if row.get("least_workers_after") is not None else lo
    below, breach = int(num(row, "below_min")), int(num(row, "followed_by_breach"))
    evidence = (f"{n} spot reclaim(s) on the inference cluster: {below} took it below its minimum of {lo} workers "
                f"(down to {least}), {breach} were followed by an SLA breach within "
                f"{c.settings.breach_window_minutes:g} minutes.")
    edit, current = resize(t, c, lo=lo + max(1, lo - least))
    return Outcome(evidence, Proposal(f"a larger on-demand base (the base is on-demand; spot stays above it): "
                                      f"{resize_text(edit, current).removeprefix('raise ')}", edit, current))


def _events(run: Any, target: Target, at: Callable[[int], int]) -> list[dict[str, Any]]:
    """Three reclaims in the run, each taking the cluster one worker below its minimum."""
    return [{"cluster_id": run.cluster_id, "timestamp": at((k + 1) * run.minutes // 4), "type": "NODES_LOST",
             "details": {"reason": {"code": "SPOT_INSTANCE_TERMINATION", "type": "CLOUD_FAILURE"},
                         "current_num_workers": max(target.min_workers - 1, 0),
                         "target_num_workers": target.min_workers}} for k in range(3)]


SPEC = FindingSpec(
    id="spot-reclaim-hits-base",
    severity="critical",
    summary="spot reclaims below the inference base or followed by an SLA breach; reclaimed training runs",
    sql="""\
-- Inference: reclaims that took the cluster below its minimum or were followed by an SLA breach. Training: every
-- run a reclaim hit, and whether its GPUs were busy again after the last reclaim (the run resumed).
SELECT workload, CAST(NULL AS STRING) AS cluster_id, role, reclaims, runs_hit, below_min, followed_by_breach,
       least_workers_after, min_workers, runs, runs_resumed
FROM workload_summary
WHERE reclaims > 0 AND (role = 'training' OR below_min > 0 OR followed_by_breach > 0)
""",
    build=build,
    thresholds=("breach_window_minutes", "sla_p99_ms"),
    plant=Plant("inference", events=_events),
)
