"""Every case of the benchmark runs, at the least size (`bench/run.py --tiny`): a change that breaks one (a command it
runs, an option it passes, a stack it edits) fails here, not at the next recording. No figure is judged: the
benchmark's speed goals are judged by the benchmark itself (no test times anything)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RUN = REPO / "bench" / "run.py"
CHECKOV = REPO / "bench" / ".venv-checkov" / ".installed"


@pytest.mark.parametrize("section", ["floor", "team", "growth", "audit", "advise", "peer", "terraform"])
def test_every_benchmark_section_runs_at_a_tiny_size(section: str, tmp_path: Path) -> None:
    if section == "peer" and not CHECKOV.exists():
        pytest.skip("checkov's venv (bench/.venv-checkov) is made by the benchmark's first run, not by the tests")
    out = tmp_path / "results.md"
    proc = subprocess.run([sys.executable, str(RUN), "--tiny", "--only", section, "--out", str(out)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    assert "(quick)" in text and "## Machine and run" in text
    assert "Traceback" not in proc.stderr


def test_the_advise_case_plants_on_the_job_cluster_of_training(tmp_path: Path) -> None:
    """Issue 53, item 4: the bench's stack trains in a job (no all-purpose training cluster); sample-usage plants
    gpu-underutilized on the job's cluster, which `--only` names as the stack's cluster of that workload would be
    named (``<stack>-training``), as its tags name it (``training``) or by the job's name."""
    from stackplan.pipeline import build_plan
    from stackplan_advise.telemetry import plant_targets

    plan = build_plan("prod", with_policies=False, with_cost=True)
    for only in (["prod-training"], ["training"], ["prod-training-run"]):
        targets, _, where = plant_targets(plan, ["gpu-underutilized"], only)
        assert [t.kind for t in targets] == ["jobs_compute"], only
        assert where == {"gpu-underutilized": targets[0].workload}
