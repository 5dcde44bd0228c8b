"""The first day in a real workspace, round 2 (issue 41): what broke the first `pulumi up` / `terraform apply` of a
shipped stack, or left it unsafe, each held by a test that failed before."""

from __future__ import annotations

import copy
import csv
import json
import os
import re
import shutil
import subprocess
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from conftest import BASE_CONFIG, SHIPPED, resources, run_cli, stack_with

from dbx_ai_infra.cli.cli import main

ROOT = Path(__file__).resolve().parent.parent
CLUSTER, JOB, SERVING = "databricks:index/cluster:Cluster", "databricks:index/job:Job", \
    "databricks:index/modelServing:ModelServing"
REGISTERED = "databricks-serving-require-registered-model"


def endpoint(**over: Any) -> dict[str, Any]:
    return {"entity": "ai.models.chat", "entity_version": "1", "model": {"params_billions": 7, "precision": "fp16"},
            "rate_limit_per_user_per_minute": 30, **over}


# --- 1. an endpoint serves a model version that exists ---------------------------------------------------------------

def test_an_endpoint_serving_from_the_stacks_own_catalog_needs_the_second_run_declared(write_stack, capsys):
    first = stack_with(write_stack, serving={"endpoints": {"chat": endpoint()}}, unity_catalog={"catalog": "ai"})
    code, out, _ = run_cli(capsys, "check", "--stack", first, "--json")
    doc = json.loads(out)
    (finding,) = [v for v in doc["violations"] if v["policy"] == REGISTERED]
    assert code == 1 and finding["enforcement"] == "mandatory" and finding["resource_name"] == "test-serving-chat"
    assert "ai.models.chat version 1" in finding["message"] and "Fix: deploy without the endpoint first" in \
        finding["message"] and "model_registered: true" in finding["message"]
    # a refusal is a finding, not a missing resource: the endpoint is planned and priced
    code, out, _ = run_cli(capsys, "cost", "--stack", first, "--format", "json")
    assert any(e["name"] == "test-serving-chat" and e["monthly"]["expected"] > 0
               for e in json.loads(out)["cost"]["resources"].values())
    second = stack_with(write_stack, name="second", serving={"endpoints": {"chat": endpoint(model_registered=True)}},
                        unity_catalog={"catalog": "ai"})
    code, out, err = run_cli(capsys, "check", "--stack", second, "--json")
    assert code == 0 and not [v for v in json.loads(out)["violations"] if v["policy"] == REGISTERED]
    assert "note: serving endpoint chat: ai.models.chat version 1 must be registered in catalog ai before" in err


def test_a_catalog_the_stack_does_not_create_needs_no_declaration(write_stack, capsys):
    existing = stack_with(write_stack, serving={"endpoints": {"chat": endpoint()}},
                          unity_catalog={"existing_catalog": True})
    other = stack_with(write_stack, name="other", serving={"endpoints": {"chat": endpoint(entity="main.models.chat")}})
    for stack in (existing, other):
        code, out, err = run_cli(capsys, "check", "--stack", stack, "--json")
        assert code == 0 and not [v for v in json.loads(out)["violations"] if v["policy"] == REGISTERED]
        assert "must be registered" not in err


def test_the_shipped_stacks_pass_and_new_workspace_is_the_first_run(plan_of, capsys):
    for stack in SHIPPED:
        code, out, _ = run_cli(capsys, "check", "--stack", stack, "--json")
        assert code == 0, stack
        assert not [v for v in json.loads(out)["violations"] if v["enforcement"] == "mandatory"], stack
    assert not resources(plan_of("new-workspace"), "modelServing:ModelServing")  # the endpoint comes second
    text = (ROOT / "stacks" / "Pulumi.new-workspace.yaml").read_text()
    assert "#       model_registered: true" in text  # the second run, commented


# --- 2. a policy that pins a pool forbids what the pool decides ------------------------------------------------------

POOL_DECIDED = re.compile(r"^(aws|azure|gcp)_attributes\.(availability|zone_id|first_on_demand|spot_bid_price_percent|"
                          r"spot_bid_max_price)$")


def test_a_pool_pinning_policy_forbids_availability_zone_and_spot_and_no_pooled_cluster_sends_them(plan_of):
    from dbx_ai_infra.dbxtypes.shape import cluster_shape
    from dbx_ai_infra.guardrails import evaluate_shape

    pinned = 0
    for stack in SHIPPED:
        plan = plan_of(stack)
        for policy in resources(plan, "clusterPolicy:ClusterPolicy"):
            definition = json.loads(policy["inputs"]["definition"])
            if "instance_pool_id" not in definition:
                continue
            pinned += 1
            block = {"aws": "aws_attributes", "azure": "azure_attributes", "gcp": "gcp_attributes"}[plan["cloud"]]
            decided = {path: element for path, element in definition.items()
                       if POOL_DECIDED.match(path) and path.startswith(f"{block}.")}
            assert {p.split(".")[1] for p in decided} >= {"availability", "first_on_demand"}, (stack, policy["name"])
            assert all(e == {"type": "forbidden", "hidden": True} for e in decided.values()), (stack, decided)
            # a pooled cluster that names an availability next to the pool is refused by the policy, as the API does
            admitted = [r["inputs"] for r in resources(plan, "cluster:Cluster")
                        if r["inputs"].get("policyId") == policy["id"]]
            admitted += [jc["newCluster"] for r in resources(plan, "job:Job") for jc in r["inputs"]["jobClusters"]
                         if jc["newCluster"].get("policyId") == policy["id"]]
            for cluster in admitted:
                assert evaluate_shape(definition, cluster_shape(cluster)).allowed, (stack, policy["name"])
                camel = {"aws_attributes": "awsAttributes", "azure_attributes": "azureAttributes",
                         "gcp_attributes": "gcpAttributes"}[block]
                assert camel not in cluster
                spotted = dict(cluster, **{camel: {"availability": "SPOT_WITH_FALLBACK"}})
                assert not evaluate_shape(definition, cluster_shape(spotted)).allowed
    assert pinned >= 4  # prod's and estate's inference, new-workspace's training, azure-prod's inference


# --- 3. pulumi up does not wait for GPU clusters; no idle all-purpose cluster beside a job ---------------------------

def test_every_cluster_of_every_shipped_stack_is_created_without_waiting_for_it(plan_of):
    for stack in SHIPPED:
        clusters = resources(plan_of(stack), "cluster:Cluster")
        assert clusters and all(c["inputs"]["noWait"] is True for c in clusters), stack
        # the Terraform export says the same: no_wait on each databricks_cluster


def test_access_to_a_cluster_a_workload_does_not_make_is_exit_2_naming_it_and_the_principals(write_stack, capsys):
    config = copy.deepcopy(BASE_CONFIG)
    del config["dbx-ai-infra:training"]["all_purpose_cluster"]  # a job: no all-purpose cluster
    config["dbx-ai-infra:permissions"] = {"training": {"cluster": [
        {"group_name": "ml-platform", "permission_level": "CAN_MANAGE"},
        {"user_name": "lead@example.com", "permission_level": "CAN_RESTART"}]}}
    code, _, err = run_cli(capsys, "check", "--stack", str(write_stack(config)))
    assert code == 2 and "permissions.training.cluster" in err
    assert "group_name=ml-platform" in err and "user_name=lead@example.com" in err
    assert "all_purpose_cluster: true" in err and "Traceback" not in err


# --- 4. a scale-to-zero endpoint's lower bound ------------------------------------------------------------------------

def test_a_scale_to_zero_endpoint_sends_a_lower_bound_of_0_and_is_priced_as_before(plan_of, capsys):
    (chat,) = resources(plan_of("dev"), "modelServing:ModelServing")
    (entity,) = chat["inputs"]["config"]["servedEntities"]
    assert entity["scaleToZeroEnabled"] is True and entity["minProvisionedConcurrency"] == 0
    (warm,) = resources(plan_of("prod"), "modelServing:ModelServing")
    assert warm["inputs"]["config"]["servedEntities"][0]["minProvisionedConcurrency"] == 4  # always warm: its min
    code, out, _ = run_cli(capsys, "cost", "--stack", "dev", "--format", "json")
    (entry,) = [e for e in json.loads(out)["cost"]["resources"].values() if e["name"] == "dev-serving-chat-dev"]
    assert entry["hours_per_month"] == 60 and entry["monthly"]["expected"] == pytest.approx(20 * 0.07 * 60 + 60 * 0.07)


# --- 5. interactive clusters are dedicated to people ----------------------------------------------------------------

SP = "0b7d4c1e-2f3a-4e5b-8c6d-9e0f1a2b3c4d"


def test_a_dev_cluster_dedicated_to_a_service_principal_is_refused_and_one_for_a_person_is_admitted(write_stack,
                                                                                                    capsys):
    # (no inference section: one dedicated to the service principal is refused too, issue 52 item 4)
    code, _, err = run_cli(capsys, "check", "--stack", stack_with(write_stack, single_user_name=SP, inference=None))
    assert code == 2 and "dev is an interactive cluster dedicated to the service principal" in err
    assert "dev.single_user_name" in err and "Traceback" not in err
    person = stack_with(write_stack, name="person", single_user_name=SP, inference=None,
                        dev={"model": {"params_billions": 7, "precision": "fp16"},
                             "single_user_name": "alice@example.com"})
    code, out, _ = run_cli(capsys, "preview", "--stack", person, "--json")
    plan = json.loads(out)
    assert code == 0 and not [v for v in plan["violations"] if v["enforcement"] == "mandatory"]
    by_name = {r["name"]: r["inputs"] for r in plan["resources"]}
    assert by_name["person-dev-cluster"]["singleUserName"] == "alice@example.com"
    assert by_name["person-dev-cluster"]["dataSecurityMode"] == "DATA_SECURITY_MODE_DEDICATED"  # the policy admits it
    assert by_name["person-training-job"]["runAs"] == {"servicePrincipalName": SP}  # jobs keep the principal
    assert by_name["person-dev-cluster-permissions"]["accessControls"] == [
        {"userName": "alice@example.com", "permissionLevel": "CAN_RESTART"}]
    # the person may read the Volumes the cluster reads and write the caches it writes
    grants = [r["inputs"] for r in plan["resources"] if r["type"] == "databricks:index/grant:Grant"]
    assert {"principal": "alice@example.com", "privileges": ["READ_VOLUME", "WRITE_VOLUME"],
            "volume": "ai_person.models.hf_cache"} in grants


def test_new_workspace_dedicates_its_dev_cluster_to_a_person(plan_of):
    dev = next(r["inputs"] for r in resources(plan_of("new-workspace"), "cluster:Cluster")
               if r["inputs"]["customTags"]["workload_type"] == "interactive")
    assert not re.match(r"^[0-9a-f]{8}-", dev["singleUserName"])


# --- 6. code that runs as the service principal is not where everyone can edit it ---------------------------------

def test_job_code_under_the_shared_folder_is_refused(write_stack, capsys):
    for path in ("/Workspace/Shared/train.py", "/Shared/x/train.py"):
        training = {**BASE_CONFIG["dbx-ai-infra:training"], "job": {"python_file": path}}
        code, _, err = run_cli(capsys, "check", "--stack", stack_with(write_stack, training=training))
        assert code == 2 and "python_file" in err and "Shared" in err and "Traceback" not in err, path


def test_the_job_code_and_the_init_script_live_on_a_volume_only_the_deployer_writes(plan_of):
    import base64

    for stack in SHIPPED:
        plan = plan_of(stack)
        files = {r["inputs"]["path"]: r for r in resources(plan, "file:File")}
        code_dir = plan["outputs"]["volume_paths"]["platform.code"]
        for job in resources(plan, "job:Job"):
            for task in job["inputs"]["tasks"]:
                path = task["sparkPythonTask"]["pythonFile"]
                assert path == f"{code_dir}/train.py" and path in files, (stack, path)
                text = base64.b64decode(files[path]["inputs"]["contentBase64"]).decode()
                assert text == (ROOT / "dbx_ai_infra" / "workloads" / "train.py").read_text()
        for c in [r["inputs"] for r in resources(plan, "cluster:Cluster")] + \
                [jc["newCluster"] for r in resources(plan, "job:Job") for jc in r["inputs"]["jobClusters"]]:
            assert all(s["volumes"]["destination"].startswith(f"{code_dir}/") for s in c.get("initScripts", []))
        # nobody may write the code Volume (its catalog, its schema, itself)
        for grant in resources(plan, "grants:Grants"):
            securable = grant["inputs"].get("volume") or grant["inputs"].get("schema") or grant["inputs"]["catalog"]
            if securable in ("ai.platform.code", "ai.platform", "ai", "ai_staging.platform.code",
                             "ai_staging.platform", "ai_staging"):
                for entry in grant["inputs"]["grants"]:
                    assert not {"WRITE_VOLUME", "ALL_PRIVILEGES", "MANAGE"} & set(entry["privileges"]), \
                        (stack, securable, entry)
        # and the file waits for the Volume it is written into (the Terraform export carries it: test below)
        for f in resources(plan, "file:File"):
            assert any("volume:Volume" in d or "UnityCatalogStorage" in d for d in f["dependencies"]), f["name"]


def test_a_grant_that_would_let_someone_write_the_code_volume_is_refused(write_stack, capsys):
    for securable in ("catalog", "platform", "platform.code"):
        uc = {"grants": [{"principal": "ml-engineers", "privileges": ["WRITE_VOLUME"], "securable": securable}]} \
            if securable != "catalog" else {"grants": [{"principal": "ml-engineers", "privileges": ["ALL_PRIVILEGES"]}]}
        code, _, err = run_cli(capsys, "check", "--stack", stack_with(write_stack, unity_catalog=uc))
        assert code == 2 and "code Volume platform.code" in err and "ml-engineers" in err, securable


# --- 7. one access control per principal ----------------------------------------------------------------------------

def test_no_permissions_of_a_shipped_stack_names_a_principal_twice(plan_of):
    for stack in SHIPPED:
        for p in resources(plan_of(stack), "permissions:Permissions"):
            who = [tuple(sorted((k, v) for k, v in a.items() if k != "permissionLevel"))
                   for a in p["inputs"]["accessControls"]]
            assert len(who) == len(set(who)), (stack, p["name"])


def test_a_principal_named_twice_is_refused_and_one_the_stack_names_keeps_the_stronger_level(write_stack, capsys,
                                                                                              plan_of):
    twice = {"training": {"job": [{"group_name": "g", "permission_level": "CAN_VIEW"},
                                  {"group_name": "g", "permission_level": "CAN_MANAGE"}]}}
    code, _, err = run_cli(capsys, "check", "--stack", stack_with(write_stack, permissions=twice))
    assert code == 2 and "group_name=g is named twice" in err
    both = {"endpoints": {"chat": endpoint(model_registered=True, can_query=["ds"], can_manage=["ds"])}}
    code, _, err = run_cli(capsys, "check", "--stack", stack_with(write_stack, name="both", serving=both))
    assert code == 2 and "'ds' is in both can_query and can_manage" in err
    # the stack gives its single user CAN_RESTART; the section gives it CAN_MANAGE: one entry, the stronger
    stronger = {"dev": {"cluster": [{"user_name": "ml@example.com", "permission_level": "CAN_MANAGE"}]}}
    code, out, _ = run_cli(capsys, "preview", "--stack", stack_with(write_stack, name="strong", permissions=stronger),
                       "--json")
    acl = {r["name"]: r["inputs"]["accessControls"] for r in json.loads(out)["resources"]
           if r["type"] == "databricks:index/permissions:Permissions"}
    assert acl["strong-dev-cluster-permissions"] == [{"userName": "ml@example.com", "permissionLevel": "CAN_MANAGE"}]
    weaker = {"dev": {"cluster": [{"user_name": "ml@example.com", "permission_level": "CAN_ATTACH_TO"}]}}
    code, out, _ = run_cli(capsys, "preview", "--stack", stack_with(write_stack, name="weak", permissions=weaker), "--json")
    acl = {r["name"]: r["inputs"]["accessControls"] for r in json.loads(out)["resources"]
           if r["type"] == "databricks:index/permissions:Permissions"}
    assert acl["weak-dev-cluster-permissions"] == [{"userName": "ml@example.com", "permissionLevel": "CAN_RESTART"}]


# --- 8, 9. the Terraform export: every dependency, every reference of the right type ------------------------------

REFERENCE = re.compile(r"\$\{(databricks_[a-z_]+)\.([A-Za-z0-9_-]+)\.([a-z_]+)\}")
ARGUMENT_TYPE = {"cluster_id": "databricks_cluster", "instance_pool_id": "databricks_instance_pool",
                 "driver_instance_pool_id": "databricks_instance_pool", "policy_id": "databricks_cluster_policy",
                 "cluster_policy_id": "databricks_cluster_policy", "job_id": "databricks_job",
                 "serving_endpoint_id": "databricks_model_serving"}


def _references(value: Any, key: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [ref for k, v in value.items() for ref in _references(v, k)]
    if isinstance(value, list):
        return [ref for v in value for ref in _references(v, key)]
    return [(key, m.group(1)) for m in REFERENCE.finditer(value)] if isinstance(value, str) else []


def test_each_export_waits_for_what_it_reads_and_references_the_right_type(tmp_path, capsys):
    for stack in SHIPPED:
        assert main(["export-terraform", "--stack", stack, "--out", str(tmp_path / stack)]) == 0
        doc = json.loads((tmp_path / stack / "main.tf.json").read_text())
        addresses = {f"{kind}.{name}" for kind, named in doc["resource"].items() for name in named}
        for kind, named in doc["resource"].items():
            for name, body in named.items():
                assert set(body.get("depends_on", [])) <= addresses, (stack, name)
                for argument, target in _references(body):
                    if argument in ARGUMENT_TYPE:
                        assert target == ARGUMENT_TYPE[argument], (stack, kind, name, argument, target)
        # the collector's script (and the job code) wait for the Volume they are written into
        for name, body in doc["resource"]["databricks_file"].items():
            volume = "/".join(body["path"].split("/")[:5])
            (holder,) = [f"databricks_volume.{n}" for n, v in doc["resource"]["databricks_volume"].items()
                         if f"/Volumes/{v['catalog_name']}/{v['schema_name']}/{v['name']}" == volume
                         or volume.endswith(f"/{v['schema_name']}/{v['name']}")]
            assert holder in body["depends_on"], (stack, name)
        for name, body in doc["resource"]["databricks_cluster"].items():
            assert body["no_wait"] is True, (stack, name)
    capsys.readouterr()


def test_a_stand_in_id_two_resources_share_is_referenced_by_the_arguments_type(plan_of):
    from dbx_ai_infra.dbxtypes.plan import Plan
    from dbx_ai_infra.engine.tfexport import terraform_config

    plan = Plan.model_validate(copy.deepcopy(plan_of("dev")))
    policy = next(r for r in plan.resources if r.type.endswith("ClusterPolicy") and r.name.endswith("-inference"))
    cluster = next(r for r in plan.resources if r.type == CLUSTER and r.name == "dev-inference-cluster")
    old = cluster.id
    cluster.id = policy.id  # the names that collided: workload "x-cluster"'s policy and workload "policy-x"'s cluster
    for r in plan.resources:
        if r.type.endswith("permissions:Permissions") and r.inputs.get("clusterId") == old:
            r.inputs["clusterId"] = policy.id
    doc = terraform_config(plan)
    permissions = doc["resource"]["databricks_permissions"]["dev-inference-cluster-permissions"]
    assert permissions["cluster_id"] == "${databricks_cluster.dev-inference-cluster.id}"
    assert doc["resource"]["databricks_cluster"]["dev-inference-cluster"]["policy_id"] == \
        f"${{databricks_cluster_policy.{policy.name}.id}}"


def test_a_workload_name_that_makes_another_kinds_name_is_exit_2(write_stack, capsys, tmp_path):
    """Workload x-cluster's policy and workload policy-x's cluster would both be <stack>-policy-x-cluster (and their
    permissions one URN): refused before anything is written."""
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:workloads"] = {"x-cluster": {"role": "inference", "model": {"params_billions": 1}},
                                        "policy-x": {"role": "inference", "model": {"params_billions": 1}}}
    code, _, err = run_cli(capsys, "export-terraform", "--stack", str(write_stack(config)), "--out", str(tmp_path / "tf"))
    assert code == 2 and "policy-x" in err and "cluster polic" in err and "Traceback" not in err
    assert not (tmp_path / "tf").exists()


# --- 10. an unknown value is never judged as a value ----------------------------------------------------------------

def test_a_value_known_only_after_apply_is_not_judged(capsys, tmp_path):
    good = ROOT / "examples" / "terraform" / "plan-good.json"
    doc = json.loads(good.read_text())
    for change in doc["resource_changes"]:
        if change["type"] in ("databricks_cluster", "databricks_job"):
            change["change"]["after_unknown"]["runtime_engine"] = True
            change["change"]["after"].pop("runtime_engine", None)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(doc))
    code, out, _ = run_cli(capsys, "check", "--terraform-plan", str(plan), "--json")
    before = json.loads(out)["violations"]
    code_good, out_good, _ = run_cli(capsys, "check", "--terraform-plan", str(good), "--json")
    assert code == code_good == 0
    assert not [v for v in before if "runtime_engine" in v["message"]]
    assert {(v["policy"], v["resource_name"]) for v in before} == \
        {(v["policy"], v["resource_name"]) for v in json.loads(out_good)["violations"]}


# --- 11. the runtime gate knows every runtime ---------------------------------------------------------------------

@pytest.mark.parametrize(("key", "expected"), [
    ("11.3.x-gpu-ml-scala2.12", "out of support since 2025-10-19"),
    ("12.2.x-gpu-ml-scala2.12", "out of support since 2026-03-01"),
    ("13.1.x-gpu-ml-scala2.12", "six months of support ended by"),   # unlisted, older than 13.3: past support
    ("13.3.x-gpu-ml-scala2.12", "out of support since 2026-08-22"),
    ("16.2.x-gpu-ml-scala2.12", "six months of support ended by"),
    ("18.x-gpu-ml-scala2.13", None),                                 # 18 LTS, to 2029-06-10
    ("18.2.x-gpu-ml-scala2.13", None),
    ("17.3.x-gpu-ml-scala2.13", None),
    ("19.x-gpu-ml-scala2.13", "is not an LTS release"),
    ("21.1.x-gpu-ml-scala2.13", "newer than every release the runtime table lists"),  # cannot judge: not passed
])
def test_every_runtime_is_judged_as_the_release_notes_say(key, expected):
    from dbx_ai_infra.dbxtypes.shape import cluster_shape
    from dbx_ai_infra.policies.rules.require_supported_runtime import Settings, check

    messages = check(cluster_shape({"spark_version": key, "num_workers": 1}), Settings(as_of="2026-12-03"))
    if expected is None:
        assert messages == []
    else:
        (message,) = messages
        assert expected in message
        assert "18 LTS (to 2029-06-10), 17.3 LTS (to 2028-10-22)" in message  # the fix names the current LTS


def test_the_table_lists_11_3_12_2_18_and_19_with_their_dates():
    from dbx_ai_infra.gpucatalog.runtimes import current_lts, releases

    table = releases()
    assert (table["11.3"].lts, str(table["11.3"].end_of_support)) == (True, "2025-10-19")
    assert (table["12.2"].lts, str(table["12.2"].end_of_support)) == (True, "2026-03-01")
    assert (table["18"].lts, str(table["18"].released), str(table["18"].end_of_support)) == \
        (True, "2026-06-10", "2029-06-10")
    assert (table["19"].lts, str(table["19"].released), table["19"].end_of_support) == (False, "2026-06-15", None)
    assert [r.version for r in current_lts(date(2026, 12, 3))] == ["18", "17.3", "16.4", "15.4", "14.3"]


# --- 12. the collector's loop survives any one failing command ------------------------------------------------------

pytestmark_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="the collector is a bash script")


def _collector_env(tmp_path: Path, **over: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "nvidia-smi"
    recorded = ROOT / "tests" / "data" / "nvidia-smi" / "a100x8.csv"
    fake.write_text(f"#!/bin/bash\nif [ \"$1\" = -L ]; then echo 'GPU 0: NVIDIA A100 (UUID: GPU-0)'; "
                    f"else cat '{recorded}'; fi\n")
    fake.chmod(0o755)
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the Volume should be: every write to it fails\n")
    return {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "GPU_TIMELINE_DIR": str(blocked / "gpu_timeline"),
            "DB_CLUSTER_ID": "0101-abc", "DB_IS_DRIVER": "FALSE", "COLLECTOR_INSTANCE_ID": "i-0123",
            "COLLECTOR_SPOOL_DIR": str(tmp_path / "spool"), "COLLECTOR_LOG": str(tmp_path / "collector.log"),
            "COLLECTOR_FOREGROUND": "1", "COLLECTOR_LOOPS": "3", "COLLECTOR_INTERVAL_SECONDS": "0",
            "COLLECTOR_SPOOL_MAX_FILES": "100", **over}


@pytestmark_bash
def test_the_loop_outlives_a_long_spool_and_a_volume_it_cannot_write(tmp_path):
    spool = tmp_path / "spool"
    spool.mkdir()
    for i in range(5000):  # more paths than a pipe buffer holds: the pruning's pipeline once took SIGPIPE here
        (spool / f"2026-11-{1 + i // 1440:02d}T{(i // 60) % 24:02d}-{i % 60:02d}-00Z-{i:05d}-padding-padding.csv"
         ).write_text("x\n")
    done = subprocess.run(["bash", str(ROOT / "dbx_ai_infra" / "collector" / "gpu_collector.sh")], env=_collector_env(tmp_path),
                          capture_output=True, text=True, timeout=120, check=False)
    log = (tmp_path / "collector.log").read_text()
    assert done.returncode == 0, done.stderr
    assert "loop ended after 3 rounds" in log and log.count("cannot write") == 3
    assert len(list(spool.glob("*.csv"))) <= 101  # pruned to the limit (and the newest sample kept)


@pytestmark_bash
def test_the_loop_outlives_a_sample_it_cannot_write(tmp_path):
    (tmp_path / "blocked").write_text("a file where the spool should be\n")
    env = _collector_env(tmp_path, COLLECTOR_SPOOL_DIR=str(tmp_path / "blocked" / "spool"))
    done = subprocess.run(["bash", str(ROOT / "dbx_ai_infra" / "collector" / "gpu_collector.sh")], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    log = (tmp_path / "collector.log").read_text()
    assert done.returncode == 0 and "loop ended after 3 rounds" in log and log.count("sample failed") == 3


@pytestmark_bash
def test_the_memory_columns_are_documented_as_mib_which_advise_reads(tmp_path):
    """The collector writes nvidia-smi's MiB under the contract's names (an A100 40GB's memory: 40960 = 40 x 1024),
    as the collector page says and advise reads them."""
    env = _collector_env(tmp_path, GPU_TIMELINE_DIR=str(tmp_path / "volume"), COLLECTOR_ONCE="1")
    subprocess.run(["bash", str(ROOT / "dbx_ai_infra" / "collector" / "gpu_collector.sh")], env=env, timeout=60,
                   check=True, capture_output=True)
    (sample,) = (tmp_path / "volume").rglob("*.csv")
    with sample.open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["gpu_mem_total_mb"] for r in rows} == {"40960"} and rows[0]["gpu_mem_used_mb"] == "38211"
    page = " ".join((ROOT / "docs" / "collector.md").read_text().split())
    assert "`gpu_mem_used_mb` and `gpu_mem_total_mb` hold MiB" in page
