"""Terraform code's values, as Terraform gives them to a plan (issue 51, items 2 and 3): the modules below are
written by us in the shapes of public Databricks modules (databricks/terraform-databricks-examples,
terraform-databricks-sra, terraform-databricks-mlops-aws-project: variables typed with ``object()`` and
``optional()``, ``dynamic "library"`` / ``"autoscale"`` / ``"job_cluster"`` blocks, tags from ``merge()`` with a
``for``, ``try()`` over an object variable); each value asserted is what Terraform v1.11 gives (the types'
conversions: ``terraform console`` prints ``tobool("false")`` as ``false``, ``tonumber("1")`` as ``1``, and refuses
``TF_VAR_x=FALSE`` on a ``bool`` variable: 'a bool is required; to convert from string, use lowercase "false"').
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.sources.hcl import read_terraform


def _plan(tmp_path: Path, code: str, **files: str) -> tuple[dict[str, Any], list[str]]:
    (tmp_path / "main.tf").write_text(code)
    for name, text in files.items():
        (tmp_path / name.replace("__", ".")).write_text(text)
    doc, _, notes = read_terraform(str(tmp_path))
    return {c["address"]: c["change"] for c in doc["resource_changes"]}, notes


CLUSTER = """
resource "databricks_cluster" "this" {{
  cluster_name            = "c"
  spark_version           = "15.4.x-scala2.12"
  node_type_id            = "i3.xlarge"
  autotermination_minutes = 30
  num_workers             = 2
  {extra}
}}
"""


def test_arithmetic_on_a_variable_is_evaluated_not_read_as_zero(tmp_path: Path) -> None:
    changes, _ = _plan(tmp_path, 'variable "m" {\n  default = 1\n}\n' + CLUSTER.format(
        extra='aws_attributes {\n    availability = "SPOT_WITH_FALLBACK"\n    first_on_demand = var.m + 1\n  }'))
    assert changes["databricks_cluster.this"]["after"]["aws_attributes"] == [
        {"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 2}]


def test_try_over_an_object_variable_takes_the_attribute_or_the_fallback(tmp_path: Path) -> None:
    code = """
variable "cluster" {
  type    = any
  default = { name = "etl" }
}
variable "typed" {
  type    = object({ name = string, autotermination_minutes = optional(number, 45) })
  default = { name = "etl" }
}
resource "databricks_cluster" "untyped" {
  autotermination_minutes = try(var.cluster.autotermination_minutes, 10)
  num_workers             = try(var.cluster.num_workers, null)
  cluster_name            = try(var.cluster.name, "x")
}
resource "databricks_cluster" "typed" {
  autotermination_minutes = try(var.typed.autotermination_minutes, 10)
}
"""
    changes, _ = _plan(tmp_path, code)
    # Terraform: the attribute the object lacks is an error, which try() turns into the fallback; the typed
    # object's optional() attribute takes its default (45), so try() returns that
    assert changes["databricks_cluster.untyped"]["after"] == {"autotermination_minutes": 10, "num_workers": None,
                                                              "cluster_name": "etl"}
    assert changes["databricks_cluster.typed"]["after"]["autotermination_minutes"] == 45


def test_tags_made_by_merge_and_a_for_expression_are_the_tags(tmp_path: Path) -> None:
    code = 'locals {\n  tags = { Owner = "ml", Empty = "" }\n}\n' + CLUSTER.format(
        extra='custom_tags = merge(local.tags, { for k, v in { ResourceClass = "Serverless" } : k => v '
              'if v != "" }, { for k, v in local.tags : "${k}Copy" => upper(v) if v != "" })')
    changes, _ = _plan(tmp_path, code)
    assert changes["databricks_cluster.this"]["after"]["custom_tags"] == {
        "Owner": "ml", "Empty": "", "ResourceClass": "Serverless", "OwnerCopy": "ML"}


def test_merge_with_an_unknown_argument_is_an_unknown_map_not_a_map_lacking_keys(tmp_path: Path) -> None:
    code = 'variable "extra" {\n  type = map(string)\n}\nlocals {\n  tags = { Owner = "ml" }\n}\n' + \
        CLUSTER.format(extra="custom_tags = merge(local.tags, var.extra)")
    changes, notes = _plan(tmp_path, code)
    change = changes["databricks_cluster.this"]
    assert change["after_unknown"]["custom_tags"] is True and change["after"]["custom_tags"] is None
    assert "variables with no value here (unknown): extra" in notes


def test_dynamic_blocks_are_expanded_with_their_iterator(tmp_path: Path) -> None:
    code = """
variable "libraries" {
  default = ["pandas", "torch==2.3.0"]
}
variable "autoscale" {
  default = { min = 2, max = 8 }
}
resource "databricks_cluster" "this" {
  dynamic "autoscale" {
    for_each = var.autoscale == null ? [] : [var.autoscale]
    content {
      min_workers = autoscale.value.min
      max_workers = autoscale.value.max
    }
  }
  dynamic "library" {
    for_each = toset(var.libraries)
    iterator = lib
    content {
      pypi {
        package = lib.value
      }
    }
  }
}
resource "databricks_job" "train" {
  name = "train"
  dynamic "job_cluster" {
    for_each = { for i in range(3) : "c${i}" => i }
    content {
      job_cluster_key = job_cluster.key
      new_cluster {
        num_workers = job_cluster.value + 1
        dynamic "init_scripts" {
          for_each = job_cluster.value == 0 ? ["/Volumes/x/init.sh"] : []
          content {
            volumes {
              destination = init_scripts.value
            }
          }
        }
      }
    }
  }
}
"""
    changes, _ = _plan(tmp_path, code)
    cluster = changes["databricks_cluster.this"]["after"]
    assert cluster["autoscale"] == [{"min_workers": 2, "max_workers": 8}]
    assert cluster["library"] == [{"pypi": [{"package": "pandas"}]}, {"pypi": [{"package": "torch==2.3.0"}]}]
    assert "dynamic" not in cluster
    clusters = changes["databricks_job.train"]["after"]["job_cluster"]
    assert [(c["job_cluster_key"], c["new_cluster"][0]["num_workers"]) for c in clusters] == [
        ("c0", 1), ("c1", 2), ("c2", 3)]
    assert clusters[0]["new_cluster"][0]["init_scripts"] == [{"volumes": [{"destination": "/Volumes/x/init.sh"}]}]
    assert clusters[1]["new_cluster"][0]["init_scripts"] == []


def test_a_dynamic_block_over_an_unknown_collection_is_unknown_not_absent(tmp_path: Path) -> None:
    code = CLUSTER.format(extra='dynamic "library" {\n    for_each = data.external.libs.result\n'
                                '    content {\n      pypi { package = library.value }\n    }\n  }')
    change = _plan(tmp_path, code)[0]["databricks_cluster.this"]
    assert change["after_unknown"]["library"] is True


def test_optional_attribute_defaults_of_object_variables_are_applied(tmp_path: Path) -> None:
    code = """
variable "clusters" {
  type = map(object({
    num_workers             = optional(number, 2)
    autotermination_minutes = optional(number, 20)
    spot                    = optional(bool, true)
    tags                    = optional(map(string), {})
    node                    = optional(object({ type = optional(string, "i3.xlarge") }), {})
  }))
  default = {
    etl = {}
    ml  = { num_workers = 4, spot = "false", node = { type = "g5.4xlarge" } }
  }
}
resource "databricks_cluster" "this" {
  for_each                = var.clusters
  cluster_name            = each.key
  num_workers             = each.value.num_workers
  autotermination_minutes = each.value.autotermination_minutes
  node_type_id            = each.value.node.type
  aws_attributes {
    availability = each.value.spot ? "SPOT_WITH_FALLBACK" : "ON_DEMAND"
  }
}
"""
    changes, _ = _plan(tmp_path, code)
    etl, ml = changes['databricks_cluster.this["etl"]']["after"], changes['databricks_cluster.this["ml"]']["after"]
    assert (etl["num_workers"], etl["autotermination_minutes"], etl["node_type_id"]) == (2, 20, "i3.xlarge")
    assert etl["aws_attributes"] == [{"availability": "SPOT_WITH_FALLBACK"}]
    assert (ml["num_workers"], ml["node_type_id"], ml["aws_attributes"]) == (
        4, "g5.4xlarge", [{"availability": "ON_DEMAND"}])


def test_values_are_converted_to_the_declared_type(tmp_path: Path) -> None:
    code = """
variable "spot" {
  type    = bool
  default = "false"
}
variable "workers" {
  type    = number
  default = "3"
}
variable "zones" {
  type    = set(string)
  default = ["b", "a", "b"]
}
resource "databricks_cluster" "this" {
  count        = "1"
  cluster_name = "c-%{ if var.spot }spot%{ else }on-demand%{ endif }"
  num_workers  = var.workers * 2
  spark_conf   = { zones = join(",", var.zones), spot = var.spot ? "yes" : "no" }
}
"""
    changes, _ = _plan(tmp_path, code)
    after = changes["databricks_cluster.this[0]"]["after"]
    assert after["cluster_name"] == "c-on-demand"
    assert after["num_workers"] == 6
    assert after["spark_conf"] == {"zones": "a,b", "spot": "no"}


def test_the_bare_map_and_list_keywords_are_map_any_and_list_any(tmp_path: Path) -> None:
    """terraform 1.11.4 plans `type = map` and `type = list` (older modules' spelling) as map(any) and list(any), and
    refuses a bare `set`; the reader exited 2 on the first two ("is no type constraint")."""
    code = """
variable "tags" {
  type    = map
  default = { team = "ml" }
}
variable "libs" {
  type    = list
  default = ["pandas==2.2.2"]
}
""" + CLUSTER.format(extra='custom_tags = var.tags\n  spark_conf = { libs = join(",", var.libs) }')
    changes, _ = _plan(tmp_path, code)
    after = changes["databricks_cluster.this"]["after"]
    assert after["custom_tags"] == {"team": "ml"} and after["spark_conf"] == {"libs": "pandas==2.2.2"}


def test_a_bare_set_keyword_is_invalid_as_terraform_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "main.tf").write_text('variable "zones" {\n  type    = set\n  default = ["a"]\n}\n')
    code, _, err = _run(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "variable zones" in err and "no type constraint" in err and "Traceback" not in err


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tf_var_is_parsed_as_terraform_parses_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "main.tf").write_text('variable "spot" {\n  type = bool\n}\nvariable "zones" {\n'
                                      '  type = list(string)\n}\n' + CLUSTER.format(
                                          extra='spark_conf = { spot = var.spot, zones = join(",", var.zones) }'))
    monkeypatch.setenv("TF_VAR_spot", "FALSE")
    monkeypatch.setenv("TF_VAR_zones", '["a", "b"]')
    code, _, err = _run(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2
    assert "TF_VAR_spot" in err and "variable spot" in err and 'use lowercase "false"' in err
    assert "Traceback" not in err
    monkeypatch.setenv("TF_VAR_spot", "false")
    doc, _, _ = read_terraform(str(tmp_path))
    assert doc["resource_changes"][0]["change"]["after"]["spark_conf"] == {"spot": False, "zones": "a,b"}


def test_a_value_its_type_refuses_is_invalid_input_naming_the_variable(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "main.tf").write_text('variable "workers" {\n  type = number\n}\n'
                                      + CLUSTER.format(extra="").replace("num_workers             = 2",
                                                                         "num_workers = var.workers"))
    (tmp_path / "terraform.tfvars").write_text('workers = "two"\n')
    code, _, err = _run(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "variable workers" in err and "terraform.tfvars" in err and "number" in err


def test_findings_follow_the_evaluated_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The user's command on a module of the corpus's shapes: tags merged with a ``for`` are present, the unpinned
    library in a dynamic block is found, and the dynamic job clusters are judged (they were dropped)."""
    (tmp_path / "main.tf").write_text("""
variable "libraries" {
  default = ["pandas", "torch==2.3.0"]
}
locals {
  base = { workload = "etl" }
}
resource "databricks_cluster" "tagged" {
  cluster_name            = "tagged"
  spark_version           = "15.4.x-scala2.12"
  node_type_id            = "i3.xlarge"
  autotermination_minutes = 30
  num_workers             = 2
  custom_tags             = merge(local.base, { for k in ["cost_center"] : k => "ml-1234" })
  dynamic "library" {
    for_each = var.libraries
    content {
      pypi { package = library.value }
    }
  }
}
resource "databricks_job" "train" {
  name = "train"
  dynamic "job_cluster" {
    for_each = toset(["a", "b"])
    content {
      job_cluster_key = job_cluster.key
      new_cluster {
        spark_version = "15.4.x-gpu-ml-scala2.12"
        node_type_id  = "g5.4xlarge"
        num_workers   = 3
      }
    }
  }
}
""")
    code, out, _ = _run(capsys, "check", "--terraform", str(tmp_path), "--json")
    found = {(v["policy"], v["resource_name"], v["message"].split(":")[0]) for v in json.loads(out)["violations"]}
    policies = {(p, r) for p, r, _ in found}
    assert ("databricks-resource-require-tags", "databricks_cluster.tagged") not in policies
    assert ("databricks-library-require-pinned-pip-versions", "databricks_cluster.tagged") in policies
    judged = {place.strip() for p, r, m in found if r == "databricks_job.train" and m.startswith("job_clusters")
              for place in m.split(",")}
    assert judged == {"job_clusters[a].new_cluster", "job_clusters[b].new_cluster"}
    assert code == 1


def test_a_heredoc_inside_a_call_and_an_alert_task_made_by_a_dynamic_block(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Two shapes of the public corpus: a notebook's ``base64encode(<<-EOT ... EOT)`` (python-hcl2 writes the
    closing marker and the parenthesis on one line), and a ``dynamic "task"`` holding a ``sql_task`` with its one
    ``alert`` block (the provider allows one: never "expected an object, got list")."""
    (tmp_path / "main.tf").write_text("""
resource "databricks_notebook" "nb" {
  path           = "/Shared/nb"
  language       = "PYTHON"
  content_base64 = base64encode(<<-EOT
    print(1)
    EOT
  )
}
resource "databricks_job" "alerts" {
  name = "alerts"
  dynamic "task" {
    for_each = toset(["a", "b"])
    content {
      task_key = task.value
      sql_task {
        warehouse_id = "abc"
        alert {
          alert_id = "id-${task.value}"
        }
      }
    }
  }
}
""")
    changes, _ = _plan(tmp_path, (tmp_path / "main.tf").read_text())
    assert changes["databricks_notebook.nb"]["after"]["content_base64"] == "cHJpbnQoMSkK"  # terraform console
    assert [t["task_key"] for t in changes["databricks_job.alerts"]["after"]["task"]] == ["a", "b"]
    code, out, _ = _run(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert not [v for v in json.loads(out)["violations"] if v["policy"] == "databricks-api-conformance"]
    assert code == 0


def test_an_object_in_parentheses_is_that_object(tmp_path: Path) -> None:
    """``custom_tags = ({ ... })`` (databricks/terraform-databricks-examples writes its policy maps so): python-hcl2
    gives the object's Python repr inside ``${( )}``; it is the object, its expressions evaluated."""
    code = 'variable "k" {\n  default = "team"\n}\nlocals {\n  base = { a = "1" }\n}\n' + CLUSTER.format(
        extra='custom_tags = ({\n    "cost-center" = merge(local.base, { b = "2" })["b"]\n'
              '    (var.k) = "ml"\n    list = "x"\n  })\n  spark_conf = ([for s in ["a"] : upper(s)])[0] == "A" ? '
              '{ on = "yes" } : {}')
    after = _plan(tmp_path, code)[0]["databricks_cluster.this"]["after"]
    assert after["custom_tags"] == {"cost-center": "2", "team": "ml", "list": "x"}
    assert after["spark_conf"] == {"on": "yes"}


def test_a_dynamic_block_keys_a_set_by_its_elements_and_a_list_by_its_index(tmp_path: Path) -> None:
    """Terraform's docs (language/expressions/dynamic-blocks): the iterator's ``key`` is "the map key or list
    element index for the current element. If the for_each expression produces a set value then key is identical
    to value" (a set of strings in lexical order, as ``terraform console`` prints ``toset(["b", "a"])``)."""
    code = CLUSTER.format(extra='''dynamic "init_scripts" {
    for_each = toset(["b.sh", "a.sh"])
    content {
      workspace {
        destination = "${init_scripts.key}:${init_scripts.value}"
      }
    }
  }
  dynamic "library" {
    for_each = ["pandas==2.2.0", "numpy==2.0.0"]
    content {
      pypi {
        package = "${library.key}-${library.value}"
      }
    }
  }''')
    after = _plan(tmp_path, code)[0]["databricks_cluster.this"]["after"]
    assert [s["workspace"][0]["destination"] for s in after["init_scripts"]] == ["a.sh:a.sh", "b.sh:b.sh"]
    assert [lib["pypi"][0]["package"] for lib in after["library"]] == ["0-pandas==2.2.0", "1-numpy==2.0.0"]
