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
    from dbx_ai_infra.advise.telemetry import plant_targets
    from dbx_ai_infra.engine.pipeline import build_plan

    plan = build_plan("prod", with_policies=False, with_cost=True)
    for only in (["prod-training"], ["training"], ["prod-training-run"]):
        targets, _, where = plant_targets(plan, ["gpu-underutilized"], only)
        assert [t.kind for t in targets] == ["jobs_compute"], only
        assert where == {"gpu-underutilized": targets[0].workload}


def test_the_goals_table_judges_issue_53s_goals_and_no_ratio_of_unlike_runs() -> None:
    """Issue 53, item 5: the table of goals shows `preview --stack prod` against 0.45x the floor (it showed issue 23's
    0.75x, so 0.57x read as met) and checkov at 50x, and the advise goals; a checkov run whose findings differ from
    the planted ones (parse errors, missed checks) is not judged, whatever its ratio."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_run", RUN)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up
    try:
        spec.loader.exec_module(bench)
    finally:
        del sys.modules[spec.name]
    summary = {"floor": {"preview_ratios": {"prod": 0.47}, "ten_check_ratio": 0.9},
               "advise": {"big": 21_038_400, "results": {21_038_400: {"analysis": 2.9, "scan_all": 1.0,
                                                                        "analysis_cpu": 2.5, "scan_cpu": 1.0,
                                                                        "analysis_rss": 410.0}}},
               "peer": {"sizes": {5000: {"checkov": 280.0, "same": 4.0, "honest": False}}}}
    rows = {goal: (measured, met) for goal, measured, met in bench.start_up_goals(summary)}
    assert rows["`preview --stack prod` <= 0.45x the floor (issue 53)"] == ("0.47x", "**NO**")
    advise = next(v for k, v in rows.items() if k.startswith("`advise`'s analysis"))
    assert advise == ("2.90x (CPU time 2.50x)", "yes")
    assert rows["its peak memory <= 400 MiB (issue 53)"][1] == "**NO**"
    checkov = rows["against checkov, the same 8 rules, 5,000 clusters: >= 50x faster (issue 53)"]
    assert checkov == ("70.0x (findings differ: not like for like)", "not judged")
    summary["peer"]["sizes"][5000]["honest"] = True
    summary["peer"]["sizes"][5000]["checkov"] = 160.0
    rows = {goal: (measured, met) for goal, measured, met in bench.start_up_goals(summary)}
    assert rows["against checkov, the same 8 rules, 5,000 clusters: >= 50x faster (issue 53)"] == ("40.0x", "**NO**")
