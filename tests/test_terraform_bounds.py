"""Issue 51, item 4, and the blocks not evaluated: module recursion and symlink loops are exit 2 naming the chain;
expansions past the stated limits (per block, multiplied through the modules around it, and in all) are exit 2
naming the address, before anything is evaluated; ``count < 0`` and the other counts Terraform refuses are exit 2
with Terraform's words (checked with terraform 1.11.4: "Invalid count argument"); a block whose count or for_each
is not known here is listed by address as not evaluated in every format, never "0 clusters" and a clean pass.
Every hostile input here used to hang or pass; each must end at once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_cli_doc, tf_cluster

from dbx_ai_infra.sources import tfexpand

NOT_EVALUATED = tfexpand.NOT_EVALUATED


def write(directory: Path, text: str, name: str = "main.tf") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text)
    return directory


@pytest.mark.parametrize(("count", "said"), [
    ("-1", "must be greater than or equal to zero"),
    ("1.5", "must be a whole number"),
    ("null", "An integer is required"),
    ("true", "number required"),
])
def test_a_count_terraform_refuses_is_exit_2_with_terraform_s_words(capsys, tmp_path: Path, count: str,
                                                                   said: str) -> None:
    write(tmp_path, tf_cluster("c", meta=f"count = {count}"))
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "main.tf:1: databricks_cluster.c: count" in err and "Invalid count argument" in err, err
    assert said in err


def test_count_and_for_each_together_are_exit_2_and_a_count_written_as_a_string_is_a_number(capsys,
                                                                                          tmp_path: Path) -> None:
    write(tmp_path, tf_cluster("c", meta='count = 1\n  for_each = { a = 1 }'))
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "sets both count and for_each" in err
    write(tmp_path, tf_cluster("c", meta='count = "2"'))  # Terraform converts it (terraform plan: 2)
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert code == 0 and doc["checked"]["clusters"] == 2, err


def test_a_single_count_over_the_limit_is_exit_2_naming_the_address(capsys, tmp_path: Path) -> None:
    write(tmp_path, tf_cluster("fleet", meta=f"count = {tfexpand.MAX_PER_BLOCK + 1}"))
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "databricks_cluster.fleet: expands to more than 10,000 instances" in err, err


def test_counts_multiplied_through_modules_are_exit_2_before_anything_is_evaluated(capsys, tmp_path: Path) -> None:
    """count = 10000 inside a module called with count = 10000: 10^8 instances of one block (it hung)."""
    write(tmp_path, 'module "fleet" {\n  source = "./fleet"\n  count  = 10000\n}\n')
    write(tmp_path / "fleet", tf_cluster("c", meta="count = 10000"))
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2, err
    assert "module.fleet[1].databricks_cluster.c: expands to more than 10,000 instances" in err
    assert "with the instances of the modules around it: 20,000 so far" in err


def test_the_whole_tree_has_a_limit_too(capsys, tmp_path: Path) -> None:
    blocks = "".join(tf_cluster(f"c{i}", meta=f"count = {tfexpand.MAX_PER_BLOCK}")
                     for i in range(tfexpand.MAX_TOTAL // tfexpand.MAX_PER_BLOCK + 1))
    write(tmp_path, blocks)
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "databricks_cluster.c10: takes the tree past 100,000 instances in all" in err, err


@pytest.mark.parametrize("count", ["", "count = 2"])
def test_a_module_that_calls_itself_is_exit_2_naming_the_chain(capsys, tmp_path: Path, count: str) -> None:
    """Directly (it ended after 22 levels with "./ is no directory here", or hung with a count), and through
    another module."""
    write(tmp_path, f'module "again" {{\n  source = "./"\n  {count}\n}}\n' + tf_cluster("c"))
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "module.again" in err and "calls a module that is already being called" in err, err
    assert "Terraform cannot install a module that calls itself" in err


def test_recursion_through_other_modules_and_a_symlinked_directory(capsys, tmp_path: Path) -> None:
    write(tmp_path, 'module "a" {\n  source = "./modules/a"\n}\n')
    write(tmp_path / "modules" / "a", 'module "b" {\n  source = "../b"\n  count  = 3\n}\n')
    write(tmp_path / "modules" / "b", 'module "a" {\n  source = "../a"\n}\n' + tf_cluster("c"))
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2, err
    assert f"{tmp_path / 'modules' / 'a'} -> {tmp_path / 'modules' / 'b'} -> {tmp_path / 'modules' / 'a'}" in err
    assert "module.a (" in err and "module.b (" in err

    linked = tmp_path / "linked"
    write(linked, 'module "self" {\n  source = "./modules/self"\n}\n')
    (linked / "modules").mkdir()
    os.symlink(linked, linked / "modules" / "self")  # a directory that is the module itself
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(linked))
    assert code == 2 and "module.self" in err and "already being called" in err, err


def test_symlink_loops_are_exit_2(capsys, tmp_path: Path) -> None:
    write(tmp_path, 'module "m" {\n  source = "./one"\n}\n')
    os.symlink(tmp_path / "two", tmp_path / "one")
    os.symlink(tmp_path / "one", tmp_path / "two")
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert code == 2 and "module.m" in err and "symlink loop" in err, err

    looped = tmp_path / "file-loop"
    write(looped, tf_cluster("c"))
    os.symlink(looped / "loop.tf", looped / "loop.tf")  # a .tf that points at itself
    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(looped))
    assert code == 2 and "loop.tf" in err and "cannot be read" in err, err


def test_a_block_whose_count_or_for_each_is_unknown_is_listed_as_not_evaluated_in_every_format(
        capsys, tmp_path: Path) -> None:
    write(tmp_path, 'data "databricks_clusters" "all" {}\nvariable "teams" {}\n'
          + tf_cluster("per_cluster", meta="count = length(data.databricks_clusters.all.ids)")
          + tf_cluster("per_team", meta="for_each = var.teams")
          + 'module "serving" {\n  source = "./serving"\n  count  = length(data.databricks_clusters.all.ids)\n}\n')
    write(tmp_path / "serving", tf_cluster("s"))
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert code == 0, err  # not judged: a strict gate is --fail-on-unknown's (issue 51, item 3)
    assert doc["checked"]["clusters"] == 0 and doc["checked"]["not_evaluated"] == 3
    listed = {v["resource_name"]: v["message"] for v in doc["violations"] if v["policy"] == NOT_EVALUATED}
    assert set(listed) == {"databricks_cluster.per_cluster", "databricks_cluster.per_team", "module.serving"}
    assert "its for_each is not known here" in listed["databricks_cluster.per_team"]

    code, text, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path))
    assert "0 clusters (0 GPU), 3 blocks of the code not evaluated" in text and "databricks_cluster.per_team" in text

    code, sarif, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--format", "sarif")
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == NOT_EVALUATED]
    assert {r["level"] for r in results} == {"note"} and len(results) == 3
    places = {r["locations"][0]["logicalLocations"][0]["name"]:
              r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results}
    assert places["databricks_cluster.per_cluster"] == 3
    assert NOT_EVALUATED in {r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}

    code, _, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--fail-on-unknown")
    assert code == 1, err
    code, text, _ = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--format", "github")
    assert text.count("::notice") >= 3 and "databricks_cluster.per_team" in text


def test_cost_names_what_was_not_evaluated_and_its_total_is_incomplete(capsys, tmp_path: Path) -> None:
    write(tmp_path, 'data "databricks_clusters" "all" {}\n'
          + tf_cluster("train", node_type="g5.xlarge", runtime="15.4.x-gpu-ml-scala2.12",
                       tags='dbx_workload = "training", cost_center = "data"')
          + tf_cluster("more", meta="count = length(data.databricks_clusters.all.ids)"))
    code, doc, err = run_cli_doc(capsys, "cost", "--terraform", str(tmp_path), "--format", "json")
    assert code == 0, err
    total = doc["cost"]["total"]
    assert total["complete"] is False and "databricks_cluster.more" in total["unpriced"]
    assert any(u["name"] == "databricks_cluster.more" and "not evaluated" in u["reason"]
               for u in doc["cost"]["unpriced"])
