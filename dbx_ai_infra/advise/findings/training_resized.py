"""training-resized: a training cluster resized while it ran (the data-parallel world size changed mid-run)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dbx_ai_infra.advise.edits import resize
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import Target


def build(row: Row, t: Target, c: Context) -> Outcome:
    largest = int(num(row, "largest_target"))
    evidence = (f"the training cluster was resized while it ran: {int(num(row, 'off_size'))} resize(s) to a size "
                f"other than its {t.min_workers} workers (to {int(num(row, 'smallest_target'))}.."
                f"{largest}) in {int(num(row, 'runs_resized'))} run(s). A resize mid-run changes the data-parallel "
                "world size and restarts the workers.")
    if largest > t.min_workers:
        edit, current = resize(t, c, lo=largest)
        return Outcome(evidence, Proposal(f"fix the size the run wanted: num_workers {t.min_workers} -> {largest} "
                                          f"(or keep {t.min_workers} and stop resizing by hand: the stack's cluster "
                                          "policy fixes num_workers)", edit, current))
    return Outcome(evidence, note=f"keep num_workers {t.min_workers} and stop resizing it by hand (the cluster policy "
                                  "fixes it).")


def _events(run: Any, target: Target, at: Callable[[int], int]) -> list[dict[str, Any]]:
    """Somebody resizes the run by two workers halfway."""
    return [{"cluster_id": run.cluster_id, "timestamp": at(run.minutes // 2), "type": "RESIZING",
             "details": {"current_num_workers": run.workers, "target_num_workers": run.workers + 2,
                         "user": "someone@example.com"}}]


SPEC = FindingSpec(
    id="training-resized",
    severity="warning",
    summary="a training cluster resized while it ran",
    sql="""\
SELECT workload, first_off_size_cluster AS cluster_id, off_size, runs_resized, min_workers, largest_target,
       smallest_target, max_workers
FROM workload_summary
WHERE role = 'training' AND off_size > 0
""",
    build=build,
    plant=Plant("training", events=_events),
)
