"""Issue 51, item 3: a data source whose arguments come from a variable with no value is named as not judged by the
rules that judge its choice, never passed silently. A runtime chosen by ``data "databricks_spark_version"`` is
judged by its arguments (``gpu``, ``long_term_support``: the provider's docs, data-sources/spark_version.md); where
those are unknown, the rules say so. Excerpt written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbx_ai_infra.cli.cli import main

MODULE = """
variable "lts" {
  type = bool
}
data "databricks_spark_version" "rt" {
  long_term_support = LTS
  gpu               = GPU
  ml                = true
}
resource "databricks_cluster" "c" {
  cluster_name            = "c"
  spark_version           = data.databricks_spark_version.rt.id
  node_type_id            = "g5.xlarge"
  num_workers             = 1
  autotermination_minutes = 30
  custom_tags             = { workload = "x", cost_center = "y" }
}
"""


def findings(tmp_path: Path, capsys, lts: str, gpu: str, *extra: str) -> tuple[int, dict[str, dict]]:
    (tmp_path / "main.tf").write_text(MODULE.replace("LTS", lts).replace("GPU", gpu), encoding="utf-8")
    code = main(["check", "--terraform", str(tmp_path), "--format", "json", *extra])
    out, _ = capsys.readouterr()
    return code, {v["policy"]: v for v in json.loads(out)["violations"]}


@pytest.mark.parametrize(("policy", "argument"), [("databricks-cluster-require-matching-runtime", "gpu"),
                                                  ("databricks-cluster-require-supported-runtime",
                                                   "long_term_support")])
def test_an_unknown_argument_of_the_data_source_is_not_judged(tmp_path, capsys, policy, argument):
    code, found = findings(tmp_path, capsys, "var.lts", "var.lts")
    assert code == 0 and found[policy]["enforcement"] == "not-judged"
    assert f"spark_version (the argument {argument} of data.databricks_spark_version.rt) is unknown" in \
        found[policy]["message"]


def test_fail_on_unknown_fails_on_it(tmp_path, capsys):
    assert findings(tmp_path, capsys, "var.lts", "var.lts", "--fail-on-unknown")[0] == 1


def test_known_arguments_are_judged(tmp_path, capsys):
    code, found = findings(tmp_path, capsys, "false", "false")
    assert found["databricks-cluster-require-matching-runtime"]["enforcement"] == "mandatory"
    assert found["databricks-cluster-require-supported-runtime"]["enforcement"] == "advisory"
    code, found = findings(tmp_path, capsys, "true", "true")
    assert "databricks-cluster-require-matching-runtime" not in found
    assert "databricks-cluster-require-supported-runtime" not in found
