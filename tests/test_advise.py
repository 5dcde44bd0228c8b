"""`python -m stackplan advise`: each finding on generated telemetry that plants it and on data that does not; the
proposals' cost deltas against the cost model by hand; inputs in every accepted shape; bad input; reports; SQL."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbx_ai_infra.advise.findings import PLANTS
from dbx_ai_infra.advise.telemetry import PLANT_ROLE, write_exports
from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.engine.pipeline import build_plan
from dbx_ai_infra.pricing import load_prices

REPO = Path(__file__).resolve().parents[1]
SLA = 1000.0
DAYS = 2

# One stack with all three kinds of cluster: multi-node training on a low-bandwidth family (g5: 10 Gbps, no GPU
# interconnect), autoscaled inference that stops when idle, and a single-node dev cluster.
STACK = """\
config:
  dbx-ai-infra:cloud: aws
  dbx-ai-infra:gpu_family: a10g
  dbx-ai-infra:single_user_name: ml@example.com
  dbx-ai-infra:tags: {workload: genai, cost_center: ai-team}
  dbx-ai-infra:training:
    num_workers: 4
    model: {params_billions: 7, precision: bf16, method: lora}
  dbx-ai-infra:inference:
    min_workers: 2
    max_workers: 6
    autotermination_minutes: 60
    model: {params_billions: 7, precision: fp16}
  dbx-ai-infra:dev:
    model: {params_billions: 7, precision: fp16}
    autotermination_minutes: 60
  dbx-ai-infra:usage:
    inference_hours_per_month: 300
  dbx-ai-infra:serving:
    endpoints:
      obs-chat:
        entity: ai.models.chat
        entity_version: "1"
        model_registered: true
        model: {params_billions: 7, precision: fp16}
        concurrency: {min: 8, max: 16}
        scale_to_zero: false
      obs-burst:
        entity: ai.models.chat
        entity_version: "1"
        model_registered: true
        model: {params_billions: 7, precision: fp16}
        concurrency: {min: 4, max: 8}
        scale_to_zero: true
"""
WORKLOAD = {"training": "obs-training", "inference": "obs-inference", "interactive": "obs-dev"}
# a serving plant goes to the first endpoint (in the plan's order) it applies to: the over-provisioned one needs a
# minimum above one replica, the cold starts a scale-to-zero endpoint
ENDPOINT = {"serving-latency-at-max-concurrency": "obs-burst", "serving-overprovisioned": "obs-chat",
            "serving-cold-starts": "obs-burst"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("advise")


@pytest.fixture(scope="module")
def stack_file(workdir: Path) -> Path:
    path = workdir / "Pulumi.obs.yaml"
    path.write_text(STACK, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def plan(stack_file: Path) -> Any:
    return build_plan(str(stack_file), with_policies=False, with_cost=True)


@pytest.fixture(scope="module")
def advise(workdir: Path, stack_file: Path, plan: Any) -> Any:
    """plant (or "none", or "none-parquet") -> (the advise JSON document, the exports directory)."""

    @functools.cache
    def run(plant: str, fmt: str = "csv") -> tuple[dict[str, Any], Path]:
        out = workdir / f"{plant}-{fmt}"
        write_exports(out, plan, plant=[] if plant == "none" else [plant], days=DAYS, fmt=fmt)
        doc = advise_json(stack_file, out, workdir / f"{plant}-{fmt}.json")
        return doc, out

    return run


def advise_json(stack_file: Path, usage: Path, out: Path, *extra: str) -> dict[str, Any]:
    code = main(["advise", "--stack", str(stack_file), "--usage", str(usage), "--sla-p99-ms", str(SLA),
                 "--json", "--out", str(out), *extra])
    assert code == 0
    return dict(json.loads(out.read_text(encoding="utf-8")))


def ids_for(doc: dict[str, Any], workload: str) -> set[str]:
    return {f["id"] for f in doc["findings"] if f["workload"] == workload}


def finding(doc: dict[str, Any], fid: str) -> dict[str, Any]:
    found = [f for f in doc["findings"] if f["id"] == fid]
    assert len(found) == 1, [f["id"] for f in doc["findings"]]
    return found[0]


# --------------------------------------------------------------------------------------------------------------------
# Each finding: planted -> found on its workload; not planted -> not found
# --------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("plant", PLANTS)
def test_a_planted_problem_is_found_on_its_workload(advise: Any, plant: str) -> None:
    doc, _ = advise(plant)
    assert plant in ids_for(doc, ENDPOINT[plant] if PLANT_ROLE[plant] == "serving" else WORKLOAD[PLANT_ROLE[plant]])
    # and nothing else is out of order: the other findings are the healthy ones
    others = {f["id"] for f in doc["findings"]} - {plant, "gpu-balanced"}
    assert others == set()


@pytest.mark.parametrize("plant", PLANTS)
def test_healthy_data_has_none_of_the_problems(advise: Any, plant: str) -> None:
    doc, _ = advise("none")
    assert plant not in {f["id"] for f in doc["findings"]}


def test_healthy_data_is_balanced_on_every_workload_and_a_low_gpu_is_not(advise: Any) -> None:
    healthy, _ = advise("none")
    assert {f["workload"] for f in healthy["findings"] if f["id"] == "gpu-balanced"} == set(WORKLOAD.values())
    low, _ = advise("gpu-underutilized")
    assert "gpu-balanced" not in ids_for(low, "obs-training")
    slow, _ = advise("latency-over-sla-scale-out")  # GPUs busy but over the SLA: not balanced
    assert "gpu-balanced" not in ids_for(slow, "obs-inference")


def test_findings_carry_the_contract_fields(advise: Any) -> None:
    doc, _ = advise("spot-reclaim-hits-base")
    for f in doc["findings"]:
        assert {"id", "severity", "workload", "cluster_id", "evidence", "proposal", "monthly_cost_delta"} <= set(f)
        assert f["severity"] in ("critical", "warning", "info")
    reclaim = finding(doc, "spot-reclaim-hits-base")
    assert reclaim["severity"] == "critical"
    assert "3 spot reclaim(s)" in reclaim["evidence"] and "below its minimum of 2" in reclaim["evidence"]
    assert reclaim["proposal"]["edit"] == {"dbx-ai-infra:inference.min_workers": 3}


def test_the_not_gpu_bound_finding_names_cpu_and_network_and_proposes_no_gpu_change(advise: Any) -> None:
    doc, _ = advise("latency-over-sla-not-gpu-bound")
    f = finding(doc, "latency-over-sla-not-gpu-bound")
    assert f["proposal"] is None and f["monthly_cost_delta"] is None
    assert "CPU" in f["evidence"] and "network" in f["evidence"] and "Mbit/s" in f["evidence"]
    assert "data pipeline" in f["note"] and "batch size" in f["note"]
    assert f["figures"]["cpu_percent"] > 80


def test_scale_out_raises_the_minimum_and_the_maximum_when_it_sat_there(advise: Any) -> None:
    doc, _ = advise("latency-over-sla-scale-out")
    f = finding(doc, "latency-over-sla-scale-out")
    edit = f["proposal"]["edit"]
    assert edit["dbx-ai-infra:inference.min_workers"] > 2
    assert edit["dbx-ai-infra:inference.max_workers"] > 6  # it sat at 6 half of the time
    assert f["monthly_cost_delta"] > 0


def test_training_resize_and_churn_and_interconnect_propose_edits(advise: Any) -> None:
    resized = finding(advise("training-resized")[0], "training-resized")
    assert resized["proposal"]["edit"] == {"dbx-ai-infra:training.num_workers": 6}
    churn = finding(advise("autoscaling-churn")[0], "autoscaling-churn")
    assert churn["figures"]["resizes_per_hour"] > 4
    assert churn["proposal"]["edit"]["dbx-ai-infra:inference.min_workers"] == 3
    wire = finding(advise("poor-scaling-interconnect")[0], "poor-scaling-interconnect")
    assert wire["proposal"]["edit"] == {"dbx-ai-infra:training.node_type_id": "g5.12xlarge",  # 4 GPUs on 1 node
                                        "dbx-ai-infra:training.num_workers": 1}


# --------------------------------------------------------------------------------------------------------------------
# Cost deltas, by hand from the price book (the figures the cost model reads)
# --------------------------------------------------------------------------------------------------------------------

def test_fewer_training_workers_saves_their_spot_hours(advise: Any, plan: Any) -> None:
    f = finding(advise("gpu-underutilized")[0], "gpu-underutilized")
    assert f["proposal"]["edit"] == {"dbx-ai-infra:training.num_workers": 1}  # ceil(4 x 15% / 60%)
    book = load_prices()
    node = book.node("g5.xlarge")
    assert node is not None and node.usd_per_hour_on_demand and node.dbu_per_hour
    # workers beyond the first node are spot (first_on_demand 1): VM at g5.xlarge's spot factor, DBUs in full
    factor = book.node_spot("aws", "g5.xlarge")[0]
    worker = node.usd_per_hour_on_demand * factor + node.dbu_per_hour * book.usd_per_dbu("aws", "all_purpose")
    hours = plan.assumptions["training_hours_per_month"]
    assert f["monthly_cost_delta"] == pytest.approx(-3 * worker * hours, abs=0.01)


def test_a_shorter_auto_termination_saves_the_idle_hours(advise: Any, plan: Any) -> None:
    f = finding(advise("idle-cluster")[0], "idle-cluster")
    edit, current = f["proposal"]["edit"], f["proposal"]["current"]
    assert edit["dbx-ai-infra:dev.autotermination_minutes"] == 15
    # each day's run ended with 150 idle minutes; 15 stay: 135 minutes a run, 2 runs in 2 days, scaled to the month
    saved_month = 2 * 135 / 60 * 730 / (DAYS * 24)
    days = plan.assumptions["working_days_per_month"]
    new_hours = round(current["dbx-ai-infra:usage.dev_hours_per_working_day"] - saved_month / days, 1)
    assert edit["dbx-ai-infra:usage.dev_hours_per_working_day"] == new_hours
    book = load_prices()
    node = book.node("g5.xlarge")
    assert node is not None and node.usd_per_hour_on_demand and node.dbu_per_hour
    hourly = node.usd_per_hour_on_demand + node.dbu_per_hour * book.usd_per_dbu("aws", "all_purpose")
    delta = (new_hours - current["dbx-ai-infra:usage.dev_hours_per_working_day"]) * days * hourly
    assert f["monthly_cost_delta"] == pytest.approx(delta, abs=0.01)


def test_cost_drift_compares_dbus_with_the_dbu_part_and_explains_the_bill(advise: Any, plan: Any) -> None:
    f = finding(advise("cost-drift")[0], "cost-drift")
    figures = f["figures"]
    entry = next(e for e in plan.cost.resources.values() if e.name == "obs-inference-cluster")
    assert figures["dbu_monthly_expected"] == pytest.approx(float(entry.dbu_monthly_expected))
    assert float(entry.dbu_monthly_expected) < float(entry.monthly.expected)  # DBUs only, not the VMs
    assert figures["billed_monthly_usd"] == pytest.approx(2 * figures["dbu_monthly_expected"], rel=0.02)
    # the hours that explain twice the bill: twice the assumption
    assert f["proposal"]["edit"] == {"dbx-ai-infra:usage.inference_hours_per_month": 600.0}
    healthy, _ = advise("none")
    assert not [x for x in healthy["findings"] if x["id"] == "cost-drift"]


def test_a_proposal_the_spec_refuses_is_marked_and_not_priced(advise: Any, stack_file: Path, workdir: Path) -> None:
    _, usage = advise("cost-drift")
    config = workdir / "low-cap.json"  # the workers cap of the spec lowered to the current minimum
    config.write_text(json.dumps({"databricks-cluster-configure-worker-bounds": {"max_workers_cap": 6}}))
    doc = advise_json(stack_file, usage, workdir / "capped.json", "--policy-config", str(config))
    assert doc["findings"]  # the run itself works
    _, scale = advise("latency-over-sla-scale-out")
    capped = advise_json(stack_file, scale, workdir / "capped2.json", "--policy-config", str(config))
    f = finding(capped, "latency-over-sla-scale-out")
    assert f["proposal"]["blocked_by"] and f["proposal"]["blocked_by"][0].startswith("invalid stack")
    assert f["monthly_cost_delta"] is None


# --------------------------------------------------------------------------------------------------------------------
# Thresholds: stated once, in the policy config's advise section
# --------------------------------------------------------------------------------------------------------------------

def test_thresholds_come_from_the_policy_config(advise: Any, stack_file: Path, workdir: Path) -> None:
    _, usage = advise("gpu-underutilized")
    config = workdir / "lower.json"
    config.write_text(json.dumps({"advise": {"gpu_low_percent": 10}}))
    doc = advise_json(stack_file, usage, workdir / "lower-out.json", "--policy-config", str(config))
    assert "gpu-underutilized" not in {f["id"] for f in doc["findings"]}
    assert doc["thresholds"]["gpu_low_percent"] == 10


def test_the_findings_read_the_configured_settings(advise: Any, stack_file: Path, workdir: Path) -> None:
    """A finding's sentence and its proposal take the configured lines (the typed settings), not the defaults."""
    default, usage = advise("gpu-underutilized")
    config = workdir / "lines.json"
    config.write_text(json.dumps({"advise": {"gpu_low_percent": 25, "gpu_high_percent": 90}}))
    doc = advise_json(stack_file, usage, workdir / "lines-out.json", "--policy-config", str(config))
    before, after = finding(default, "gpu-underutilized"), finding(doc, "gpu-underutilized")
    assert "(below 30%)" in before["evidence"] and "(below 25%)" in after["evidence"]
    assert "about 60% GPU use" in before["proposal"]["summary"] and "about 90% GPU use" in after["proposal"]["summary"]
    assert doc["thresholds"]["gpu_high_percent"] == 90


def test_the_settings_lay_the_command_lines_sla_over_the_config() -> None:
    from dbx_ai_infra.dbxtypes.advise_thresholds import advise_settings

    assert advise_settings({"sla_p99_ms": 800.0}).sla_p99_ms == 800
    assert advise_settings({"sla_p99_ms": 800.0}, 250.0).sla_p99_ms == 250
    assert advise_settings({"min_busy_minutes": 45.0}).min_busy_minutes == 45  # an integer setting, typed
    assert advise_settings({}).sla_p99_ms is None


def test_a_finding_names_only_settings_that_exist() -> None:
    from dbx_ai_infra.advise.findings import FINDINGS
    from dbx_ai_infra.advise.record import FindingSpec

    spec = FINDINGS[0]
    with pytest.raises(ValueError, match="gpu_low_pct is not a field of AdviseSettings"):
        FindingSpec(spec.id, spec.severity, spec.summary, spec.sql, spec.build, thresholds=("gpu_low_pct",))


def test_without_an_sla_latency_is_not_judged(advise: Any, stack_file: Path, workdir: Path) -> None:
    _, usage = advise("latency-over-sla-scale-out")
    out = workdir / "no-sla.json"
    assert main(["advise", "--stack", str(stack_file), "--usage", str(usage), "--json", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert not {f["id"] for f in doc["findings"]} & {"latency-over-sla-scale-out", "latency-over-sla-not-gpu-bound"}
    assert any("latency was not judged" in n for n in doc["notes"])


def test_the_sla_may_come_from_the_policy_config(advise: Any, stack_file: Path, workdir: Path) -> None:
    _, usage = advise("latency-over-sla-scale-out")
    config = workdir / "sla.json"
    config.write_text(json.dumps({"advise": {"sla_p99_ms": SLA}}))
    out = workdir / "sla-out.json"
    assert main(["advise", "--stack", str(stack_file), "--usage", str(usage), "--policy-config", str(config),
                 "--json", "--out", str(out)]) == 0
    assert "latency-over-sla-scale-out" in {f["id"] for f in json.loads(out.read_text())["findings"]}


# --------------------------------------------------------------------------------------------------------------------
# Inputs: Parquet as CSV; the Clusters API JSON; the collector's directory of files; job clusters by tags
# --------------------------------------------------------------------------------------------------------------------

def _ids(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((f["id"], f["workload"]) for f in doc["findings"])


def test_parquet_exports_give_the_same_advice_as_csv(advise: Any) -> None:
    csv_doc, _ = advise("spot-reclaim-hits-base")
    parquet_doc, usage = advise("spot-reclaim-hits-base", "parquet")
    assert (usage / "gpu_timeline.parquet").is_file() and not (usage / "gpu_timeline.csv").exists()
    assert _ids(parquet_doc) == _ids(csv_doc)
    assert [f["monthly_cost_delta"] for f in parquet_doc["findings"]] == \
        [f["monthly_cost_delta"] for f in csv_doc["findings"]]


def test_clusters_as_an_api_list_and_gpu_timeline_as_the_collector_writes_it(advise: Any, stack_file: Path,
                                                                            workdir: Path) -> None:
    import duckdb

    baseline, usage = advise("gpu-underutilized")
    copy = workdir / "api-shape"
    shutil.copytree(usage, copy)
    con = duckdb.connect()
    rows = con.execute(f"SELECT cluster_id, cluster_name, tags FROM read_csv('{copy / 'clusters.csv'}')").fetchall()
    (copy / "clusters.csv").unlink()
    (copy / "clusters.json").write_text(json.dumps({"clusters": [
        {"cluster_id": c, "cluster_name": n, "custom_tags": json.loads(t), "state": "TERMINATED"}
        for c, n, t in rows]}))
    # the collector's layout: whole CSV files under gpu_timeline/<cluster_id>/<instance_id>/ (here one per node and
    # hour rather than minute, to keep the test small), each with the header; a file being written has a hidden
    # temporary name and is not read
    timeline = copy / "gpu_timeline"
    header = (copy / "gpu_timeline.csv").read_text().splitlines()[0]
    groups: dict[tuple[str, str, str], list[str]] = {}
    for line in (copy / "gpu_timeline.csv").read_text().splitlines()[1:]:
        cells = line.split(",")
        groups.setdefault((cells[0], cells[1], cells[4][:13].replace(" ", "T")), []).append(line)
    for (cluster, instance, hour), lines in groups.items():
        folder = timeline / cluster / instance
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{hour}-00-00Z.csv").write_text("\n".join([header, *lines]) + "\n")
    (folder / ".partial.csv.tmp").write_text(header + "\nnot,a,whole,file\n")
    (copy / "gpu_timeline.csv").unlink()
    con.close()
    assert len(list(timeline.rglob("*.csv"))) > 5
    doc = advise_json(stack_file, copy, workdir / "api-shape.json")
    assert _ids(doc) == _ids(baseline)


def test_without_a_bill_idle_hours_scale_by_the_telemetry_window(advise: Any, stack_file: Path,
                                                                 workdir: Path) -> None:
    with_bill, usage = advise("idle-cluster")
    copy = workdir / "no-bill"
    shutil.copytree(usage, copy)
    (copy / "usage.csv").unlink()
    (copy / "list_prices.csv").unlink()
    doc = advise_json(stack_file, copy, workdir / "no-bill.json")
    f, g = finding(doc, "idle-cluster"), finding(with_bill, "idle-cluster")
    assert f["proposal"]["edit"] == g["proposal"]["edit"]  # both windows are the same two whole days
    assert "cost-drift" not in {x["id"] for x in doc["findings"]}
    assert any("usage, list_prices" in n for n in doc["notes"])


def test_cluster_events_as_the_api_response(advise: Any, stack_file: Path, workdir: Path) -> None:
    baseline, usage = advise("spot-reclaim-hits-base")
    copy = workdir / "events-json"
    shutil.copytree(usage, copy)
    events = [json.loads(line) for line in (copy / "cluster_events.jsonl").read_text().splitlines()]
    (copy / "cluster_events.jsonl").unlink()
    half = len(events) // 2  # two pages, one after another, as a paging export writes them
    (copy / "cluster_events.json").write_text(json.dumps({"events": events[:half], "next_page": {"offset": 1}})
                                              + "\n" + json.dumps({"events": events[half:]}))
    doc = advise_json(stack_file, copy, workdir / "events-json.json")
    assert _ids(doc) == _ids(baseline)
    assert finding(doc, "spot-reclaim-hits-base")["figures"]["reclaims"] == 3


def test_job_clusters_are_matched_by_their_tags(tmp_path: Path) -> None:
    plan = build_plan("prod", with_policies=False, with_cost=True)
    out = tmp_path / "usage"
    info = write_exports(out, plan, plant=["training-resized"], days=DAYS)
    doc = advise_json(Path("prod"), out, tmp_path / "prod.json")
    job = next(w for w in doc["workloads"] if w["workload"] == "prod-training-run")
    assert job["runs"] == DAYS and job["busy_minutes"] > 0  # job-<n>-run-<m> clusters, matched by dbx_stack
    names = (out / "clusters.csv").read_text()
    assert "job-" in names
    assert info["planted"] == {"training-resized": "prod-training-run"}  # prod trains on its job alone


def test_clusters_of_another_stack_are_left_out_and_counted(advise: Any, stack_file: Path, workdir: Path) -> None:
    _, usage = advise("none")
    copy = workdir / "foreign"
    shutil.copytree(usage, copy)
    with open(copy / "clusters.csv", "a", encoding="utf-8") as handle:
        handle.write('other-1,someone-elses,"{""dbx_stack"": ""other"", ""workload_type"": ""training""}"\n')
    doc = advise_json(stack_file, copy, workdir / "foreign.json")
    assert any("1 cluster(s) of the export belong to no workload" in n for n in doc["notes"])


# --------------------------------------------------------------------------------------------------------------------
# Bad input: exit 2, a sentence naming the file, the field and the fix; nothing written
# --------------------------------------------------------------------------------------------------------------------

def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line in-process: its exit code and what it printed (an exception escaping ``main`` would be the
    traceback a user sees; tests/test_stackspec.py runs the real process)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["stackplan", *args], code, out.getvalue(), err.getvalue())


def test_bad_inputs_exit_2_with_the_file_the_field_and_the_fix(advise: Any, stack_file: Path,
                                                               tmp_path: Path) -> None:
    _, usage = advise("none")
    out = tmp_path / "out.json"
    # not a directory
    result = _run_cli("advise", "--stack", str(stack_file), "--usage", str(tmp_path / "nope"), "--out", str(out))
    assert result.returncode == 2 and "--usage" in result.stderr and "Fix:" in result.stderr
    # a column missing
    broken = tmp_path / "broken"
    shutil.copytree(usage, broken)
    lines = (broken / "requests.csv").read_text().splitlines()
    (broken / "requests.csv").write_text("\n".join(",".join(line.split(",")[:3]) for line in lines) + "\n")
    result = _run_cli("advise", "--stack", str(stack_file), "--usage", str(broken), "--out", str(out))
    assert result.returncode == 2
    assert "requests.csv" in result.stderr and "status_code" in result.stderr and "Fix:" in result.stderr
    assert "Traceback" not in result.stderr
    # a value that is not what its column says
    bad = tmp_path / "bad-value"
    shutil.copytree(usage, bad)
    text = (bad / "gpu_timeline.csv").read_text().splitlines()
    text[1] = ",".join(["x", "y", "false", "0", "not-a-time", "2026-11-01 00:01:00+00", "50", "1", "2"])
    (bad / "gpu_timeline.csv").write_text("\n".join(text) + "\n")
    result = _run_cli("advise", "--stack", str(stack_file), "--usage", str(bad), "--out", str(out))
    assert result.returncode == 2 and "gpu_timeline" in result.stderr and "Traceback" not in result.stderr
    # no clusters: nothing can be matched
    bare = tmp_path / "bare"
    shutil.copytree(usage, bare)
    (bare / "clusters.csv").unlink()
    result = _run_cli("advise", "--stack", str(stack_file), "--usage", str(bare), "--out", str(out))
    assert result.returncode == 2 and "clusters" in result.stderr and "Fix:" in result.stderr
    # an unknown threshold
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"advise": {"gpu_lo_percent": 10}}))
    result = _run_cli("advise", "--stack", str(stack_file), "--usage", str(usage), "--policy-config", str(config),
                      "--out", str(out))
    assert result.returncode == 2 and "advise.gpu_lo_percent" in result.stderr and "gpu_low_percent" in result.stderr
    # nothing to read
    result = _run_cli("advise", "--stack", str(stack_file))
    assert result.returncode == 2 and "--usage" in result.stderr
    assert not out.exists()


def test_the_advise_section_does_not_disturb_the_policy_checks(stack_file: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    rule = "databricks-cluster-prefer-interconnect-for-multi-node-training"  # the test stack breaks it
    for level, seen in (("advisory", True), ("disabled", False)):
        config.write_text(json.dumps({"advise": {"cost_drift_percent": 40}, rule: level}))
        assert main(["check", "--stack", str(stack_file), "--policy-config", str(config), "--json", "--out",
                     str(tmp_path / "check.json")]) == 0
        found = {v["policy"] for v in json.loads((tmp_path / "check.json").read_text())["violations"]}
        assert (rule in found) is seen


# --------------------------------------------------------------------------------------------------------------------
# Reports and SQL
# --------------------------------------------------------------------------------------------------------------------

def test_html_report_has_the_four_charts(advise: Any, stack_file: Path, tmp_path: Path) -> None:
    _, usage = advise("latency-over-sla-scale-out")
    out = tmp_path / "advice.html"
    assert main(["advise", "--stack", str(stack_file), "--usage", str(usage), "--sla-p99-ms", str(SLA),
                 "--format", "html", "--out", str(out)]) == 0
    html = out.read_text()
    assert html.count("<svg") == 4  # GPU use, P99, the bill, the cost per 1,000 requests
    assert "Cost per 1,000 requests: is it falling" in html
    assert 'data-workload="obs-inference"' in html and 'class="threshold"' in html
    assert "30% low" in html and "60% high" in html and f"SLA {SLA:g} ms" in html
    assert 'class="billed"' in html and 'class="expected"' in html
    assert "latency-over-sla-scale-out" in html


def test_markdown_and_table(advise: Any, stack_file: Path, tmp_path: Path) -> None:
    _, usage = advise("idle-cluster")
    md = tmp_path / "advice.md"
    assert main(["advise", "--stack", str(stack_file), "--usage", str(usage), "--format", "markdown", "--out",
                 str(md)]) == 0
    text = md.read_text()
    assert "| warning | `idle-cluster` | obs-dev |" in text
    assert "dbx-ai-infra:dev:\n  autotermination_minutes: 15  # was 60\n" in text  # the stack file's own YAML
    table = tmp_path / "advice.txt"
    assert main(["advise", "--stack", str(stack_file), "--usage", str(usage), "--out", str(table)]) == 0
    assert "idle-cluster" in table.read_text() and "obs-dev" in table.read_text()


def test_emit_sql_is_the_same_analysis_for_databricks(stack_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "sql"
    assert main(["advise", "--stack", str(stack_file), "--emit-sql", str(out), "--sla-p99-ms", "800"]) == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == ["01_sources.sql", "02_stats.sql", "03_findings.sql"]
    sources = (out / "01_sources.sql").read_text()
    for table in ("system.compute.clusters", "system.compute.node_timeline", "system.billing.usage",
                  "system.billing.list_prices", "/Volumes/ai_obs/ops/telemetry/gpu_timeline"):
        assert table in sources
    stats, findings = (out / "02_stats.sql").read_text(), (out / "03_findings.sql").read_text()
    assert "TEMPORARY VIEW" in stats and "TEMP TABLE" not in stats
    assert "unix_timestamp(" in stats and "epoch(" not in stats
    assert "'obs-inference'" in stats  # the stack's workloads
    for fid in ("gpu-underutilized", "gpu-balanced", "latency-over-sla-scale-out", "latency-over-sla-not-gpu-bound",
                "spot-reclaim-hits-base", "training-resized", "autoscaling-churn", "idle-cluster", "cost-drift",
                "poor-scaling-interconnect"):
        assert f"-- finding: {fid}" in findings
    assert "p99_ms > 800.0" in findings
    # Databricks SQL: every statement parses in its dialect, and no DuckDB-only function is left
    import sqlglot

    from dbx_ai_infra.advise.analysis import statements

    for name in files:
        for statement in statements((out / name).read_text()):
            sqlglot.parse_one(statement, read="databricks", error_level=sqlglot.ErrorLevel.RAISE)
    everything = sources + stats + findings
    for duckdb_only in ("epoch(", "to_minutes(", "approx_quantile(", "make_timestamp(", "TEMP TABLE", "read_csv("):
        assert duckdb_only not in everything, duckdb_only


def test_the_local_and_the_emitted_sql_differ_only_in_dialect(stack_file: Path, plan: Any) -> None:
    from dbx_ai_infra.advise.analysis import render
    from dbx_ai_infra.advise.targets import target_rows, targets_of
    from dbx_ai_infra.dbxtypes.advise_thresholds import advise_settings

    t = advise_settings({}, SLA)
    rows = target_rows(targets_of(plan, 200), plan.stack)
    local = render("findings.sql.j2", dialect="duckdb", targets=rows, settings=t)
    remote = render("findings.sql.j2", dialect="databricks", targets=rows, settings=t)
    assert local == remote  # the findings hold no dialect-specific SQL
    assert "(SELECT" not in local  # and no subqueries (Databricks limits correlated ones)
    stats_local = render("stats.sql.j2", dialect="duckdb", targets=rows, settings=t)
    stats_remote = render("stats.sql.j2", dialect="databricks", targets=rows, settings=t)
    assert stats_local.count("\n;\n") == stats_remote.count("\n;\n")
    assert math.isclose(len(stats_local), len(stats_remote), rel_tol=0.05)


def test_the_readme_documents_every_finding_and_threshold() -> None:
    from dbx_ai_infra.advise.findings import FINDING_IDS
    from dbx_ai_infra.advise.sources import COLUMNS
    from dbx_ai_infra.dbxtypes.advise_thresholds import ADVISE_THRESHOLDS

    section = (REPO / "docs" / "advise.md").read_text()
    for fid in FINDING_IDS:
        assert f"| `{fid}` |" in section, fid
    for name, spec in ADVISE_THRESHOLDS.items():
        default = "none" if spec.default is None else f"{spec.default:g}"
        assert f"| `{name}` | {default} |" in section, name
    for name, columns in COLUMNS.items():
        assert all(f"`{c}`" in section for c in columns), name
    assert set(PLANTS) == set(FINDING_IDS) - {"gpu-balanced"}


def test_the_event_vocabulary_is_databricks_own() -> None:
    """The event types, reason code and detail fields the analysis reads exist in databricks-sdk's compute types
    (the Clusters events API), so a real export carries them under these names."""
    import dataclasses

    from databricks.sdk.service import compute

    from dbx_ai_infra.advise.analysis import SQL_DIR

    stats = (SQL_DIR / "stats.sql.j2").read_text()
    for event in ("NODES_LOST", "RESIZING", "UPSIZE_COMPLETED", "AUTOSCALING_STATS_REPORT"):
        assert hasattr(compute.EventType, event) and f"'{event}'" in stats
    assert compute.TerminationReasonCode.SPOT_INSTANCE_TERMINATION.value in stats
    assert {f.name for f in dataclasses.fields(compute.ClusterEvent)} >= {"cluster_id", "timestamp", "type", "details"}


def test_the_events_view_reads_an_event_as_databricks_sdk_writes_it(tmp_path: Path) -> None:
    """An event serialized by databricks-sdk itself (`ClusterEvent.as_dict`: the Clusters events API's JSON) is read by
    the analysis's events view with its worker counts and its reason code, the fields the reclaim findings use."""
    import duckdb
    from databricks.sdk.service import compute

    from dbx_ai_infra.advise.sources import find_inputs, view_sql

    event = compute.ClusterEvent(
        cluster_id="0101-abc", timestamp=1_733_500_000_000, type=compute.EventType.NODES_LOST,
        details=compute.EventDetails(current_num_workers=3, target_num_workers=4, reason=compute.TerminationReason(
            code=compute.TerminationReasonCode.SPOT_INSTANCE_TERMINATION)))
    (tmp_path / "cluster_events.jsonl").write_text(json.dumps(event.as_dict()) + "\n")
    inputs = find_inputs(str(tmp_path))
    con = duckdb.connect()
    source = inputs["cluster_events"]
    types = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM {source.reader}").fetchall()}
    con.execute(view_sql("cluster_events", source, types))
    row = con.execute("SELECT cluster_id, type, reason_code, current_workers, target_workers FROM cluster_events").fetchone()
    assert row == ("0101-abc", "NODES_LOST", "SPOT_INSTANCE_TERMINATION", 3, 4)


def test_an_edit_is_refused_only_for_mandatory_findings_it_brings(stack_file: Path, tmp_path: Path) -> None:
    from dbx_ai_infra.advise.assess import Proposal, price_edit

    rule = "databricks-cluster-prefer-interconnect-for-multi-node-training"
    config = {rule: "mandatory"}
    # the stack already breaks the rule (4 workers of g5.xlarge): an edit that keeps breaking it is not refused
    plan = build_plan(str(stack_file), policy_config=config, with_cost=True)
    assert any(v.policy == rule and v.mandatory for v in plan.violations or [])
    kept = Proposal("more workers", {"training.num_workers": 6})
    price_edit(plan, kept, policy_config=config, prices=None)
    assert kept.blocked_by == [] and kept.monthly_after is not None and kept.monthly_after > kept.monthly_before
    # a stack that does not break it: the edit that makes it break it is refused, and still priced
    single = tmp_path / "Pulumi.obs.yaml"
    single.write_text(STACK.replace("num_workers: 4", "num_workers: 1"), encoding="utf-8")
    plan = build_plan(str(single), policy_config=config, with_cost=True)
    assert not any(v.policy == rule for v in plan.violations or [])
    brings = Proposal("more workers", {"training.num_workers": 4})
    price_edit(plan, brings, policy_config=config, prices=None)
    assert brings.blocked_by == [rule] and brings.monthly_after is not None


@pytest.mark.parametrize(("stack", "plant", "expected"), [
    # dev: min 1, max 2; a larger base of 2 needs a maximum of 3 (the autoscale API needs max > min)
    ("dev", "spot-reclaim-hits-base", {"dbx-ai-infra:inference.min_workers": 2,
                                       "dbx-ai-infra:inference.max_workers": 3}),
    # prod: its inference pool holds 12 nodes; 13 workers and the driver need 14
    ("prod", "latency-over-sla-scale-out", {"dbx-ai-infra:inference.min_workers": 5,
                                            "dbx-ai-infra:inference.max_workers": 13,
                                            "dbx-ai-infra:instance_pools.inference.max_capacity": 14}),
])
def test_a_proposal_is_a_stack_the_spec_accepts(tmp_path: Path, stack: str, plant: str,
                                                expected: dict[str, int]) -> None:
    plan = build_plan(stack, with_policies=False, with_cost=True)
    write_exports(tmp_path / "usage", plan, plant=[plant], days=DAYS)
    doc = advise_json(Path(stack), tmp_path / "usage", tmp_path / "out.json")
    f = finding(doc, plant)
    assert f["proposal"]["edit"] == expected
    assert f["proposal"]["blocked_by"] == [] and f["monthly_cost_delta"] is not None and f["monthly_cost_delta"] > 0


def test_the_collectors_own_files_are_read_as_written(tmp_path: Path) -> None:
    """The real init script's output (ISO times with Z, [N/A] written empty), read by the analysis: the minute's GPU
    use is the mean of the GPUs that reported, an unknown one left out, not counted as 0."""
    import csv

    from dbx_ai_infra.advise.analysis import run_local
    from dbx_ai_infra.dbxtypes.advise_thresholds import AdviseSettings
    from tests.test_gpu_collector import _collect

    files = [p for p in _collect(tmp_path) if p.is_file() and p.suffix == ".csv"]
    rows = list(csv.DictReader(files[0].open()))
    known = [float(r["gpu_util_percent"]) for r in rows if r["gpu_util_percent"]]
    assert len(known) < len(rows)  # the recording has an [N/A]
    usage = tmp_path / "volume"
    (usage / "clusters.csv").write_text('cluster_id,cluster_name,tags\n0101-abc,obs-inference,"{}"\n')
    target = {"workload": "obs-inference", "role": "inference", "kind": "all_purpose", "cluster_name": "obs-inference",
              "tag_stack": "obs", "tag_workload": "inference", "role_shared": False, "min_workers": 1,
              "max_workers": 2, "autotermination_minutes": 60,
              "gpus_per_node": 8, "dbu_hourly": 1.0, "dbu_monthly_expected": 100.0, "vm_monthly_expected": 50.0,
              "low_bandwidth": False}
    analysis = run_local(str(usage), [target], AdviseSettings())
    assert analysis.gpu_hourly and analysis.gpu_hourly[0]["util"] == pytest.approx(sum(known) / len(known))
    assert analysis.summary[0]["minutes"] == 1


# --- broken, empty and out-of-window inputs (issue 27, item 5) ------------------------------------------------------

def _copy(usage: Path, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(usage, target)
    return target


def _mutate_line(path: Path, index: int, change: Any) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[index] = change(lines[index])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


BROKEN = {
    # (file, how it breaks, what the message must name)
    "truncated-json-line": ("cluster_events.jsonl", lambda p: p.write_text(p.read_text()[:-30], encoding="utf-8"),
                            "line "),
    "broken-json-in-tags": ("clusters.csv", lambda p: _mutate_line(p, 1, lambda s: s[:s.index('"{') + 20] + '"'),
                            "Malformed JSON"),
    "corrupt-parquet": ("gpu_timeline.csv", lambda p: (p.unlink(), p.with_suffix(".parquet").write_bytes(
        b"PAR1" + b"\x00" * 40 + b"PAR1")), "gpu_timeline"),
    "not-a-time": ("requests.csv", lambda p: _mutate_line(p, 3, lambda s: "yesterday," + s.split(",", 1)[1]),
                   "requests.csv"),
}


@pytest.mark.parametrize("case", BROKEN)
def test_an_unreadable_input_is_exit_2_naming_the_file_and_the_fix(advise: Any, stack_file: Path, tmp_path: Path,
                                                                   case: str) -> None:
    """DuckDB's own text with exit 1 (a truncated JSON line, broken JSON in tags) became exit 2 with the file."""
    file, breaks, named = BROKEN[case]
    usage = _copy(advise("none")[1], tmp_path, case)
    breaks(usage / file)
    result = _run_cli("advise", "--stack", str(stack_file), "--usage", str(usage), "--out", str(tmp_path / "o.json"))
    assert result.returncode == 2, result.stderr
    assert str(usage) in result.stderr and named in result.stderr and "Fix:" in result.stderr
    assert "Traceback" not in result.stderr and "error: unexpected" not in result.stderr
    assert "LINE " not in result.stderr and "TEMP " not in result.stderr  # nothing of our SQL, which DuckDB quotes
    assert not (tmp_path / "o.json").exists()


def test_iso_timestamps_in_cluster_events_read_like_epoch_milliseconds(advise: Any, stack_file: Path,
                                                                        tmp_path: Path) -> None:
    from datetime import UTC, datetime

    doc, usage = advise("spot-reclaim-hits-base")
    iso = _copy(usage, tmp_path, "iso")
    events = [json.loads(line) for line in (iso / "cluster_events.jsonl").read_text().splitlines()]
    for e in events:
        e["timestamp"] = datetime.fromtimestamp(e["timestamp"] / 1000, UTC).isoformat().replace("+00:00", "Z")
    (iso / "cluster_events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    again = advise_json(stack_file, iso, tmp_path / "iso.json")
    assert _ids(again) == _ids(doc)


@pytest.mark.parametrize("emptied", ["header-only", "zero-bytes"])
def test_an_empty_gpu_timeline_is_a_note_that_gpu_use_was_not_judged(advise: Any, stack_file: Path, tmp_path: Path,
                                                                      emptied: str) -> None:
    usage = _copy(advise("gpu-underutilized")[1], tmp_path, emptied)
    header = (usage / "gpu_timeline.csv").read_text().splitlines()[0]
    (usage / "gpu_timeline.csv").write_text(f"{header}\n" if emptied == "header-only" else "")
    doc = advise_json(stack_file, usage, tmp_path / "e.json")
    assert "gpu-underutilized" not in {f["id"] for f in doc["findings"]}
    assert f"{usage / 'gpu_timeline.csv'} holds no rows: GPU use" in " ".join(doc["notes"])


def test_usage_rows_outside_the_export_window_are_named_and_left_out(advise: Any, stack_file: Path,
                                                                     tmp_path: Path) -> None:
    """Rows dated 2099 stretched the bill's window to 73 years: "billed $0/month" and priced cuts."""
    doc, usage = advise("none")
    future = _copy(usage, tmp_path, "future")
    lines = (future / "usage.csv").read_text().splitlines()
    moved = [lines[0], *lines[1:], *(line.replace("2026-", "2099-") for line in lines[1:4])]
    (future / "usage.csv").write_text("\n".join(moved) + "\n")
    again = advise_json(stack_file, future, tmp_path / "f.json")
    assert [w["billed_monthly_usd"] for w in again["workloads"]] == [w["billed_monthly_usd"] for w in doc["workloads"]]
    note = next(n for n in again["notes"] if "usage row(s)" in n)
    assert note.startswith(f"3 usage row(s) of {future / 'usage.csv'} start outside the export window") and "2099-" in note


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["clusters.csv", "gpu_timeline.csv", "node_timeline.csv", "cluster_events.jsonl",
                             "usage.csv", "list_prices.csv", "requests.csv"]), data=st.data())
def test_any_broken_advise_input_is_exit_0_or_2_never_a_traceback(advise: Any, stack_file: Path,
                                                                  tmp_path_factory: pytest.TempPathFactory,
                                                                  name: str, data: Any) -> None:
    usage = _copy(advise("none")[1], tmp_path_factory.mktemp("broken"), "u")
    raw = (usage / name).read_bytes()
    cut_at = data.draw(st.integers(0, len(raw)))
    junk = data.draw(st.binary(max_size=12))
    (usage / name).write_bytes(raw[:cut_at] + junk + raw[cut_at + data.draw(st.integers(0, 30)):])
    result = _run_cli("advise", "--stack", str(stack_file), "--usage", str(usage))
    assert result.returncode in (0, 2), result.stderr
    assert "Traceback" not in result.stderr and "error: unexpected" not in result.stderr, result.stderr


# --- proposals a person can apply (issue 27, item 9) ----------------------------------------------------------------

def test_each_proposal_is_yaml_the_stack_takes_and_write_stack_applies_them_all(advise: Any, stack_file: Path,
                                                                                tmp_path: Path) -> None:
    """The config: block of the Markdown was refused when pasted (dotted keys); the table showed no keys."""
    from ruamel.yaml import YAML

    from dbx_ai_infra.advise.assess import edited_config
    from dbx_ai_infra.stackspec.load import read_stack_file

    _, usage = advise("gpu-underutilized")
    nxt = tmp_path / "Pulumi.obs-next.yaml"
    result = _run_cli("advise", "--stack", str(stack_file), "--usage", str(usage), "--sla-p99-ms", str(SLA),
                      "--json", "--out", str(tmp_path / "a.json"), "--write-stack", str(nxt))
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "a.json").read_text())
    proposal = finding(doc, "gpu-underutilized")["proposal"]
    # the fragment is the stack's own YAML: merged into the stack's config, it gives the same stack as the edit
    fragment = YAML(typ="safe", pure=True).load(proposal["yaml"])
    config = read_stack_file(stack_file)
    merged = {k: ({**config[k], **v} if isinstance(v, dict) and k in config else v) for k, v in fragment.items()}
    assert {**config, **merged} == edited_config(config, {k.split(":", 1)[1]: v for k, v in proposal["edit"].items()})
    assert "# was " in proposal["yaml"]
    # --write-stack: every applicable proposal, the comments kept, and it checks clean
    written = nxt.read_text()
    assert "wrote" in result.stderr and str(nxt) in result.stderr
    assert [line for line in stack_file.read_text().splitlines() if line.lstrip().startswith("#")] == \
        [line for line in written.splitlines() if line.lstrip().startswith("#")]
    assert _run_cli("check", "--stack", str(nxt)).returncode == 0
    edited = read_stack_file(nxt)
    for key, value in proposal["edit"].items():
        section, *path = key.split(":", 1)[1].split(".")
        node = edited[f"dbx-ai-infra:{section}"]
        for part in path:
            node = node[part]
        assert node == value
    # the table shows the edit too
    table = _run_cli("advise", "--stack", str(stack_file), "--usage", str(usage), "--sla-p99-ms", str(SLA))
    assert "Edits: set these keys in the stack file" in table.stdout and proposal["yaml"].splitlines()[1] in table.stdout


def test_write_stack_refuses_the_stack_file_itself(advise: Any, stack_file: Path) -> None:
    _, usage = advise("gpu-underutilized")
    before = stack_file.read_text()
    result = _run_cli("advise", "--stack", str(stack_file), "--usage", str(usage), "--write-stack", str(stack_file))
    assert result.returncode == 2 and "--write-stack: is an input of this run" in result.stderr
    assert "is an input of this run" in result.stderr and stack_file.read_text() == before


def test_the_advise_table_keeps_ids_workloads_and_money_whole_at_80_columns(advise: Any) -> None:
    from dbx_ai_infra.reports.advise_report import advise_table, money

    doc, _ = advise("gpu-underutilized")
    lines = advise_table(doc, 80).splitlines()
    assert max(len(line) for line in lines) <= 80
    for f in doc["findings"]:
        assert any(money(f["monthly_cost_delta"]) in line for line in lines)  # it was "-$2,565.…"
        assert any(f["id"] in line and f["workload"] in line for line in lines)


def test_a_usage_metadata_struct_without_endpoint_name_reads_as_clusters_only(tmp_path: Path) -> None:
    """A Parquet bill whose usage_metadata struct has no endpoint_name field (a workspace without serving endpoints):
    its rows are clusters' (endpoint_name NULL), the cluster id read from the struct."""
    from dbx_ai_infra.advise.sources import column_types, find_inputs, load_duckdb, view_sql

    duckdb = load_duckdb()
    con = duckdb.connect()
    usage = tmp_path / "usage.parquet"
    con.execute("COPY (SELECT TIMESTAMPTZ '2026-11-01 00:00:00+00' AS usage_start_time, "
                "TIMESTAMPTZ '2026-11-01 01:00:00+00' AS usage_end_time, 'PREMIUM_ALL_PURPOSE_COMPUTE' AS sku_name, "
                "'DBU' AS usage_unit, 2.5 AS usage_quantity, struct_pack(cluster_id := 'c-1') AS usage_metadata) "
                f"TO '{usage}' (FORMAT parquet)")
    inp = find_inputs(str(tmp_path))["usage"]
    con.execute(view_sql("usage", inp, column_types(con, inp)))
    assert con.execute("SELECT cluster_id, endpoint_name, usage_quantity FROM usage").fetchall() == [
        ("c-1", None, 2.5)]


def test_write_exports_refuses_an_unknown_plant_before_writing_anything(tmp_path: Path) -> None:
    out = tmp_path / "usage"
    with pytest.raises(ValueError, match=r"unknown plants \['no-such-finding'\]; use ") as raised:
        write_exports(out, build_plan("prod", with_policies=False, with_cost=True), plant=["no-such-finding"], days=1)
    assert all(p in str(raised.value) for p in PLANTS)
    assert not out.exists()


# --- the SQL templates, compiled once and kept (issue 53, item 3) ---------------------------------------------------

def _fresh_render(monkeypatch, cache: Path, *, off: bool = False) -> str:
    """Render one template in a fresh template environment whose cache directory is ``cache``."""
    from dbx_ai_infra.advise import analysis
    from dbx_ai_infra.dbxtypes.advise_thresholds import advise_settings

    monkeypatch.setenv("STACKPLAN_CACHE_DIR", str(cache))
    if off:
        monkeypatch.setenv("STACKPLAN_NO_CACHE", "1")
    else:
        monkeypatch.delenv("STACKPLAN_NO_CACHE", raising=False)
    analysis._env.cache_clear()
    try:
        return analysis.render("stats.sql.j2", dialect="duckdb", targets=[], settings=advise_settings({}))
    finally:
        analysis._env.cache_clear()


def test_the_compiled_sql_templates_are_kept_in_the_cache_directory_and_read_back_the_same(monkeypatch, tmp_path):
    first = _fresh_render(monkeypatch, tmp_path / "cache")
    kept = list((tmp_path / "cache" / "sql-templates").iterdir())
    assert kept  # the next run loads them instead of compiling
    assert _fresh_render(monkeypatch, tmp_path / "cache") == first  # read back: the same SQL
    assert _fresh_render(monkeypatch, tmp_path / "off", off=True) == first  # STACKPLAN_NO_CACHE: none kept
    assert not (tmp_path / "off").exists()
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory would be")
    assert _fresh_render(monkeypatch, blocked) == first  # a cache that cannot be written is no error
