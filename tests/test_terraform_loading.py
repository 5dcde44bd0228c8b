"""Issue 51, item 1: Terraform's loading rules. The files Terraform loads and only those (``*.tf``, ``*.tf.json``;
hidden files, ``~`` backups and editor lock files skipped), override files merged with Terraform's semantics, a
byte-order mark accepted, a duplicate address refused naming both files, the value files in Terraform's order (HCL
or JSON), and a directory with nothing Terraform would load refused, never a pass.

Each expectation was checked against Terraform 1.11.4 (``terraform plan`` / ``terraform console`` on the same
layout with ``terraform_data`` resources, no provider needed); the excerpts are written for these tests in the shapes
public modules use (databricks/terraform-databricks-examples, databricks/terraform-databricks-sra)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli_doc, tf_cluster

from dbx_ai_infra.sources.hcl import read_terraform


def clusters(path: Path, *var_files: str) -> dict[str, dict[str, Any]]:
    doc, _, _ = read_terraform(str(path), var_files)
    return {c["address"]: c["change"]["after"] for c in doc["resource_changes"]}


def test_hidden_backup_and_lock_files_are_not_loaded_and_tf_json_is(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(tf_cluster("etl"))
    (tmp_path / ".main.tf").write_text(tf_cluster("hidden"))  # a hidden copy: Terraform skips it
    (tmp_path / ".#main.tf").write_text("not HCL at all {{{")  # emacs's lock file (a dangling symlink there)
    (tmp_path / "main.tf~").write_text("not HCL at all {{{")  # vim's backup
    (tmp_path / "#main.tf#").write_text("not HCL at all {{{")  # emacs's autosave
    (tmp_path / "jobs.tf.json").write_text(json.dumps({
        "//": "written by a generator",
        "resource": {"databricks_cluster": {"gen": {
            "cluster_name": "gen-${var.env}", "spark_version": "17.3.x-scala2.13", "node_type_id": "i3.xlarge",
            "num_workers": 1, "autoscale": {"min_workers": 1, "max_workers": 3},
            "library": {"pypi": {"package": "torch==2.4.0"}}}}},
        "variable": {"env": {"default": "prod"}}}))
    got = clusters(tmp_path)
    assert sorted(got) == ["databricks_cluster.etl", "databricks_cluster.gen"]
    assert got["databricks_cluster.gen"]["cluster_name"] == "gen-prod"
    assert got["databricks_cluster.gen"]["library"] == [{"pypi": {"package": "torch==2.4.0"}}]


def test_a_directory_with_only_tf_json_is_read_and_one_with_nothing_terraform_loads_is_exit_2(capsys,
                                                                                             tmp_path: Path) -> None:
    only_json = tmp_path / "json"
    only_json.mkdir()
    (only_json / "main.tf.json").write_text(json.dumps({"resource": [{"databricks_cluster": [{"gpu": {
        "cluster_name": "gpu", "spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.xlarge",
        "num_workers": 2}}]}]}))
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(only_json), "--json")
    assert code in (0, 1) and doc["checked"]["clusters"] == 1, err

    nothing = tmp_path / "nothing"
    nothing.mkdir()
    (nothing / ".main.tf").write_text(tf_cluster("hidden"))
    (nothing / "README.md").write_text("# not a module\n")
    for command in ("check", "cost"):
        code, _, err = run_cli_doc(capsys, command, "--terraform", str(nothing))
        assert code == 2 and "holds no file Terraform would load" in err and str(nothing) in err, err


def test_override_files_merge_arguments_replace_nested_blocks_locals_and_variables(tmp_path: Path) -> None:
    """``override.tf`` and ``*_override.tf`` after the primary files, in name order: an argument replaces the
    base's, a nested block type replaces all of the base's blocks of that type, a local and a variable's
    default by name (Terraform's Override Files; module_merge_body.go)."""
    (tmp_path / "main.tf").write_text('''
variable "workers" {
  type    = number
  default = 2
}
locals {
  team = "base"
  env  = "dev"
}
resource "databricks_cluster" "train" {
  cluster_name  = "train-${local.team}-${local.env}"
  spark_version = "17.3.x-gpu-ml-scala2.13"
  node_type_id  = "g5.xlarge"
  num_workers   = var.workers
  custom_tags   = { workload = "training" }
  library {
    pypi { package = "torch" }
  }
  library {
    jar = "dbfs:/a.jar"
  }
  aws_attributes {
    availability = "SPOT"
    first_on_demand = 0
  }
}
''')
    (tmp_path / "override.tf").write_text('''
variable "workers" {
  default = 8
}
locals {
  team = "ml"
}
resource "databricks_cluster" "train" {
  library {
    pypi { package = "torch==2.4.0" }
  }
}
''')
    (tmp_path / "spot_override.tf").write_text('''
resource "databricks_cluster" "train" {
  aws_attributes {
    availability = "SPOT_WITH_FALLBACK"
  }
}
''')
    got = clusters(tmp_path)
    assert list(got) == ["databricks_cluster.train"]  # merged, never counted twice
    train = got["databricks_cluster.train"]
    assert train["cluster_name"] == "train-ml-dev" and train["num_workers"] == 8
    assert train["custom_tags"] == {"workload": "training"}  # not in the override: kept
    assert train["library"] == [{"pypi": [{"package": "torch==2.4.0"}]}]  # both base blocks replaced
    assert train["aws_attributes"] == [{"availability": "SPOT_WITH_FALLBACK"}]  # the block whole, not merged


def test_an_override_replaces_dynamic_blocks_of_its_type_and_a_missing_target_is_exit_2(capsys,
                                                                                       tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('''
resource "databricks_cluster" "c" {
  cluster_name = "c"
  dynamic "library" {
    for_each = ["a", "b"]
    content {
      jar = library.value
    }
  }
}
''')
    (tmp_path / "libs_override.tf.json").write_text(json.dumps(
        {"resource": {"databricks_cluster": {"c": {"library": [{"jar": "only.jar"}]}}}}))
    after = clusters(tmp_path)["databricks_cluster.c"]
    assert after["library"] == [{"jar": "only.jar"}] and "dynamic" not in after

    (tmp_path / "z_override.tf").write_text('resource "databricks_cluster" "other" {\n  num_workers = 1\n}\n')
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "z_override.tf" in err and "databricks_cluster.other" in err
    assert "Missing resource to override" in err


def test_the_same_address_in_two_files_is_exit_2_naming_both(capsys, tmp_path: Path) -> None:
    (tmp_path / "a.tf").write_text(tf_cluster("etl"))
    (tmp_path / "b.tf").write_text("# the same cluster again\n\n" + tf_cluster("etl"))
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2, err
    assert "databricks_cluster.etl" in err and f"{tmp_path / 'a.tf'}:1" in err and f"{tmp_path / 'b.tf'}:3" in err
    assert 'Duplicate resource "databricks_cluster" configuration' in err
    (tmp_path / "b.tf").write_text('module "m" {\n  source = "./m"\n}\nmodule "m" {\n  source = "./m"\n}\n')
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "module.m" in err and "Duplicate module call" in err


def test_a_byte_order_mark_is_accepted(capsys, tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_bytes(b"\xef\xbb\xbf" + tf_cluster("bom").encode())
    (tmp_path / "terraform.tfvars").write_bytes(b"\xef\xbb\xbfunused = 1\n")
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert code == 0 and doc["checked"]["clusters"] == 1, err


def test_value_files_in_terraform_s_order_hcl_or_json(capsys, tmp_path: Path) -> None:
    """terraform.tfvars, terraform.tfvars.json, then *.auto.tfvars(.json) in lexical order (a hidden one too:
    Terraform filters them by suffix only), then each --var-file, JSON when its name ends .json."""
    (tmp_path / "main.tf").write_text('''
variable "a" {}
variable "b" {}
variable "c" {}
variable "d" {}
resource "databricks_cluster" "c" {
  cluster_name = "${var.a}-${var.b}-${var.c}-${var.d}"
}
''')
    (tmp_path / "terraform.tfvars").write_text('a = "tfvars"\nb = "tfvars"\nc = "tfvars"\nd = "tfvars"\n')
    (tmp_path / "terraform.tfvars.json").write_text('{"b": "tfvars-json", "c": "tfvars-json", "d": "tfvars-json"}')
    (tmp_path / "a.auto.tfvars.json").write_text('{"c": "a-auto-json", "d": "a-auto-json"}')
    (tmp_path / ".b.auto.tfvars").write_text('d = "hidden-auto"\n')  # sorts first: overwritten by a.auto
    (tmp_path / "b.auto.tfvars").write_text('d = "b-auto"\n')
    (tmp_path / "c.auto.tfvars~").write_text('d = "backup"\n')  # not an auto file
    assert clusters(tmp_path)["databricks_cluster.c"]["cluster_name"] == "tfvars-tfvars-json-a-auto-json-b-auto"

    json_file = tmp_path / "prod.json"
    json_file.write_text('{"d": "var-file-json"}')
    assert clusters(tmp_path, str(json_file))["databricks_cluster.c"]["cluster_name"].endswith("-var-file-json")
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--var-file", str(json_file), "--json")
    assert code in (0, 1), err  # read (the cluster's findings aside); it was exit 2 before

    hcl_as_json = tmp_path / "wrong.json"
    hcl_as_json.write_text('d = "x"\n')  # Terraform reads a .json var file as JSON: "Invalid JSON keyword"
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--var-file", str(hcl_as_json))
    assert code == 2 and "wrong.json" in err and "is not JSON" in err


@pytest.mark.parametrize("as_given", ["dir", "dir/"])
def test_a_var_file_that_is_a_directory_is_exit_2(capsys, tmp_path: Path, monkeypatch, as_given: str) -> None:
    (tmp_path / "main.tf").write_text(tf_cluster("etl"))
    (tmp_path / "dir").mkdir()
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli_doc(capsys, "check", "--terraform", ".", "--var-file", as_given)
    assert code == 2 and "is a directory" in err, err


def test_an_override_of_a_module_call_replaces_its_source_and_keeps_its_other_arguments(tmp_path: Path) -> None:
    """The shape of a public example of override files (a module call's ``source`` switched by ``override.tf``);
    terraform plan on the same layout plans the v2 module with the base's ``size``."""
    (tmp_path / "main.tf").write_text('module "serving" {\n  source = "./v1"\n  size   = 2\n}\n')
    (tmp_path / "override.tf").write_text('module "serving" {\n  source = "./v2"\n}\n')
    for version in ("v1", "v2"):
        (tmp_path / version).mkdir()
        (tmp_path / version / "main.tf").write_text(
            'variable "size" {}\n' + tf_cluster(version, workers="var.size"))
    got = clusters(tmp_path)
    assert list(got) == ["module.serving.databricks_cluster.v2"]
    assert got["module.serving.databricks_cluster.v2"]["num_workers"] == 2
