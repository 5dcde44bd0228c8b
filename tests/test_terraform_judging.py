"""Issue 51, items 3, 5, 6 and 7: Terraform code judged as the provider reads it (its documented arguments, its
schema defaults), one finding per rule per resource, what cannot be judged said, roles from the cluster's shape, and
cost on real code. Each module below is a small excerpt written here in the shapes public modules use
(terraform-databricks-examples, terraform-databricks-sra, KICS' Databricks query samples), never a copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbx_ai_infra.cli.cli import main


def _module(tmp_path: Path, text: str, name: str = "mod") -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "main.tf").write_text(text, encoding="utf-8")
    return directory


def _check(capsys: Any, directory: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", "--terraform", str(directory), "--json", *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def _findings(report: dict[str, Any], policy: str | None = None) -> list[dict[str, Any]]:
    return [v for v in report["violations"] if policy is None or v["policy"] == policy]


# ---- item 7: the provider's documented arguments are fields; one finding per rule per resource ------------------

JOB_WITH_DOCUMENTED_BLOCKS = '''
resource "databricks_job" "etl" {
  name = "etl"
  git_source {
    url      = "https://github.com/acme/etl"
    provider = "gitHub"
    branch   = "main"
  }
  parameter {
    name    = "env"
    default = "dev"
  }
  environment {
    environment_key = "default"
    spec {
      environment_version = "2"
      dependencies        = ["pandas==2.2.2"]
    }
  }
  task {
    task_key        = "run"
    environment_key = "default"
    spark_python_task {
      python_file = "etl/main.py"
      source      = "GIT"
    }
  }
}
'''


def test_arguments_the_provider_documents_for_a_job_are_fields(tmp_path: Path, capsys: Any) -> None:
    _, report = _check(capsys, _module(tmp_path, JOB_WITH_DOCUMENTED_BLOCKS))
    assert not [v for v in report["violations"] if "is not a field" in v["message"]]


def test_a_misspelt_argument_is_still_not_a_field(tmp_path: Path, capsys: Any) -> None:
    _, report = _check(capsys, _module(tmp_path, JOB_WITH_DOCUMENTED_BLOCKS.replace("parameter {", "paramter {")))
    assert [v["message"] for v in report["violations"] if "is not a field" in v["message"]] == [
        "paramter is not a field of the Databricks API object JobSettings. Fix: if the workspace wrote it, nothing to "
        "do (a field newer than the checker's databricks-sdk); if you would send it, check its spelling against the "
        "API reference."]


def test_dynamic_is_never_a_field(tmp_path: Path, capsys: Any) -> None:
    directory = _module(tmp_path, '''
variable "libs" {
  default = ["pandas==2.2.2"]
}
resource "databricks_cluster" "team" {
  cluster_name            = "team"
  spark_version           = "17.3.x-scala2.13"
  node_type_id            = "i3.xlarge"
  num_workers             = 2
  autotermination_minutes = 30
  custom_tags             = { workload = "etl", cost_center = "cc1" }
  dynamic "library" {
    for_each = var.libs
    content {
      pypi { package = library.value }
    }
  }
}
''')
    _, report = _check(capsys, directory)
    assert not [v for v in report["violations"] if "dynamic" in v["message"]]


def test_an_unpinned_library_of_several_tasks_is_one_finding_naming_each_place(tmp_path: Path, capsys: Any) -> None:
    tasks = "".join(f'''
  task {{
    task_key        = "{key}"
    job_cluster_key = "main"
    library {{
      pypi {{ package = "requests" }}
    }}
    library {{
      pypi {{ package = "numpy>=1" }}
    }}
    notebook_task {{ notebook_path = "/{key}" }}
  }}''' for key in ("a", "b", "c"))
    directory = _module(tmp_path, f'''
resource "databricks_job" "nightly" {{
  name = "nightly"
  job_cluster {{
    job_cluster_key = "main"
    new_cluster {{
      spark_version = "17.3.x-scala2.13"
      node_type_id  = "i3.xlarge"
      num_workers   = 2
      custom_tags   = {{ workload = "etl", cost_center = "cc1" }}
    }}
  }}{tasks}
}}
''')
    code, report = _check(capsys, directory)
    pins = _findings(report, "databricks-library-require-pinned-pip-versions")
    assert code == 1 and len(pins) == 1
    assert pins[0]["message"].startswith(
        "job_clusters[main].new_cluster: pip libraries 'requests' in tasks[a].libraries, tasks[b].libraries, "
        "tasks[c].libraries, 'numpy>=1' in tasks[a].libraries, tasks[b].libraries, tasks[c].libraries are not pinned")


def test_a_rule_broken_on_several_job_clusters_is_one_finding(tmp_path: Path, capsys: Any) -> None:
    clusters = "".join(f'''
  job_cluster {{
    job_cluster_key = "{key}"
    new_cluster {{
      spark_version = "17.3.x-scala2.13"
      node_type_id  = "i3.xlarge"
      num_workers   = 1
    }}
  }}''' for key in ("x", "y"))
    directory = _module(tmp_path, f'''
resource "databricks_job" "two" {{
  name = "two"{clusters}
  task {{
    task_key        = "t"
    job_cluster_key = "x"
    notebook_task {{ notebook_path = "/t" }}
  }}
}}
''')
    _, report = _check(capsys, directory)
    tags = _findings(report, "databricks-resource-require-tags")
    assert len(tags) == 1
    assert tags[0]["message"].startswith("job_clusters[x].new_cluster, job_clusters[y].new_cluster: cluster lacks")


# the peers' checks on KICS' samples ("Databricks Autoscale Badly Setup", "Check use no LTS Spark Version"): node type
# and runtime from data sources, one autoscale bound left out; an Apache Spark version on a data-source node type


def test_kics_autoscale_with_one_bound_on_a_data_source_node_type(tmp_path: Path, capsys: Any) -> None:
    for bound in ("min_workers = 1", "max_workers = 50"):
        directory = _module(tmp_path, f'''
resource "databricks_cluster" "shared" {{
  cluster_name            = "Shared Autoscaling"
  spark_version           = data.databricks_spark_version.latest.id
  node_type_id            = data.databricks_node_type.smallest.id
  autotermination_minutes = 20
  autoscale {{
    {bound}
  }}
  aws_attributes {{
    availability    = "SPOT"
    first_on_demand = 1
  }}
}}
''', bound.split()[0])
        code, report = _check(capsys, directory)
        assert code == 1
        assert len(_findings(report, "databricks-cluster-require-complete-autoscale-bounds")) == 1


def test_kics_spark_version_that_is_no_runtime_key_on_a_data_source_node_type(tmp_path: Path, capsys: Any) -> None:
    directory = _module(tmp_path, '''
data "databricks_node_type" "with_gpu" {
  local_disk  = true
  min_cores   = 16
  gb_per_core = 1
  min_gpus    = 1
}
resource "databricks_cluster" "research" {
  cluster_name            = "Research Cluster"
  spark_version           = "3.3.1"
  node_type_id            = data.databricks_node_type.other_gpu.id
  autotermination_minutes = 20
  autoscale {
    min_workers = 1
    max_workers = 50
  }
}
''')
    code, report = _check(capsys, directory)
    assert code == 1 and len(_findings(report, "databricks-cluster-require-runtime-key")) == 1


# ---- item 3: schema defaults, and what a rule cannot judge ---------------------------------------------------------

def test_an_argument_left_out_takes_the_providers_documented_default(tmp_path: Path, capsys: Any) -> None:
    """autotermination_minutes: "Defaults to `60`" (docs/resources/cluster.md) and ``Default: 60`` in
    clusters/resource_cluster.go (terraform-provider-databricks v1.128.0): a plan carries 60, not "absent"."""
    directory = _module(tmp_path, '''
resource "databricks_cluster" "team" {
  cluster_name  = "team"
  spark_version = "15.4.x-scala2.12"
  node_type_id  = "i3.xlarge"
  num_workers   = 2
  custom_tags   = { workload = "etl", cost_center = "cc1" }
}
''')
    _, report = _check(capsys, directory)
    assert not _findings(report, "databricks-cluster-require-autotermination")


def test_the_snapshot_reads_documented_defaults_from_the_argument_reference() -> None:
    from dbx_ai_infra.dbxtypes.terraform_docs import defaults_in, documented_defaults

    page = ("# databricks_cluster resource\n\n## Argument Reference\n\n* `autotermination_minutes` - (Optional) "
            "Automatically terminate the cluster. Defaults to `60`.\n* `num_workers` - (Optional) Workers.\n\n"
            "### aws_attributes\n\n* `spot_bid_price_percent` - (Optional) If not specified, the default value is "
            "`100`.\n")
    assert defaults_in(page) == {"autotermination_minutes": 60}  # a block's own defaults are not top-level
    assert documented_defaults("databricks_cluster")["autotermination_minutes"] == 60


UNKNOWN_TAGS = '''
variable "extra_tags" {
  type = map(string)
}
locals {
  tags = { workload = "etl" }
}
resource "databricks_cluster" "team" {
  cluster_name            = "team"
  spark_version           = "15.4.x-scala2.12"
  node_type_id            = "i3.xlarge"
  num_workers             = 2
  autotermination_minutes = 30
  custom_tags             = merge(local.tags, var.extra_tags)
}
'''


def test_a_rule_whose_field_is_unknown_says_not_judged(tmp_path: Path, capsys: Any) -> None:
    code, report = _check(capsys, _module(tmp_path, UNKNOWN_TAGS))
    tags = _findings(report, "databricks-resource-require-tags")
    assert code == 0 and [t["enforcement"] for t in tags] == ["not-judged"]
    assert tags[0]["message"].startswith("not judged: custom_tags is unknown here")
    # a rule the unknown field does not concern stays silent (a two-worker cluster is no single node)
    assert not _findings(report, "databricks-cluster-configure-single-node")


def test_fail_on_unknown_makes_not_judged_fail(tmp_path: Path, capsys: Any) -> None:
    code, _ = _check(capsys, _module(tmp_path, UNKNOWN_TAGS), "--fail-on-unknown")
    assert code == 1


def test_every_format_says_what_was_not_judged(tmp_path: Path, capsys: Any) -> None:
    directory = _module(tmp_path, UNKNOWN_TAGS)
    assert main(["check", "--terraform", str(directory), "--format", "sarif"]) == 0
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert [r["level"] for r in results if r["ruleId"] == "databricks-resource-require-tags"] == ["note"]
    assert main(["check", "--terraform", str(directory), "--format", "github"]) == 0
    assert "::notice" in capsys.readouterr().out
    assert main(["check", "--terraform", str(directory)]) == 0
    assert "1 not judged" in capsys.readouterr().out
    for fmt in ("junit", "json"):
        assert main(["check", "--terraform", str(directory), "--format", fmt]) == 0
        assert "not judged: custom_tags is unknown" in capsys.readouterr().out


def test_an_unknown_first_on_demand_is_not_judged_never_zero(tmp_path: Path, capsys: Any) -> None:
    directory = _module(tmp_path, '''
variable "m" {
  type = number
}
resource "databricks_cluster" "chat" {
  cluster_name            = "chat"
  spark_version           = "15.4.x-gpu-ml-scala2.12"
  node_type_id            = "g5.2xlarge"
  autotermination_minutes = 30
  custom_tags             = { workload_type = "inference", workload = "chat", cost_center = "cc1" }
  autoscale {
    min_workers = 2
    max_workers = 8
  }
  aws_attributes {
    availability    = "SPOT_WITH_FALLBACK"
    first_on_demand = var.m
  }
}
''')
    code, report = _check(capsys, directory)
    spot = _findings(report, "databricks-cluster-disallow-all-spot-inference")
    assert code == 0 and [s["enforcement"] for s in spot] == ["not-judged"]
    assert "aws_attributes" in spot[0]["message"]


# ---- item 5: roles from the shape, not our tags -------------------------------------------------------------------

SHAPES = '''
resource "databricks_cluster" "chat" {
  cluster_name            = "chat"
  spark_version           = "15.4.x-gpu-ml-scala2.12"
  node_type_id            = "g5.2xlarge"
  autotermination_minutes = 30
  custom_tags             = { workload = "chat", cost_center = "cc1" }
  autoscale {
    min_workers = 2
    max_workers = 8
  }
  aws_attributes {
    availability    = "SPOT"
    first_on_demand = 0
  }
}
resource "databricks_job" "train" {
  name = "train"
  tags = { workload = "train", cost_center = "cc1" }
  job_cluster {
    job_cluster_key = "gpu"
    new_cluster {
      spark_version = "15.4.x-gpu-ml-scala2.12"
      node_type_id  = "g5.12xlarge"
      autoscale {
        min_workers = 2
        max_workers = 4
      }
    }
  }
  task {
    task_key        = "t"
    job_cluster_key = "gpu"
    notebook_task { notebook_path = "/t" }
  }
}
'''


def test_the_gpu_role_rules_fire_on_code_without_house_tags_saying_how_the_role_was_decided(
        tmp_path: Path, capsys: Any) -> None:
    code, report = _check(capsys, _module(tmp_path, SHAPES))
    spot = _findings(report, "databricks-cluster-disallow-all-spot-inference")
    training = _findings(report, "databricks-cluster-disallow-autoscaled-or-spot-training")
    assert code == 1 and [s["resource_name"] for s in spot] == ["databricks_cluster.chat"]
    assert spot[0]["message"].startswith(
        "inference cluster (role: inference, from its shape: an all-purpose GPU cluster that autoscales) uses "
        "aws_attributes.availability SPOT")
    assert [t["resource_name"] for t in training] == ["databricks_job.train"]
    assert "training cluster (role: training, from its shape: a GPU job cluster that autoscales) is autoscaled" in \
        training[0]["message"]


def test_a_role_tag_wins_over_the_shape_and_says_so(tmp_path: Path, capsys: Any) -> None:
    tagged = SHAPES.replace('workload = "chat",', 'workload = "chat", workload_type = "training",')
    _, report = _check(capsys, _module(tmp_path, tagged))
    assert not [s for s in _findings(report, "databricks-cluster-disallow-all-spot-inference")
                if s["resource_name"] == "databricks_cluster.chat"]
    (training,) = [t for t in _findings(report, "databricks-cluster-disallow-autoscaled-or-spot-training")
                   if t["resource_name"] == "databricks_cluster.chat"]
    assert "training cluster (role: training, from tag workload_type)" in training["message"]


# ---- item 6: cost on real code ------------------------------------------------------------------------------------

def _cost(capsys: Any, directory: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    code = main(["cost", "--terraform", str(directory), "--json", *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, (json.loads(out) if out.strip() else {}), err


def _stack_cost(report: dict[str, Any]) -> dict[str, Any]:
    cost: dict[str, Any] = report["cost"]
    return cost


GPU_FROM_DATA_SOURCE = '''
data "databricks_node_type" "gpu" {
  min_gpus   = 1
  local_disk = true
}
resource "databricks_cluster" "research" {
  cluster_name            = "research"
  spark_version           = "15.4.x-gpu-ml-scala2.12"
  node_type_id            = data.databricks_node_type.gpu.id
  autotermination_minutes = 20
  custom_tags             = { workload_type = "training", workload = "research", cost_center = "cc1" }
  num_workers             = 2
  aws_attributes {
    availability    = "SPOT_WITH_FALLBACK"
    first_on_demand = 1
  }
}
'''


def test_a_node_type_from_a_data_source_is_priced_as_databricks_would_pick_it(tmp_path: Path, capsys: Any) -> None:
    """databricks-sdk-go ListNodeTypesResponse.Smallest (what the provider's data source calls): the smallest node
    type, by cores then memory, with at least min_gpus GPUs: on AWS, g4dn.xlarge of our catalog."""
    code, report, _ = _cost(capsys, _module(tmp_path, GPU_FROM_DATA_SOURCE))
    cost = _stack_cost(report)
    (entry,) = cost["resources"].values()
    assert code == 0 and entry["node_type_id"] == "g4dn.xlarge" and entry["monthly"]["expected"] > 0
    assert any("data.databricks_node_type.gpu" in n and "g4dn.xlarge, the smallest aws node type" in n
               for n in cost["notes"])


def test_a_pick_the_catalog_cannot_make_is_named_unpriced_never_an_error(tmp_path: Path, capsys: Any) -> None:
    cpu = GPU_FROM_DATA_SOURCE.replace("min_gpus   = 1", "graviton   = true").replace("-gpu-ml", "")
    code, report, _ = _cost(capsys, _module(tmp_path, cpu))
    cost = _stack_cost(report)
    assert code == 0 and cost["total"]["complete"] is False
    assert cost["total"]["unpriced"] == ["databricks_cluster.research"]
    assert any("not resolved, the catalog does not hold graviton" in n for n in cost["notes"])


def test_a_cpu_pick_is_made_over_the_cpu_catalog(tmp_path: Path, capsys: Any) -> None:
    """Issue 51, item 6: min_cores 8 with a local disk on AWS: c5d.2xlarge (8 cores, 16 GB, instance store) of the
    CPU catalog; the tag's role prices its month."""
    cpu = GPU_FROM_DATA_SOURCE.replace("min_gpus   = 1", "min_cores  = 8").replace("-gpu-ml", "")
    code, report, _ = _cost(capsys, _module(tmp_path, cpu))
    cost = _stack_cost(report)
    (entry,) = cost["resources"].values()
    assert code == 0 and cost["total"]["complete"] is True
    assert entry["node_type_id"] == "c5d.2xlarge" and entry["monthly"]["expected"] > 0


def test_a_serving_only_module_is_priced(tmp_path: Path, capsys: Any) -> None:
    directory = _module(tmp_path, '''
resource "databricks_model_serving" "chat" {
  name = "chat"
  config {
    served_entities {
      entity_name           = "main.models.chat"
      entity_version        = "3"
      workload_type         = "GPU_SMALL"
      workload_size         = "Small"
      scale_to_zero_enabled = false
    }
  }
}
''')
    code, report, _ = _cost(capsys, directory)
    cost = _stack_cost(report)
    assert code == 0 and cost["total"]["monthly"]["expected"] > 0
    assert any("No resource names its cloud" in n for n in cost["notes"])


def _training(label: str, node_type: str, workload: str, provider: str = "", block: str = "") -> str:
    """A one-worker training cluster named ``label`` (its name with dashes) on ``node_type``, tagged ``workload``;
    ``provider`` and ``block`` are its optional extra lines."""
    return f'''
resource "databricks_cluster" "{label}" {{
  {provider}
  cluster_name            = "{label.replace("_", "-")}"
  spark_version           = "15.4.x-gpu-ml-scala2.12"
  node_type_id            = "{node_type}"
  num_workers             = 1
  autotermination_minutes = 30
  custom_tags             = {{ workload_type = "training", workload = "{workload}", cost_center = "cc1" }}
  {block}
}}
'''


def test_a_module_on_two_clouds_prices_one_and_names_the_other(tmp_path: Path, capsys: Any) -> None:
    directory = _module(tmp_path, _training("aws_one", "g5.xlarge", "a") + _training("aws_two", "g5.2xlarge", "b")
                        + _training("azure_one", "Standard_NC4as_T4_v3", "c", provider="provider = databricks.azure",
                                    block='azure_attributes {\n    availability = "ON_DEMAND_AZURE"\n  }'))
    code, report, _ = _cost(capsys, directory)
    cost = _stack_cost(report)
    assert code == 0 and cost["cloud"] == "aws" and cost["total"]["complete"] is False
    assert cost["total"]["unpriced"] == ["databricks_cluster.azure_one"]
    assert [u["reason"] for u in cost["unpriced"]][0].startswith("on azure: this cost prices aws")
    assert len(cost["resources"]) == 2 and all(e["monthly"]["expected"] > 0 for e in cost["resources"].values())


def test_an_unchanged_resource_unpriced_on_both_sides_leaves_the_delta_known(tmp_path: Path, capsys: Any) -> None:
    cpu = '''
resource "databricks_cluster" "etl" {
  cluster_name            = "etl"
  spark_version           = "15.4.x-scala2.12"
  node_type_id            = "m5.2xlarge"
  num_workers             = 2
  autotermination_minutes = 30
}
'''
    gpu = GPU_FROM_DATA_SOURCE.replace("data.databricks_node_type.gpu.id", '"g5.xlarge"')
    base = _module(tmp_path, cpu + gpu, "base")
    head = _module(tmp_path, cpu + gpu.replace("num_workers             = 2", "num_workers             = 4"), "head")
    code = main(["cost", "--terraform", str(head), "--against", str(base), "--json"])
    out, _ = capsys.readouterr()
    total = json.loads(out)["diff"]["total"]
    assert code == 0 and total["complete"] is True and total["delta"]["monthly_expected"] > 0
    assert total["unchanged_unpriced"] == ["databricks_cluster.etl"]


def test_cost_fail_on_unknown_fails_an_incomplete_total_and_passes_a_known_delta(tmp_path: Path, capsys: Any) -> None:
    cpu_pick = GPU_FROM_DATA_SOURCE.replace("min_gpus   = 1", "graviton   = true").replace("-gpu-ml", "")
    directory = _module(tmp_path, cpu_pick)
    assert _cost(capsys, directory)[0] == 0
    code, _, err = _cost(capsys, directory, "--fail-on-unknown")
    assert code == 1 and "not priced: databricks_cluster.research" in err
    # the same resource unpriced and unchanged on both sides of a diff: the delta is known, the gate passes
    assert main(["cost", "--terraform", str(directory), "--against", str(directory), "--json",
                 "--fail-on-unknown"]) == 0
    capsys.readouterr()
