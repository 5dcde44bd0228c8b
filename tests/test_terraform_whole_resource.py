"""Issue 51, items 2-3: a whole resource named as a value (``for_each = databricks_job.x``) is what Terraform makes of
it, not unknown. Checked with terraform 1.11.4 on terraform_data modules (2026-12-06): ``for_each =
terraform_data.x`` where x has ``for_each = {a = 1, b = 2}`` plans ``terraform_data.y["a"]`` and ``["b"]`` (and
``each.value.input`` is x's argument); where x has ``count = 2`` Terraform refuses it: "Invalid for_each argument
... must be a map, or set of strings, and you have provided a value of type tuple". Excerpts written here."""

from __future__ import annotations

import json
from pathlib import Path

from dbx_ai_infra.cli.cli import main

JOBS = """
variable "jobs" {
  default = { a = "m5.xlarge", b = "m5.2xlarge" }
}
resource "databricks_job" "x" {
  EXPANSION
  name = "job"
  job_cluster {
    job_cluster_key = "main"
    new_cluster {
      spark_version = "15.4.x-scala2.12"
      node_type_id  = "m5.xlarge"
      num_workers   = 1
      custom_tags   = { workload = "etl", cost_center = "cc" }
    }
  }
  task {
    task_key        = "t"
    job_cluster_key = "main"
    notebook_task { notebook_path = "/x" }
  }
}
resource "databricks_permissions" "x" {
  for_each = databricks_job.x
  job_id   = each.value.id
  access_control {
    group_name       = "users"
    permission_level = "CAN_VIEW"
  }
}
"""


def check(tmp_path: Path, capsys, expansion: str) -> tuple[int, str, str]:
    (tmp_path / "main.tf").write_text(JOBS.replace("EXPANSION", expansion), encoding="utf-8")
    code = main(["check", "--terraform", str(tmp_path), "--format", "json"])
    out, err = capsys.readouterr()
    return code, out, err


def test_for_each_over_a_resource_with_for_each_takes_its_keys(tmp_path, capsys):
    code, out, err = check(tmp_path, capsys, "for_each = var.jobs")
    violations = json.loads(out)["violations"]
    assert code == 0, err
    assert "for_each is not known here" not in err
    assert not [v for v in violations if v["policy"] == "terraform-not-evaluated"]
    # each permission names its job by the job's id (its address): neither job lacks access control
    assert not [v for v in violations if v["policy"] == "databricks-resource-require-access-control"]


def test_a_computed_attribute_of_a_resource_instance_is_unknown_not_an_error(tmp_path, capsys):
    code, _, err = check(tmp_path, capsys, "for_each = var.jobs")
    assert code == 0
    (tmp_path / "main.tf").write_text(JOBS.replace("EXPANSION", "for_each = var.jobs").replace(
        "job_id   = each.value.id", "job_id   = each.value.url"), encoding="utf-8")
    code = main(["check", "--terraform", str(tmp_path), "--format", "json"])
    _, err = capsys.readouterr()
    # a computed attribute (url) is known only after apply: unknown, never "the object has no attribute"
    assert code == 0 and "no attribute" not in err and "not evaluated" not in err


def test_for_each_over_a_resource_with_count_is_refused_as_terraform_refuses_it(tmp_path, capsys):
    code, _, err = check(tmp_path, capsys, "count = 2")
    assert code == 2
    assert "databricks_permissions.x: for_each" in err and "you have provided a value of type tuple" in err


def test_a_resource_whose_for_each_is_unknown_stays_unknown(tmp_path, capsys):
    (tmp_path / "vars.tf").write_text('variable "names" { type = set(string) }\n', encoding="utf-8")
    code, out, err = check(tmp_path, capsys, "for_each = var.names")
    listed = [v["resource_name"] for v in json.loads(out)["violations"] if v["policy"] == "terraform-not-evaluated"]
    assert code == 0 and listed == ["databricks_job.x", "databricks_permissions.x"]


def test_a_permission_whose_target_is_known_only_after_apply_leaves_access_not_judged(tmp_path, capsys):
    """A permission naming its job by a computed attribute (each.value.url) may name any job of the plan: the
    access-control rule says not judged on the jobs no known permission names, never "no Permissions"."""
    (tmp_path / "main.tf").write_text(JOBS.replace("EXPANSION", "for_each = var.jobs").replace(
        "job_id   = each.value.id", "job_id   = each.value.url"), encoding="utf-8")
    code = main(["check", "--terraform", str(tmp_path), "--format", "json"])
    out, _ = capsys.readouterr()
    access = [v for v in json.loads(out)["violations"] if v["policy"] == "databricks-resource-require-access-control"]
    assert code == 0 and len(access) == 2
    assert all(v["enforcement"] == "not-judged" and "known only after apply may name it" in v["message"]
               for v in access)
    assert main(["check", "--terraform", str(tmp_path), "--fail-on-unknown"]) == 1
    capsys.readouterr()
