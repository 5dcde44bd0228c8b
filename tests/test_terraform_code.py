"""Issue 45, item 1: Terraform code read as written (``check --terraform``, ``cost --terraform``): no plan, no
provider, no credentials. A module with variables, tfvars, locals, a for_each module call and data sources
(examples/terraform/code, written for the docs and these tests) is judged as the plan Terraform would make of it,
each instance named by its address and located at its file and line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli_doc

from dbx_ai_infra.sources.hcl import read_terraform
from dbx_ai_infra.sources.tfscope import Scope, expression
from dbx_ai_infra.sources.tfvalues import Unknown

UNKNOWN = Unknown()

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "terraform"
MODULE = EXAMPLES / "code"
SPOT = "databricks-cluster-disallow-all-spot-inference"
ROLE_RULES = {SPOT, "databricks-cluster-disallow-autoscaled-or-spot-training", "databricks-cluster-require-gpu-memory-fit",
              "databricks-training-require-checkpoint-location"}


def test_a_module_with_a_for_each_call_is_judged_per_instance_at_its_file_and_line(capsys) -> None:
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(MODULE), "--json")
    assert code == 1, err
    spot = sorted({v["resource_name"] for v in doc["violations"] if v["policy"] == SPOT})
    # terraform.tfvars names two models and turns spot on: one all-spot GPU inference cluster per instance
    assert spot == ['module.serving["chat"].databricks_cluster.this', 'module.serving["embed"].databricks_cluster.this']
    # the CPU ETL cluster meets no role rule; every cluster is named by a Permissions (resolved through .id)
    etl = {v["policy"] for v in doc["violations"] if v["resource_name"] == "databricks_cluster.etl"}
    assert not etl & ROLE_RULES and "databricks-resource-require-access-control" not in etl
    assert doc["checked"]["clusters"] == 3 and doc["checked"]["gpu_clusters"] == 2

    code, sarif, _ = run_cli_doc(capsys, "check", "--terraform", str(MODULE), "--format", "sarif")
    places = {(r["locations"][0]["logicalLocations"][0]["name"] if r["locations"][0].get("logicalLocations")
               else r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
               r["locations"][0]["physicalLocation"]["region"]["startLine"])
              for r in sarif["runs"][0]["results"] if r["ruleId"] == SPOT}
    assert {(Path(uri).resolve(), line) for _, uri, line in places} == {(MODULE / "modules" / "serving" / "main.tf",
                                                                          17)}


def test_a_var_file_wins_over_terraform_tfvars(capsys, tmp_path: Path) -> None:
    on_demand = tmp_path / "on-demand.tfvars"
    on_demand.write_text('spot_inference = false\n')
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(MODULE), "--var-file", str(on_demand), "--json")
    assert code == 0, doc
    assert not [v for v in doc["violations"] if v["policy"] == SPOT]


def test_what_is_not_evaluated_is_unknown_with_a_note_and_only_a_file_that_is_not_hcl_is_invalid(capsys,
                                                                                                 tmp_path) -> None:
    code_dir = tmp_path / "repo"
    code_dir.mkdir()
    (code_dir / "main.tf").write_text('''
module "remote" {
  source = "git::https://example.com/modules.git//serving"
}
resource "databricks_cluster" "many" {
  count         = length(data.databricks_clusters.all.ids)
  cluster_name  = "x"
  spark_version = "17.3.x-scala2.13"
  node_type_id  = "i3.xlarge"
  num_workers   = 1
}
resource "databricks_cluster" "odd" {
  cluster_name  = urlencode(var.undeclared)
  spark_version = var.runtime
  node_type_id  = "i3.xlarge"
  num_workers   = 1
  custom_tags   = { workload = "etl", cost_center = "data" }
}
variable "runtime" {}
resource "aws_s3_bucket" "logs" {
  bucket = "logs"
}
''')
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(code_dir), "--json")
    assert code in (0, 1)
    assert [v["enforcement"] for v in doc["violations"] if v["resource_name"] == "databricks_cluster.odd"
            and v["policy"] == "databricks-cluster-require-runtime-key"] == ["not-judged"]  # unknown: not judged
    assert "module.remote" in err and "not a local module" in err
    assert "databricks_cluster.many: count is not known here" in err
    assert "function urlencode() is not evaluated" in err and "variables with no value here (unknown): runtime" in err
    assert doc["checked"]["clusters"] == 1

    (code_dir / "broken.tf").write_text('resource "databricks_cluster" "x" {\n  cluster_name = \n}\n')
    code, out, err = run_cli_doc(capsys, "check", "--terraform", str(code_dir))
    assert code == 2 and "broken.tf" in err and "is not HCL" in err


def test_cost_prices_each_instance_and_diffs_two_versions_of_the_code(capsys, tmp_path: Path) -> None:
    code, doc, err = run_cli_doc(capsys, "cost", "--terraform", str(MODULE), "--format", "json")
    assert code == 0, err
    names = sorted(e["name"] for e in doc["cost"]["resources"].values())
    assert names == ["databricks_cluster.etl", 'module.serving["chat"].databricks_cluster.this',
                     'module.serving["embed"].databricks_cluster.this']
    chat = next(e for e in doc["cost"]["resources"].values() if e["name"].startswith('module.serving["chat"]'))
    assert chat["unpriced"] is None and chat["nodes"] == {"min": 3, "max": 9}  # the driver and 2-8 workers

    head = tmp_path / "head"
    shutil.copytree(MODULE, head)
    tfvars = head / "terraform.tfvars"
    tfvars.write_text(tfvars.read_text().replace("max = 8", "max = 12"))
    code, doc, err = run_cli_doc(capsys, "cost", "--terraform", str(head), "--against", str(MODULE), "--format", "json")
    assert code == 0, err
    changed = [r for r in doc["diff"]["rows"] if r["status"] != "unchanged"]
    assert [r["name"] for r in changed] == ['module.serving["chat"].databricks_cluster.this']
    assert changed[0]["delta"]["monthly_max"] > 0


@pytest.mark.parametrize(("text", "expected"), [
    ('merge({a = 1}, {b = "x"})', {"a": 1, "b": "x"}),
    ('var.on ? "SPOT" : "ON_DEMAND"', "SPOT"),
    ('"${var.env}-etl"', "prod-etl"),
    ('lookup(var.sizes, "chat", 2)', 8),
    ('lookup(var.sizes, "none", 2)', 2),
    ("each.value.max", 4),
    ("count.index", UNKNOWN),
    ('concat(["a"], ["b"])', ["a", "b"]),
    ('var.env == "prod"', True),
    ("databricks_instance_pool.gpu.id", "databricks_instance_pool.gpu"),
    ("databricks_instance_pool.gpu[0].id", "databricks_instance_pool.gpu[0]"),
    ("databricks_cluster.department[each.key].id", 'databricks_cluster.department["embed"]'),
    ("databricks_cluster.department[var.missing].id", UNKNOWN),
    ("data.databricks_spark_version.lts.id", UNKNOWN),
    ("module.x.cluster_id", UNKNOWN),
    ("timestamp()", UNKNOWN),
    ("var.missing", UNKNOWN),
])
def test_expressions_are_evaluated_where_known(text: str, expected: Any) -> None:
    scope = Scope("", {"env": "prod", "on": True, "sizes": {"chat": 8}}, {}, [], each=("embed", {"max": 4}))
    got = expression("${" + text + "}", scope)
    assert isinstance(got, Unknown) if expected is UNKNOWN else got == expected


def test_a_tf_file_alone_is_read_with_its_directory_s_tfvars() -> None:
    doc, lines, notes = read_terraform(str(MODULE / "main.tf"))
    addresses = [c["address"] for c in doc["resource_changes"]]
    assert 'module.serving["embed"].databricks_cluster.this' in addresses and lines["databricks_cluster.etl"][1] == 45


def test_a_secret_reference_with_parts_known_only_at_apply_is_not_a_plain_text_secret(capsys, tmp_path) -> None:
    """Seen in terraform-databricks-examples (adb-overwatch): a secret-scope reference built from a variable and a
    data source is unknown here, never a literal credential."""
    (tmp_path / "main.tf").write_text('''
variable "scope" {}
resource "databricks_cluster" "etl" {
  cluster_name  = "etl"
  spark_version = "17.3.x-scala2.13"
  node_type_id  = "i3.xlarge"
  num_workers   = 1
  custom_tags   = { workload = "etl", cost_center = "data" }
  spark_conf = {
    "fs.azure.account.oauth2.client.secret" : "{{secrets/${var.scope}/${data.azurerm_key_vault_secret.k.name}}}"
    "fs.azure.account.oauth2.client.id" : "plain-literal-id"
  }
}
''')
    code, doc, _ = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    secrets = [v for v in doc["violations"] if v["policy"] == "databricks-cluster-disallow-plaintext-secrets"]
    assert secrets == []
    (tmp_path / "main.tf").write_text((tmp_path / "main.tf").read_text().replace(
        '"{{secrets/${var.scope}/${data.azurerm_key_vault_secret.k.name}}}"', '"s3cr3t-value"'))
    code, doc, _ = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert code == 1 and [v["policy"] for v in doc["violations"]
                          if v["policy"] == "databricks-cluster-disallow-plaintext-secrets"]


def test_the_workflow_for_terraform_code_is_clean_and_runs_commands_that_exist() -> None:
    """examples/terraform/github-workflow-code.yml: no zizmor finding, no credentials, every stackplan command parses."""
    import shlex  # noqa: PLC0415

    from dbx_ai_infra.cli.cli import parser  # noqa: PLC0415
    from tests.test_cli_cost import _zizmor  # noqa: PLC0415

    workflow = EXAMPLES / "github-workflow-code.yml"
    assert _zizmor(workflow) == []
    text = workflow.read_text().replace("\\\n", " ")
    assert "secrets." not in text and "DATABRICKS_TOKEN" not in text
    commands = [line.split("-m stackplan", 1)[1] for line in text.splitlines() if "-m stackplan" in line]
    assert len(commands) == 3 and all("--terraform ." in c for c in commands)
    for command in commands:
        parser().parse_args(shlex.split(command.split("||")[0]))  # exits on an unknown flag


RUNTIME_MATCH = "databricks-cluster-require-matching-runtime"
SUPPORTED = "databricks-cluster-require-supported-runtime"
GPU_CLUSTER = '''
resource "databricks_cluster" "train" {{
  cluster_name            = "train"
  spark_version           = {runtime}
  node_type_id            = "g5.12xlarge"
  num_workers             = 1
  autotermination_minutes = 30
  custom_tags             = {{ workload = "training", workload_type = "training", cost_center = "ml" }}
  spark_env_vars          = {{ CHECKPOINT_DIR = "/Volumes/ml/train/ckpt" }}
  aws_attributes {{
    availability    = "SPOT_WITH_FALLBACK"
    first_on_demand = 1
  }}
}}
'''


@pytest.mark.parametrize(("arguments", "expected"), [
    ("gpu = true\n  ml = true\n  long_term_support = true", set()),
    ("gpu = true\n  ml = true", {(SUPPORTED, "advisory")}),
    ("long_term_support = true", {(RUNTIME_MATCH, "mandatory")}),
    # computed: not judged, and said so (issue 51), never passed silently
    ("gpu = var.gpu\n  ml = true\n  long_term_support = var.lts", {(SUPPORTED, "not-judged"),
                                                                  (RUNTIME_MATCH, "not-judged")}),
])
def test_a_runtime_chosen_by_a_data_source_is_judged_by_its_arguments(arguments, expected, capsys, tmp_path) -> None:
    """Issue 45: a runtime chosen through databricks_spark_version is judged by the arguments that choose it: LTS
    through long_term_support, a GPU runtime through gpu. It raised a mandatory "not a GPU ML runtime" on every such
    GPU cluster (its value unknown), and no LTS verdict."""
    (tmp_path / "main.tf").write_text(f'variable "gpu" {{}}\nvariable "lts" {{}}\n'
                                      f'data "databricks_spark_version" "pick" {{\n  {arguments}\n}}\n'
                                      + GPU_CLUSTER.format(runtime="data.databricks_spark_version.pick.id"))
    code, doc, _ = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    found = {(v["policy"], v["enforcement"]) for v in doc["violations"] if v["policy"] in (RUNTIME_MATCH, SUPPORTED)}
    assert found == expected
    assert all("data.databricks_spark_version.pick" in v["message"] for v in doc["violations"]
               if v["policy"] in (RUNTIME_MATCH, SUPPORTED))


def test_a_runtime_known_only_after_apply_is_not_judged(capsys, tmp_path) -> None:
    (tmp_path / "main.tf").write_text(GPU_CLUSTER.format(runtime="module.runtimes.gpu_lts"))
    code, doc, _ = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert not [v for v in doc["violations"] if v["policy"] in (RUNTIME_MATCH, SUPPORTED)
                and v["enforcement"] != "not-judged"]


def test_a_plan_s_configuration_names_the_data_source_that_chooses_the_runtime(capsys, tmp_path) -> None:
    """The same on a plan: spark_version unknown in ``after``, its reference to the data source and the data
    source's constant arguments in ``configuration``, as terraform show -json writes them."""
    cluster = {"cluster_name": "train", "spark_version": None, "node_type_id": "g5.12xlarge", "num_workers": 1,
               "autotermination_minutes": 30, "spark_env_vars": {"CHECKPOINT_DIR": "/Volumes/ml/train/ckpt"},
               "custom_tags": {"workload": "training", "workload_type": "training", "cost_center": "ml"},
               "aws_attributes": [{"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 1}]}
    plan = {"format_version": "1.2", "resource_changes": [
        {"address": "data.databricks_spark_version.pick", "mode": "data", "type": "databricks_spark_version",
         "name": "pick", "change": {"actions": ["read"], "before": None, "after": {}, "after_unknown": {"id": True}}},
        {"address": "databricks_cluster.train", "mode": "managed", "type": "databricks_cluster", "name": "train",
         "change": {"actions": ["create"], "before": None, "after": cluster,
                    "after_unknown": {"spark_version": True, "cluster_id": True}}}],
        "configuration": {"root_module": {"resources": [
            {"address": "data.databricks_spark_version.pick", "mode": "data", "type": "databricks_spark_version",
             "name": "pick", "expressions": {"ml": {"constant_value": True}}},
            {"address": "databricks_cluster.train", "mode": "managed", "type": "databricks_cluster", "name": "train",
             "expressions": {"spark_version": {"references": ["data.databricks_spark_version.pick.id",
                                                              "data.databricks_spark_version.pick"]}}}]}}}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    code, doc, _ = run_cli_doc(capsys, "check", "--terraform-plan", str(path), "--json")
    found = {(v["policy"], v["enforcement"]) for v in doc["violations"] if v["policy"] in (RUNTIME_MATCH, SUPPORTED)}
    assert code == 1 and found == {(RUNTIME_MATCH, "mandatory"), (SUPPORTED, "advisory")}


def test_a_node_type_chosen_with_min_gpus_is_gpu_compute(capsys, tmp_path) -> None:
    """A node type chosen by databricks_node_type with min_gpus >= 1 makes the cluster GPU compute, so the role rules
    judge it: an autoscaled all-spot inference cluster on it fails. Without min_gpus the node type is not known to
    be a GPU one, and the same cluster meets only the generic rules."""
    cluster = '''
data "databricks_node_type" "pick" {{
  {arguments}
}}
resource "databricks_cluster" "serve" {{
  cluster_name            = "serve"
  spark_version           = "17.3.x-gpu-ml-scala2.13"
  node_type_id            = data.databricks_node_type.pick.id
  autotermination_minutes = 0
  custom_tags             = {{ workload = "serving", workload_type = "inference", cost_center = "ml" }}
  autoscale {{
    min_workers = 2
    max_workers = 6
  }}
  aws_attributes {{
    availability = "SPOT"
  }}
}}
'''
    (tmp_path / "main.tf").write_text(cluster.format(arguments="min_gpus = 1\n  local_disk = true"))
    code, doc, _ = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert code == 1 and SPOT in {v["policy"] for v in doc["violations"]}
    assert doc["checked"]["gpu_clusters"] == 1
    (tmp_path / "main.tf").write_text(cluster.format(arguments="min_cores = 8"))
    code, doc, _ = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert doc["checked"]["gpu_clusters"] == 1  # its GPU ML runtime still says so
    (tmp_path / "main.tf").write_text(cluster.format(arguments="min_cores = 8").replace("17.3.x-gpu-ml-scala2.13",
                                                                                      "17.3.x-scala2.13"))
    code, doc, _ = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert doc["checked"]["gpu_clusters"] == 0


def test_bounds_other_providers_and_exceptions_by_address(capsys, tmp_path) -> None:
    """A count beyond what is expanded is invalid input naming the address (issue 51, item 4: it was skipped with a
    note and exit 0, never expanded one by one); another provider's resources are named in a note; --exceptions
    accepts a finding of Terraform code by its address."""
    fleet = '''
resource "databricks_cluster" "fleet" {
  count         = 1000000000000
  cluster_name  = "fleet-${count.index}"
  spark_version = "3.3.1"
  node_type_id  = "i3.xlarge"
  num_workers   = 1
}
'''
    (tmp_path / "main.tf").write_text('''
resource "aws_s3_bucket" "logs" {
  bucket = "logs"
}
resource "databricks_token" "ci" {
  comment = "ci"
}
''')
    (tmp_path / "fleet.tf").write_text(fleet)
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert code == 2 and "fleet.tf:2: databricks_cluster.fleet: expands to more than 10,000 instances" in err, err
    (tmp_path / "fleet.tf").unlink()
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--json")
    assert "resources of other providers are not read: aws_s3_bucket" in err
    assert code == 1 and doc["checked"]["clusters"] == 0
    exceptions = tmp_path / "exceptions.yaml"
    exceptions.write_text("- rule: databricks-token-require-lifetime\n  resource: databricks_token.ci\n"
                          "  reason: rotated by the vault job\n")
    code, doc, err = run_cli_doc(capsys, "check", "--terraform", str(tmp_path), "--exceptions", str(exceptions), "--json")
    assert code == 0, doc


def test_a_base_with_no_terraform_code_yet_is_zero_and_everything_is_new(capsys, tmp_path) -> None:
    """A repository's first pull request: the base branch's checkout has no .tf yet."""
    empty = tmp_path / "base"
    empty.mkdir()
    code, doc, err = run_cli_doc(capsys, "cost", "--terraform", str(MODULE), "--against", str(empty), "--format", "json")
    assert code == 0, err
    assert {r["status"] for r in doc["diff"]["rows"] if r["status"] != "total"} == {"added"}


def test_tf_var_environment_variables_come_before_the_tfvars_files(capsys, tmp_path, monkeypatch) -> None:
    """Terraform's order: TF_VAR_<name>, then terraform.tfvars (which sets spot_inference = true here)."""
    monkeypatch.setenv("TF_VAR_models", '{ solo = { max = 3 } }')
    doc, _, _ = read_terraform(str(MODULE))
    addresses = {c["address"] for c in doc["resource_changes"] if c["type"] == "databricks_cluster"}
    assert 'module.serving["chat"].databricks_cluster.this' in addresses  # terraform.tfvars wins over the env
    plain = tmp_path / "m"
    plain.mkdir()
    (plain / "main.tf").write_text('variable "n" {}\nvariable "env" {}\nresource "databricks_cluster" "c" {\n'
                                   '  count = var.n\n  cluster_name = "c-${var.env}"\n}\n')
    monkeypatch.setenv("TF_VAR_n", "2")
    monkeypatch.setenv("TF_VAR_env", "prod")
    doc, _, _ = read_terraform(str(plain))
    assert [(c["address"], c["change"]["after"]["cluster_name"]) for c in doc["resource_changes"]] == \
        [("databricks_cluster.c[0]", "c-prod"), ("databricks_cluster.c[1]", "c-prod")]
