"""Issue 51, item 6: a cluster whose $/hour is known but whose month is not (no role, so no usage assumption says how
long it runs: a CPU cluster, the commonest cluster of real Terraform code) is priced by the hour; its month is
unknown and named in every format, never zero; the hourly totals count it, the monthly ones leave it out and say so.

The modules are small excerpts written here. Hand figures: the CPU node catalog (dbx_ai_infra/gpucatalog/cpu_node_types.json:
m5.2xlarge $0.384/h and 1.37 DBU/h, m5.xlarge $0.192/h and 0.69 DBU/h, AWS us-east-1) and rates.yaml ($0.55/DBU
all-purpose, $0.15/DBU jobs compute, tier premium), all nodes on demand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbx_ai_infra.cli.cli import main

#: 2 nodes x (0.384 + 1.37 x 0.55); 3 nodes x (0.192 + 0.69 x 0.15).
CLUSTER_HOURLY = 2 * (0.384 + 1.37 * 0.55)
JOB_HOURLY = 3 * (0.192 + 0.69 * 0.15)

CPU_CLUSTER = """
resource "databricks_cluster" "etl" {
  cluster_name            = "etl"
  spark_version           = "15.4.x-scala2.12"
  node_type_id            = "m5.2xlarge"
  num_workers             = WORKERS
  autotermination_minutes = 30
  aws_attributes { availability = "ON_DEMAND" }
}
"""

def _job(name: str, key: str, runtime: str, node_type: str, workers: int, task: str) -> str:
    """A job of one on-demand job cluster (``key``) and one notebook task on it."""
    return f"""
resource "databricks_job" "{name}" {{
  name = "{name}"
  job_cluster {{
    job_cluster_key = "{key}"
    new_cluster {{
      spark_version = "{runtime}"
      node_type_id  = "{node_type}"
      num_workers   = {workers}
      aws_attributes {{ availability = "ON_DEMAND" }}
    }}
  }}
  task {{
    task_key        = "{task}"
    job_cluster_key = "{key}"
    notebook_task {{ notebook_path = "/{task}" }}
  }}
}}
"""


CPU_JOB = _job("nightly", "main", "15.4.x-scala2.12", "m5.xlarge", 2, "a")
GPU_TRAINING = _job("train", "gpu", "15.4.x-gpu-ml-scala2.12", "g5.xlarge", 1, "t")

UNKNOWN_NODE = """
resource "databricks_cluster" "odd" {
  cluster_name  = "odd"
  spark_version = "15.4.x-scala2.12"
  node_type_id  = "m9.weird"
  num_workers   = 1
}
"""


def module(tmp_path: Path, *blocks: str, name: str = "m", workers: int = 1) -> str:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "main.tf").write_text("".join(blocks).replace("WORKERS", str(workers)), encoding="utf-8")
    return str(directory)


def cost(capsys, *argv: str) -> tuple[int, str]:
    code = main(["cost", *argv])
    return code, capsys.readouterr().out


def test_a_cpu_cluster_with_no_role_gets_its_hourly_price_and_an_unknown_month(tmp_path, capsys):
    code, out = cost(capsys, "--terraform", module(tmp_path, CPU_CLUSTER, CPU_JOB), "--format", "json")
    doc = json.loads(out)["cost"]
    etl, job = (doc["resources"][f"terraform:{a}"] for a in ("databricks_cluster.etl", "databricks_job.nightly"))
    assert code == 0
    assert etl["hourly"] == pytest.approx(CLUSTER_HOURLY) and job["hourly"] == pytest.approx(JOB_HOURLY)
    for entry in (etl, job):  # the month unknown, said why, never zero
        assert entry["monthly"] == {"min": None, "expected": None, "max": None}
        assert entry["hours_per_month"] is None and "month unknown" in entry["unpriced"]
        assert "workload_type" in entry["unpriced"]
    assert job["clusters"][0]["hourly"] == pytest.approx(JOB_HOURLY)
    total = doc["total"]
    assert total["hourly"] == pytest.approx(CLUSTER_HOURLY + JOB_HOURLY)
    assert total["hourly_complete"] is True and total["hourly_unpriced"] == []
    assert total["complete"] is False and total["unpriced"] == ["databricks_cluster.etl", "databricks_job.nightly"]
    assert [u["hourly"] for u in doc["unpriced"]] == [pytest.approx(CLUSTER_HOURLY), pytest.approx(JOB_HOURLY)]


def test_the_table_shows_the_hour_and_says_the_month_is_unknown(tmp_path, capsys):
    code, out = cost(capsys, "--terraform", module(tmp_path, CPU_CLUSTER))
    row = next(line for line in out.splitlines() if "databricks_cluster.etl" in line and "m5.2xlarge" in line)
    total = next(line for line in out.splitlines() if line.startswith("Total:"))
    assert code == 0 and "$2.28" in row and "unknown" in row
    # every month unknown: the total month is unknown, never $0.00
    assert total.startswith("Total: $2.28/hour at the base size, $2.28/hour at full size; the month unknown")
    assert "$0.00" not in total
    assert "the month leaves out 1 resource priced by the hour only, its hours a month unknown: " \
           "databricks_cluster.etl" in total


def test_a_priced_month_beside_one_priced_by_the_hour(tmp_path, capsys):
    directory = module(tmp_path, CPU_CLUSTER, GPU_TRAINING, UNKNOWN_NODE)
    code, out = cost(capsys, "--terraform", directory, "--format", "json")
    doc = json.loads(out)["cost"]
    train = doc["resources"]["terraform:databricks_job.train"]
    total = doc["total"]
    assert code == 0 and train["unpriced"] is None and train["monthly"]["expected"] > 0
    assert total["monthly"]["expected"] == pytest.approx(train["monthly"]["expected"])
    assert total["hourly"] == pytest.approx(train["hourly"] + CLUSTER_HOURLY)
    assert total["hourly_complete"] is False and total["hourly_unpriced"] == ["databricks_cluster.odd"]
    assert total["unpriced"] == ["databricks_cluster.etl", "databricks_cluster.odd"]
    code, out = cost(capsys, "--terraform", directory)
    line = next(line for line in out.splitlines() if line.startswith("Total:"))
    assert "expected $" in line and "the month unknown" not in line
    assert ("(incomplete: leaves out 1 unpriced resource: databricks_cluster.odd; the month leaves out 1 resource "
            "priced by the hour only, its hours a month unknown: databricks_cluster.etl)") in line


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_the_pages_show_the_hour_and_name_the_month_unknown(tmp_path, capsys, fmt):
    code, out = cost(capsys, "--terraform", module(tmp_path, CPU_CLUSTER), "--format", fmt)
    assert code == 0 and "$2.28" in out and "unknown/month expected" in out
    assert "$2.28/hour, in the hourly total; its month unknown" in out
    assert "but for a resource priced by the hour only" in out


def test_fail_on_unknown_fails_on_an_unknown_month(tmp_path, capsys):
    code, _ = cost(capsys, "--terraform", module(tmp_path, CPU_CLUSTER), "--fail-on-unknown")
    assert code == 1


def test_an_unchanged_cluster_priced_by_the_hour_leaves_the_change_known(tmp_path, capsys):
    base = module(tmp_path, CPU_CLUSTER, GPU_TRAINING, name="base")
    head = module(tmp_path, CPU_CLUSTER, GPU_TRAINING.replace("num_workers   = 1", "num_workers   = 2"), name="head")
    code, out = cost(capsys, "--terraform", head, "--against", base, "--format", "json")
    delta = json.loads(out)["diff"]["total"]["delta"]
    assert code == 0 and delta["monthly_expected"] is not None and delta["monthly_expected"] > 0
    assert delta["hourly"] is not None


def test_a_changed_cluster_priced_by_the_hour_knows_its_hourly_change_not_its_monthly_one(tmp_path, capsys):
    base = module(tmp_path, CPU_CLUSTER, name="base")
    head = module(tmp_path, CPU_CLUSTER, name="head", workers=2)
    code, out = cost(capsys, "--terraform", head, "--against", base, "--format", "json")
    diff = json.loads(out)["diff"]
    row = diff["rows"][0]
    assert code == 0 and row["status"] == "changed"
    assert row["delta"]["hourly"] == pytest.approx(CLUSTER_HOURLY / 2)  # one more m5.2xlarge node
    assert row["delta"]["monthly_expected"] is None
    assert diff["total"]["delta"]["hourly"] == pytest.approx(CLUSTER_HOURLY / 2)
    assert diff["total"]["delta"]["monthly_expected"] is None and diff["total"]["complete"] is False


def test_the_diff_table_shows_the_hourly_change_of_a_cluster_priced_by_the_hour(tmp_path, capsys):
    base = module(tmp_path, CPU_CLUSTER, name="base")
    head = module(tmp_path, CPU_CLUSTER, name="head", workers=2)
    code, out = cost(capsys, "--terraform", head, "--against", base)
    row = next(line for line in out.splitlines() if "databricks_cluster.etl" in line and "changed" in line)
    total = next(line for line in out.splitlines() if line.lstrip("│ ").startswith("total"))
    assert code == 0
    assert "unknown ($2.28/h)" in row and "unknown ($3.41/h)" in row and "unknown (+$1.14/h)" in row
    assert "unknown (+$1.14/h)" in total
