"""GPU memory findings (issue 29 part 2): gpu-memory-oversized and gpu-memory-near-oom from the collector's
gpu_mem_used_mb / gpu_mem_total_mb, their priced proposals, and the measured need (memory_need_gb) they rest on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import BASE_CONFIG, config_for

from dbx_ai_infra.advise.telemetry import write_exports
from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.engine.pipeline import build_plan


def advise(stack: str, tmp_path: Path, plant: list[str], *extra: str) -> dict[str, Any]:
    plan = build_plan(stack, with_policies=False, with_cost=True)
    usage = tmp_path / "usage"
    write_exports(usage, plan, plant=plant, days=1)
    out = tmp_path / "advice.json"
    assert main(["advise", "--stack", stack, "--usage", str(usage), "--json", "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())


def only(doc: dict[str, Any], fid: str) -> dict[str, Any]:
    (found,) = [f for f in doc["findings"] if f["id"] == fid]
    return found


def test_oversized_memory_pins_the_cheapest_node_that_holds_the_peak_and_the_spec_accepts_it(tmp_path, capsys):
    from dbx_ai_infra.gpucatalog import load_catalog

    doc = advise("prod", tmp_path, ["gpu-memory-oversized"])
    f = only(doc, "gpu-memory-oversized")
    assert f["workload"] == "prod-training-run" and f["severity"] == "warning"  # its job (prod has no cluster)
    edit = f["proposal"]["edit"]
    catalog = load_catalog()
    node = catalog.get(edit["dbx-ai-infra:training.node_type_id"])
    before = catalog.get("p4d.24xlarge")
    # the planted peak is 20% of each of the 8 GPUs' 40 GB, plus 20% headroom: 8 x 8 GB x 1.2
    assert edit["dbx-ai-infra:training.memory_need_gb"] == pytest.approx(8 * 40 * 0.2 * 1.2, abs=0.1)
    assert node.total_gpu_memory_gb >= edit["dbx-ai-infra:training.memory_need_gb"]
    assert node.usd_per_hour_on_demand < before.usd_per_hour_on_demand
    assert edit.get("dbx-ai-infra:training.gpu_family", "a100") == node.family
    assert f["proposal"]["blocked_by"] == [] and f["monthly_cost_delta"] < 0
    assert "overrides the sizer's estimate" in f["proposal"]["summary"]


def test_near_oom_proposes_the_next_larger_node_of_the_family(tmp_path):
    doc = advise("dev", tmp_path, ["gpu-memory-near-oom"])
    f = only(doc, "gpu-memory-near-oom")
    assert f["severity"] == "critical" and f["workload"] == "dev-inference"
    assert f["proposal"]["edit"] == {"dbx-ai-infra:inference.node_type_id": "g5.12xlarge"}
    assert f["proposal"]["blocked_by"] == [] and f["monthly_cost_delta"] > 0
    # dev pins no node type: what it has now is the sizer's pick, said so
    assert f["proposal"]["current"] == {"dbx-ai-infra:inference.node_type_id": "(sized: g5.xlarge)"}


def test_a_node_proposal_starts_from_the_node_type_the_stack_pins(tmp_path, write_stack):
    pinned = write_stack(config_for("aws", inference={**BASE_CONFIG["dbx-ai-infra:inference"],
                                                      "node_type_id": "g5.2xlarge"}), name="pinned")
    f = only(advise(str(pinned), tmp_path, ["gpu-memory-near-oom"]), "gpu-memory-near-oom")
    assert f["proposal"]["current"] == {"dbx-ai-infra:inference.node_type_id": "g5.2xlarge"}
    assert f["proposal"]["edit"]["dbx-ai-infra:inference.node_type_id"] != "g5.2xlarge"


def test_the_memory_lines_are_thresholds_of_the_policy_config(tmp_path):
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"advise": {"gpu_mem_oversized_percent": 10, "gpu_mem_near_oom_percent": 99}}))
    doc = advise("dev", tmp_path, ["gpu-memory-near-oom"], "--policy-config", str(config))
    assert "gpu-memory-near-oom" not in {f["id"] for f in doc["findings"]}  # 97% is under a 99% line
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"advise": {"gpu_mem_oversized_percent": 96}}))  # above the near-OOM line
    assert main(["advise", "--stack", "dev", "--usage", str(tmp_path / "usage"), "--policy-config", str(bad)]) == 2


def test_a_measured_need_overrides_the_estimate_for_sizing_and_a_pin(write_stack, capsys):
    config = {**BASE_CONFIG, "dbx-ai-infra:inference": {
        "min_workers": 2, "max_workers": 4, "model": {"params_billions": 13, "precision": "fp16"}}}
    code = main(["preview", "--stack", str(write_stack(config)), "--json"])
    sized = json.loads(capsys.readouterr().out)
    assert code == 0
    line = next(z for z in sized["sizing"] if z["workload"] == "inference")
    assert line["node_type_id"] != "g5.xlarge"  # 31.2 GB does not fit one A10G
    config["dbx-ai-infra:inference"] = {**config["dbx-ai-infra:inference"], "memory_need_gb": 20,
                                        "node_type_id": "g5.xlarge"}
    code = main(["preview", "--stack", str(write_stack(config)), "--json"])
    measured = json.loads(capsys.readouterr().out)
    assert code == 0
    line = next(z for z in measured["sizing"] if z["workload"] == "inference")
    assert line["node_type_id"] == "g5.xlarge" and line["need_gb"] == 20
    assert line["formula"] == "measured 20 GB (the model's estimate: 31.2 GB)"


def test_a_measured_need_with_sharding_is_refused(write_stack, capsys):
    config = {**BASE_CONFIG, "dbx-ai-infra:training": {
        "num_workers": 2, "model": {"params_billions": 7, "precision": "bf16", "sharding": "fsdp"},
        "memory_need_gb": 40}}
    assert main(["preview", "--stack", str(write_stack(config))]) == 2
    err = capsys.readouterr().err
    assert "dbx-ai-infra:training.memory_need_gb" in err and "sharding" in err
