"""Issue 55, item 5: serverless GPU jobs and provisioned-throughput endpoints read from a workspace export, a Terraform
plan and Terraform code are judged and priced by the same rules and rates as the stack's own. The documents are small
excerpts written here from the Jobs API (``Task.compute.hardware_accelerator``, ``JobSettings.environments``,
``budget_policy_id``), Terraform's plan JSON (blocks as lists of one object) and the provider's resource docs
(databricks_job ``task { compute { hardware_accelerator } }``; databricks_model_serving_provisioned_throughput)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli_json

from dbx_ai_infra.pricing.serverless import serverless_data

RULE = "databricks-serverless-require-usage-policy"
TAGS = {"workload": "llm", "cost_center": "42"}


#: A DBU rate per GPU-hour of the test's own, as a --prices override (no public source gives one).
TEST_DBU = 8.0


def _rate() -> float:
    return TEST_DBU * serverless_data()["serverless_gpu"]["usd_per_dbu"]["aws"]["premium"]["us-east-1"]


def _job_after(policy: str | None) -> dict[str, Any]:
    return {"name": "ft", "tags": TAGS, "budget_policy_id": policy,
            "environment": [{"environment_key": "train", "spec": [{"environment_version": "5",
                                                                  "dependencies": ["peft==0.13.2"]}]}],
            "task": [{"task_key": "train", "environment_key": "train", "max_retries": 2,
                      "compute": [{"hardware_accelerator": "GPU_8xH100"}],
                      "spark_python_task": [{"python_file": "/Volumes/ml/code/code/train.py",
                                             "parameters": ["--checkpoint-dir", "/Volumes/ml/ck/ck", "--gpus", "16"]}]}]}


def _pt_after(policy: str | None) -> dict[str, Any]:
    return {"name": "llm", "budget_policy_id": policy,
            "config": [{"served_entities": [{"entity_name": "system.ai.llama-4-maverick", "entity_version": "1",
                                             "provisioned_model_units": 10}]}],
            "tags": [{"key": k, "value": v} for k, v in TAGS.items()]}


def _plan(policy: str | None) -> dict[str, Any]:
    cluster = {"cluster_name": "etl", "spark_version": "15.4.x-gpu-ml-scala2.12", "node_type_id": "g5.xlarge",
               "num_workers": 1, "autotermination_minutes": 30, "custom_tags": TAGS}

    def change(kind: str, name: str, after: dict[str, Any]) -> dict[str, Any]:
        return {"address": f"{kind}.{name}", "mode": "managed", "type": kind, "name": name,
                "change": {"actions": ["create"], "before": None, "after": after, "after_unknown": {"id": True}}}

    return {"format_version": "1.2", "terraform_version": "1.11.0", "resource_changes": [
        change("databricks_cluster", "etl", cluster), change("databricks_job", "ft", _job_after(policy)),
        change("databricks_model_serving_provisioned_throughput", "llm", _pt_after(policy))]}


def _findings(doc: Any, rule: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(o: Any) -> None:
        if isinstance(o, dict):
            if o.get("policy") == rule:
                found.append(o)
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(doc)
    return found


def test_a_terraform_plans_serverless_job_and_endpoint_are_judged_and_priced(capsys, tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_plan(None)))
    _, doc = run_cli_json(capsys, "check", "--terraform-plan", str(path))
    named = {f.get("resource_name") or f.get("resource") for f in _findings(doc, RULE)}
    assert named == {"databricks_job.ft", "databricks_model_serving_provisioned_throughput.llm"}
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"serverless_gpu_dbu_per_gpu_hour": {"aws": {"GPU_8xH100": TEST_DBU}}}))
    _, cost = run_cli_json(capsys, "cost", "--terraform-plan", str(path), "--prices", str(prices))
    entries = {e["name"]: e for stack in cost.get("stacks", [cost]) for e in stack["cost"]["resources"].values()}
    job = entries["databricks_job.ft"]
    assert job["compute_kind"] == "serverless_gpu" and job["gpus"] == 16
    assert job["monthly"]["expected"] == pytest.approx(16 * _rate() * job["hours_per_month"])
    pt = entries["databricks_model_serving_provisioned_throughput.llm"]
    assert pt["model_units"] == 10 and pt["monthly"]["expected"] is None and "per-model-unit" in pt["unpriced"]
    path.write_text(json.dumps(_plan("policy-1")))
    _, doc = run_cli_json(capsys, "check", "--terraform-plan", str(path))
    assert not _findings(doc, RULE)


HCL = '''
resource "databricks_job" "ft" {
  name = "ft"
  tags = { workload = "llm", cost_center = "42" }
  environment {
    environment_key = "train"
    spec {
      environment_version = "5"
      dependencies        = ["peft==0.13.2"]
    }
  }
  task {
    task_key        = "train"
    environment_key = "train"
    compute {
      hardware_accelerator = "GPU_8xH100"
    }
    spark_python_task {
      python_file = "/Volumes/ml/code/code/train.py"
      parameters  = ["--checkpoint-dir", "/Volumes/ml/ck/ck", "--gpus", "8"]
    }
  }
}

resource "databricks_model_serving_provisioned_throughput" "llm" {
  name = "llm"
  config {
    served_entities {
      entity_name             = "system.ai.llama-4-maverick"
      entity_version          = "1"
      provisioned_model_units = 10
    }
  }
}
'''


def test_terraform_code_as_written_is_judged_the_same_way(capsys, tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(HCL)
    _, doc = run_cli_json(capsys, "check", "--terraform", str(tmp_path))
    named = {f.get("resource_name") or f.get("resource") for f in _findings(doc, RULE)}
    assert named == {"databricks_job.ft", "databricks_model_serving_provisioned_throughput.llm"}
    tags = _findings(doc, "databricks-resource-require-tags")
    assert [f for f in tags if "llm" in str(f.get("resource_name"))]  # the endpoint has no tags


def test_a_workspace_exports_serverless_gpu_job_is_judged_and_priced(capsys, tmp_path: Path) -> None:
    """A Jobs API ``jobs/list`` page: the settings as the API returns them (lists, not Terraform's blocks)."""
    settings = {"name": "ft", "tags": TAGS, "environments": [{"environment_key": "train",
                                                              "spec": {"environment_version": "5"}}],
                "tasks": [{"task_key": "train", "environment_key": "train",
                           "compute": {"hardware_accelerator": "GPU_8xH100"},
                           "spark_python_task": {"python_file": "/Volumes/ml/code/code/train.py",
                                                 "parameters": ["--checkpoint-dir", "/Volumes/ml/ck/ck"]}}]}
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps({"jobs": [{"job_id": 7, "settings": settings}]}))
    _, doc = run_cli_json(capsys, "check", "--cluster-json", str(path))
    assert _findings(doc, RULE)
    assert not _findings(doc, "databricks-export-unrecognised-field")  # compute, environments: the SDK's own
    settings["budget_policy_id"] = "policy-1"
    path.write_text(json.dumps({"jobs": [{"job_id": 7, "settings": settings}]}))
    _, doc = run_cli_json(capsys, "check", "--cluster-json", str(path))
    assert not _findings(doc, RULE)
