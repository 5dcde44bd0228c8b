"""Issue 51, item 2: ``fileset()``, ``file()`` and ``path.module`` as Terraform reads them, run in the root module's
directory: ``path.root`` is ``"."``, ``path.module`` is relative to it (``modules/jobs``), and a relative path is
read from the root, whatever directory ``--terraform`` names from wherever it is run (the pattern of
databricks/terraform-databricks-examples' aws-workspace-config: a map of workspaces made of the JSON files a
``fileset`` finds). Checked with terraform 1.11.4 (``terraform console``: ``local.data`` over the same files).
Excerpt written here."""

from __future__ import annotations

import json
from pathlib import Path

from dbx_ai_infra.cli.cli import main

ROOT = """
module "jobs" {
  source = "./modules/jobs"
}
"""

CHILD = """
locals {
  files   = fileset("${path.module}/conf", "*.json")
  configs = { for f in local.files : trimsuffix(f, ".json") => jsondecode(file("${path.module}/conf/${f}")) }
}
resource "databricks_cluster" "c" {
  for_each                = local.configs
  cluster_name            = "${each.key}-${path.module}"
  spark_version           = "15.4.x-scala2.12"
  node_type_id            = each.value.node
  num_workers             = 1
  autotermination_minutes = 30
  custom_tags             = { workload = each.key, cost_center = "cc" }
}
"""


def test_fileset_and_file_read_from_the_root_whatever_the_directory_given(tmp_path: Path, capsys, monkeypatch):
    root = tmp_path / "repo" / "infra"
    conf = root / "modules" / "jobs" / "conf"
    conf.mkdir(parents=True)
    (root / "main.tf").write_text(ROOT, encoding="utf-8")
    (root / "modules" / "jobs" / "main.tf").write_text(CHILD, encoding="utf-8")
    (conf / "etl.json").write_text(json.dumps({"node": "m5.xlarge"}), encoding="utf-8")
    (conf / "bi.json").write_text(json.dumps({"node": "m5.2xlarge"}), encoding="utf-8")
    (conf / "notes.txt").write_text("not matched", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["cost", "--terraform", "repo/infra", "--format", "json"])
    out, err = capsys.readouterr()
    resources = json.loads(out)["cost"]["resources"]
    assert code == 0, err
    assert {k: v["node_type_id"] for k, v in resources.items()} == {
        'terraform:module.jobs.databricks_cluster.c["bi"]': "m5.2xlarge",
        'terraform:module.jobs.databricks_cluster.c["etl"]': "m5.xlarge"}
    assert "not evaluated" not in err and "unknown" not in err
