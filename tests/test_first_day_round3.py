"""The first day, round 3 (issue 52): a second stack in the same region, the grants after deploy, compute someone
uses. Each test failed on the code before its item."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import BASE_CONFIG, SHIPPED, resources, run_cli, stack_with

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.terraform_docs import documented_names

ROOT = Path(__file__).resolve().parent.parent
UNIQUE = "databricks-stack-unique-in-metastore"


def by_type(plan: dict[str, Any], suffix: str) -> dict[str, dict[str, Any]]:
    return {r["name"]: r["inputs"] for r in resources(plan, suffix)}


# --- 1. one catalog per stack, adopting existing ones, and the many-stacks finding ------------------------------------

def test_the_shipped_stacks_create_no_catalog_schema_or_root_twice_in_one_region(plan_of):
    """Before: dev, prod and estate (AWS, region unset) all created catalog ai; estate and new-workspace one root."""
    seen: dict[tuple[str, str], str] = {}
    for stack in SHIPPED:
        plan = plan_of(stack)
        created = [("catalog", c["name"]) for c in by_type(plan, "catalog:Catalog").values()]
        created += [("root", c["storageRoot"]) for c in by_type(plan, "catalog:Catalog").values()
                    if c.get("storageRoot")]
        for what in created:
            key = (plan["cloud"], *what)
            assert key not in seen, f"{stack} and {seen.get(key)} both create {what}"
            seen[key] = stack


def test_the_catalog_defaults_to_one_named_after_the_stack(write_stack, plan_of):
    plan = plan_of(stack_with(write_stack, name="team-a.x"))
    (catalog,) = by_type(plan, "catalog:Catalog").values()
    assert catalog["name"] == "ai_team_a_x"
    assert all(s["catalogName"] == "ai_team_a_x" for s in by_type(plan, "schema:Schema").values())
    named = plan_of(stack_with(write_stack, name="named", unity_catalog={"catalog": "shared_ai"}))
    assert [c["name"] for c in by_type(named, "catalog:Catalog").values()] == ["shared_ai"]


def test_a_stack_adopts_an_existing_catalog_and_existing_schemas(write_stack, plan_of):
    plan = plan_of(stack_with(write_stack, unity_catalog={
        "existing_catalog": True, "catalog": "main",
        "schemas": {"models": {"existing": True, "volumes": ["hf_cache", "checkpoints"]}, "ops": {}},
        "grants": [{"principal": "ml-engineers", "privileges": ["USE_SCHEMA", "READ_VOLUME"], "securable": "models"}],
    }))
    assert not by_type(plan, "catalog:Catalog")
    schemas = by_type(plan, "schema:Schema")
    assert sorted(s["name"] for s in schemas.values()) == ["ops", "platform"]  # models is adopted, never created
    volumes = by_type(plan, "volume:Volume")
    assert volumes["test-uc-volume-models-hf_cache"]["schemaName"] == "models"
    # the adopted schema's grants are per principal (databricks.Grant), never one authoritative Grants
    grants = by_type(plan, "grants:Grants")
    assert not [g for g in grants.values() if g.get("schema") == "main.models"]
    per_principal = [g for g in by_type(plan, "grant:Grant").values() if g.get("schema") == "main.models"]
    assert {g["principal"] for g in per_principal} >= {"ml-engineers"}


def test_an_existing_schema_in_a_catalog_the_stack_creates_is_refused(write_stack, capsys):
    path = stack_with(write_stack, unity_catalog={"schemas": {"models": {"existing": True,
                                                                         "volumes": ["hf_cache", "checkpoints"]}}})
    code, _, err = run_cli(capsys, "preview", "--stack", path)
    assert code == 2 and "dbx-ai-infra:unity_catalog" in err and "existing_catalog: true" in err


def two(write_stack, a: dict[str, Any], b: dict[str, Any], **common: Any) -> tuple[str, str]:
    return (stack_with(write_stack, name="one", **{**common, **a}), stack_with(write_stack, name="two",
                                                                                **{**common, **b}))


@pytest.mark.parametrize("a, b, what", [
    ({"unity_catalog": {"catalog": "ai"}}, {"unity_catalog": {"catalog": "ai"}}, "catalog ai"),
    ({"unity_catalog": {"existing_catalog": True, "catalog": "main"}},
     {"unity_catalog": {"existing_catalog": True, "catalog": "main"}}, "schema main.models"),
    ({"unity_catalog": {"storage_root": "s3://bucket/ai"}}, {"unity_catalog": {"storage_root": "s3://bucket/ai/"}},
     "storage root s3://bucket/ai"),
    ({"unity_catalog": {"storage_root": "s3://bucket/ai"}}, {"unity_catalog": {"storage_root": "s3://bucket/ai/b"}},
     "which overlaps it"),
])
def test_two_stacks_that_can_share_a_metastore_creating_the_same_thing_fail_the_many_stacks_run(
        write_stack, capsys, a, b, what):
    one, other = two(write_stack, a, b)
    code, out, _ = run_cli(capsys, "check", "--stack", one, "--stack", other, "--json")
    doc = json.loads(out)
    stacks = doc["stacks"] if "stacks" in doc else doc
    found = [v for s in stacks for v in s["violations"] if v["policy"] == UNIQUE]
    assert code == 1 and found and all(v["enforcement"] == "mandatory" for v in found)
    assert any(what in v["message"] and "Pulumi.one.yaml" in v["message"] and "Pulumi.two.yaml" in v["message"]
               for v in found)
    code, _, _ = run_cli(capsys, "preview", "--stack", one, "--stack", other)
    assert code == 1


def test_stacks_in_different_regions_or_clouds_may_reuse_a_name(write_stack, capsys):
    one, other = two(write_stack, {"region": "us-east-1"}, {"region": "eu-west-1"},
                     unity_catalog={"catalog": "ai"})
    code, out, _ = run_cli(capsys, "check", "--stack", one, "--stack", other, "--json")
    assert UNIQUE not in out
    one, other = two(write_stack, {"region": "us-east-1"}, {}, unity_catalog={"catalog": "ai"})
    code, out, _ = run_cli(capsys, "check", "--stack", one, "--stack", other, "--json")
    assert UNIQUE in out  # an unset region may be the same region


def test_the_shipped_stacks_pass_the_many_stacks_run(capsys):
    code, out, _ = run_cli(capsys, "check", "--all", "--json")
    assert UNIQUE not in out


# --- 2. the managed location's external location and storage credential -----------------------------------------------

def test_a_storage_credential_makes_the_credential_and_location_before_the_catalog(write_stack, plan_of):
    plan = plan_of(stack_with(write_stack, unity_catalog={
        "storage_root": "s3://acme/ai_test",
        "storage_credential": {"aws_iam_role_arn": "arn:aws:iam::123456789012:role/uc"}}))
    (credential,) = by_type(plan, "storageCredential:StorageCredential").values()
    (location,) = by_type(plan, "externalLocation:ExternalLocation").values()
    assert credential == {**credential, "name": "ai_test_credential", "awsIamRole": {
        "roleArn": "arn:aws:iam::123456789012:role/uc"}}
    assert location["url"] == "s3://acme/ai_test" and location["credentialName"] == "ai_test_credential"
    (catalog,) = resources(plan, "catalog:Catalog")
    assert any(d.endswith("ExternalLocation::test-uc-location") for d in catalog["dependencies"])


@pytest.mark.parametrize("uc, expected", [
    ({"storage_root": "s3://acme/x"}, "neither created nor named"),
    ({"storage_root": "s3://acme/x", "external_location": "acme_loc"}, "external location acme_loc covers"),
    ({"storage_root": "s3://acme/x", "storage_credential": {"aws_iam_role_arn": "arn:aws:iam::123456789012:role/u"}},
     "CREATE STORAGE CREDENTIAL, CREATE EXTERNAL LOCATION"),
])
def test_the_preview_names_what_the_managed_location_needs(write_stack, capsys, uc, expected):
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, unity_catalog=uc))
    assert code == 0 and "storage_root s3://acme/x" in err and expected in err and "CREATE" in err


@pytest.mark.parametrize("uc, message", [
    ({"storage_root": "s3://a/b", "storage_credential": {"azure_access_connector_id":
      "/subscriptions/s/resourceGroups/g/providers/Microsoft.Databricks/accessConnectors/c"}}, "azure identity"),
    ({"storage_root": "s3://a/b", "external_location": "l",
      "storage_credential": {"aws_iam_role_arn": "arn:aws:iam::123456789012:role/u"}}, "keep one"),
    ({"external_location": "l"}, "storage_root, which is not set"),
])
def test_storage_settings_that_cannot_work_are_refused(write_stack, capsys, uc, message):
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, unity_catalog=uc))
    assert code == 2 and message in err


# --- 3. registering the model, EXECUTE for the endpoint, grants people add by hand ------------------------------------

PROD_SP = "6f1c2b8e-4d3a-4b7e-9c21-0a5e8d7f3b64"


def test_registrars_may_register_models_and_the_endpoint_identity_may_execute_it(plan_of):
    plan = plan_of("prod")
    grants = [g for g in by_type(plan, "grant:Grant").values()]
    held = {(g["principal"], g.get("schema") or g.get("catalog") or g.get("model") or g.get("volume")):
            set(g["privileges"]) for g in grants}
    assert {"USE_SCHEMA", "CREATE_MODEL"} <= held[("ml-engineers", "ai_prod.models")]
    assert "USE_CATALOG" in held[("ml-engineers", "ai_prod")]
    assert held[(PROD_SP, "ai_prod.models.llama_chat")] == {"EXECUTE"}
    (endpoint,) = resources(plan, "modelServing:ModelServing")
    (execute,) = [g for g in resources(plan, "grant:Grant") if g["inputs"].get("model")]
    assert execute["urn"] in endpoint["dependencies"]  # granted before the endpoint is created


def test_grants_people_add_by_hand_survive_only_the_code_volume_is_owned_entirely(plan_of):
    plan = plan_of("prod")
    authoritative = {g.get("schema") or g.get("volume") or g.get("catalog") for g in
                     by_type(plan, "grants:Grants").values()}
    assert authoritative == {"ai_prod.platform", "ai_prod.platform.code"}
    per_principal = {g.get("schema") or g.get("volume") or g.get("catalog") for g in
                     by_type(plan, "grant:Grant").values()}
    assert {"ai_prod", "ai_prod.models", "ai_prod.raw", "ai_prod.models.hf_cache"} <= per_principal


def test_registrars_need_the_models_schema(write_stack, capsys):
    path = stack_with(write_stack, unity_catalog={"registrars": ["ml"], "models_schema": "nowhere"})
    code, _, err = run_cli(capsys, "preview", "--stack", path)
    assert code == 2 and "models_schema 'nowhere'" in err


def test_the_preview_says_who_needs_execute_on_the_model(write_stack, capsys):
    endpoint = {"entity": "other.models.chat", "entity_version": "1", "rate_limit_per_user_per_minute": 5,
                "model": {"params_billions": 7, "precision": "fp16"}}
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, serving={"endpoints": {"c": endpoint}}))
    assert code == 0 and "whoever runs `pulumi up` needs EXECUTE on other.models.chat" in err


# --- 5. run-as identities: CAN_USE on the policy, CAN_ATTACH_TO on the pool it pins ----------------------------------

@pytest.mark.parametrize("stack", ["prod", "azure-prod", "new-workspace", "estate"])
def test_the_run_as_identity_may_use_the_policy_of_its_job_cluster(plan_of, stack):
    """Before: the service principal a job runs as had no CAN_USE on the policy its job cluster is created under."""
    plan = plan_of(stack)
    for job in by_type(plan, "job:Job").values():
        who = job["runAs"]
        policy = job["jobClusters"][0]["newCluster"]["policyId"]
        (perms,) = [p for p in by_type(plan, "permissions:Permissions").values() if p.get("clusterPolicyId") == policy]
        assert {**who, "permissionLevel": "CAN_USE"} in perms["accessControls"]


def test_the_run_as_identity_may_attach_to_the_pool_its_policy_pins(plan_of):
    """Before: new-workspace's first training run could not launch its job cluster on the training pool."""
    plan = plan_of("new-workspace")
    (job,) = by_type(plan, "job:Job").values()
    pool = job["jobClusters"][0]["newCluster"]["instancePoolId"]
    (perms,) = [p for p in by_type(plan, "permissions:Permissions").values() if p.get("instancePoolId") == pool]
    assert {**job["runAs"], "permissionLevel": "CAN_ATTACH_TO"} in perms["accessControls"]


def test_a_job_running_as_a_user_says_who_can_deploy_it(write_stack, capsys):
    training = {"num_workers": 1, "model": {"params_billions": 1}, "job": {}}
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, training=training))
    assert code == 0 and "training.job runs as the user ml@example.com: only ml@example.com or a workspace " \
                         "admin can deploy it" in err


# --- 7. the endpoint's create timeout, from the model's size ---------------------------------------------------------

def test_the_endpoint_waits_longer_than_the_providers_45_minutes_for_a_large_model(write_stack, plan_of, capsys):
    from dbx_ai_infra.components import create_timeout_minutes

    assert create_timeout_minutes(None) == 45 and create_timeout_minutes(14) == 52
    assert create_timeout_minutes(140) == 115 and create_timeout_minutes(4000) == 240
    (endpoint,) = resources(plan_of("prod"), "modelServing:ModelServing")
    assert endpoint["custom_timeouts"] == {"create": "52m"}  # 7B in fp16: 14 GB of weights
    big = {"entity": "other.models.big", "entity_version": "1", "rate_limit_per_user_per_minute": 5,
           "model": {"params_billions": 70, "precision": "fp16"}, "workload_type": "GPU_XLARGE_8"}
    path = stack_with(write_stack, serving={"endpoints": {"big": big}})
    (endpoint,) = resources(plan_of(path), "modelServing:ModelServing")
    assert endpoint["custom_timeouts"] == {"create": "115m"}
    out = write_stack({}, name="unused").parent / "tf"
    assert main(["export-terraform", "--stack", path, "--out", str(out)]) == 0
    capsys.readouterr()
    doc = json.loads((out / "main.tf.json").read_text())
    (body,) = doc["resource"]["databricks_model_serving"].values()
    assert body["timeouts"] == {"create": "115m"}


def test_the_provisioned_throughput_endpoint_waits_longer_than_the_providers_10_minutes(plan_of, tmp_path, capsys):
    """Before: the serverless stack's endpoint set no timeout, so the provider's 10 minutes held, create and
    update, and a create that ran out deleted the endpoint."""
    (endpoint,) = resources(plan_of("serverless"), "ModelServingProvisionedThroughput")
    timeouts = endpoint.get("custom_timeouts") or {}
    assert timeouts == {"create": "45m", "update": "45m"}  # model units, no model size: the estimate's 45 minutes
    assert main(["export-terraform", "--stack", "serverless", "--out", str(tmp_path / "tf")]) == 0
    capsys.readouterr()
    doc = json.loads((tmp_path / "tf" / "main.tf.json").read_text())
    (body,) = doc["resource"]["databricks_model_serving_provisioned_throughput"].values()
    assert body["timeouts"] == {"create": "45m", "update": "45m"}
    # the page's Timeouts section: "The `timeouts` block allows you to specify `create` and `update` timeouts"
    assert {"timeouts", *body["timeouts"]} <= documented_names("databricks_model_serving_provisioned_throughput")


# --- 8. runtimes: 17.3 and 18 LTS, the newest by default, a warning a year before the end ------------------------------

def test_new_stacks_default_to_the_newest_lts_gpu_ml_runtime(plan_of):
    from datetime import date

    from dbx_ai_infra.dbxtypes.vocabulary import DEFAULT_RUNTIME
    from dbx_ai_infra.gpucatalog.runtimes import current_lts, release_of

    newest = current_lts(date(2026, 12, 6))[0]
    assert release_of(DEFAULT_RUNTIME) == newest and newest.version == "18"
    assert DEFAULT_RUNTIME == "18.x-gpu-ml-scala2.13"  # 17.x and 18 are Scala 2.13 only
    dev = [c["sparkVersion"] for c in by_type(plan_of("dev"), "cluster:Cluster").values()]
    assert dev and set(dev) == {DEFAULT_RUNTIME}


@pytest.mark.parametrize("today, warned", [("2026-08-18", False), ("2026-08-19", True), ("2026-12-06", True)])
def test_the_runtime_rule_warns_a_year_before_the_end_of_support(today, warned):
    from datetime import date

    from dbx_ai_infra.gpucatalog.runtimes import verdict

    problem = verdict("15.4.x-gpu-ml-scala2.12", date.fromisoformat(today)).problem
    assert (problem is not None) == warned
    if warned:
        assert problem is not None and "reaches its end of support on 2027-08-19" in problem
    assert verdict("17.3.x-gpu-ml-scala2.13", date.fromisoformat(today)).problem is None


# --- 4 and 6. compute the people and groups the stack names can use ---------------------------------------------------

@pytest.mark.parametrize("stack, group", [("prod", "ml-serving"), ("azure-prod", "ml-engineers")])
def test_the_production_inference_clusters_are_dedicated_to_the_group_that_serves_from_them(plan_of, stack, group):
    """Before: dedicated to a service principal, never auto-terminating, used by no job or endpoint."""
    plan = plan_of(stack)
    (cluster,) = [r for r in resources(plan, "cluster:Cluster") if r["inputs"]["customTags"]["workload_type"] ==
                  "inference"]
    c = cluster["inputs"]
    assert (c["kind"], c["dataSecurityMode"], c["singleUserName"], c["useMlRuntime"]) == (
        "CLASSIC_PREVIEW", "DATA_SECURITY_MODE_DEDICATED", group, True)
    assert c["autoterminationMinutes"] == 60
    (perms,) = [p for p in by_type(plan, "permissions:Permissions").values() if p.get("clusterId") == cluster["id"]]
    assert {"groupName": group, "permissionLevel": "CAN_RESTART"} in perms["accessControls"]


def test_the_estates_clusters_are_dedicated_to_the_groups_that_use_them(plan_of):
    """Before: dedicated to ml-platform@example.com while CAN_USE and CAN_ATTACH_TO went to groups."""
    plan = plan_of("estate")
    perms = {p["clusterId"]: p["accessControls"] for p in by_type(plan, "permissions:Permissions").values()
             if "clusterId" in p}
    clusters = resources(plan, "cluster:Cluster")
    assert len(clusters) == 4
    for cluster in clusters:
        c = cluster["inputs"]
        assert c["dataSecurityMode"] == "DATA_SECURITY_MODE_DEDICATED" and c["kind"] == "CLASSIC_PREVIEW"
        assert c["singleUserName"] in ("ml-serving", "data-scientists"), cluster["name"]
        assert {"groupName": c["singleUserName"], "permissionLevel": "CAN_RESTART"} in perms[cluster["id"]]
    (job,) = by_type(plan, "job:Job").values()  # the fine-tune job keeps running as its user
    assert job["jobClusters"][0]["newCluster"]["singleUserName"] == "ml-platform@example.com"


def test_an_always_on_cluster_says_why_and_is_priced_for_the_month(capsys):
    code, out, err = run_cli(capsys, "preview", "--stack", "estate", "--json")
    plan = json.loads(out)
    chat = next(e for e in plan["cost"]["resources"].values() if e["name"] == "estate-chat-cluster")
    assert code == 0 and "the chat transcripts' scoring stream runs around the clock" in err
    assert chat["hours_per_month"] == 730 and chat["hours_basis"].startswith("always on")
    assert "workloads.chat is always on (the chat transcripts' scoring stream runs around the clock)" in err


def test_a_cluster_that_never_stops_without_a_reason_is_read_as_before_and_named_with_its_fix(write_stack, capsys):
    """Migration (chosen): ``autotermination_minutes: 0`` was the default before issue 52; a stack that says it without
    ``always_on`` deploys as before (never stops, priced for the month), and the preview names file, field and fix."""
    base = copy.deepcopy(BASE_CONFIG["dbx-ai-infra:inference"])
    path = stack_with(write_stack, inference={**base, "autotermination_minutes": 0})
    code, out, err = run_cli(capsys, "preview", "--stack", path, "--json")
    cluster = next(e for e in json.loads(out)["cost"]["resources"].values() if e["name"] == "test-inference-cluster")
    assert code == 0 and cluster["hours_per_month"] == 730
    assert (f"{path}: dbx-ai-infra:inference.autotermination_minutes is 0 without always_on" in err
            and "Fix: say why with always_on: true and always_on_reason" in err)


def test_an_inference_cluster_stops_after_an_idle_hour_by_default(write_stack, capsys):
    """Before: 0 (never) was the default, and the prod and azure-prod clusters ran the whole month."""
    code, out, _ = run_cli(capsys, "preview", "--stack", stack_with(write_stack), "--json")
    cluster = next(r for r in json.loads(out)["resources"] if r["name"] == "test-inference-cluster")
    assert code == 0 and cluster["inputs"]["autoterminationMinutes"] == 60


@pytest.mark.parametrize("inference, message", [
    ({"always_on": True}, "always_on needs always_on_reason"),
    ({"always_on": True, "always_on_reason": "x", "autotermination_minutes": 30}, "always_on is set but"),
])
def test_an_inference_cluster_that_never_stops_says_why(write_stack, capsys, inference, message):
    base = copy.deepcopy(BASE_CONFIG["dbx-ai-infra:inference"])
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, inference={**base, **inference}))
    assert code == 2 and "dbx-ai-infra:inference" in err and message in err


def test_an_inference_cluster_for_a_service_principal_alone_is_refused(write_stack, capsys):
    sp = "0b7d4c1e-2f3a-4e5b-8c6d-9e0f1a2b3c4d"
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, single_user_name=sp, dev=None))
    assert code == 2 and "inference is an inference cluster dedicated to the service principal" in err
    base = copy.deepcopy(BASE_CONFIG["dbx-ai-infra:inference"])
    code, _, _ = run_cli(capsys, "preview", "--stack", stack_with(write_stack, name="grp", single_user_name=sp, dev=None,
                                                               inference={**base, "dedicated_group": "serving"}))
    assert code == 0


def test_dedicated_group_access_needs_runtime_15_4(write_stack, capsys):
    base = copy.deepcopy(BASE_CONFIG["dbx-ai-infra:inference"])
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, runtime="14.3.x-gpu-ml-scala2.12",
                                                                inference={**base, "dedicated_group": "serving"}))
    assert code == 2 and "dedicated_group needs runtime 15.4 or later" in err


# --- 11. the current access-mode names where the provider documents them, the legacy ones still read ---------------

def _clusters_of(plan: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every cluster the plan creates: the all-purpose clusters, and each job's job clusters."""
    out = [(r["name"], r["inputs"]) for r in resources(plan, "cluster:Cluster")]
    for job in resources(plan, "job:Job"):
        out += [(f"{job['name']}[{c['jobClusterKey']}]", c["newCluster"]) for c in job["inputs"].get("jobClusters", [])]
    return out


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_cluster_of_the_shipped_stacks_is_made_with_the_current_access_mode_names(plan_of, stack):
    """Before: data_security_mode SINGLE_USER (the legacy alias) and, on dev clusters, the single-node Spark settings
    (spark.databricks.cluster.profile, which the API refuses beside an access mode with kind)."""
    for name, c in _clusters_of(plan_of(stack)):
        assert (c.get("kind"), c.get("dataSecurityMode"), c.get("useMlRuntime")) == (
            "CLASSIC_PREVIEW", "DATA_SECURITY_MODE_DEDICATED", True), name
        assert "spark.databricks.cluster.profile" not in c.get("sparkConf", {}), name
        if c.get("numWorkers") == 0 and "autoscale" not in c:
            assert c["isSingleNode"] is True and "ResourceClass" not in c["customTags"], name


def _audit(tmp_path: Path, capsys, cluster: dict[str, Any]) -> set[str]:
    path = tmp_path / f"{cluster['cluster_id']}.json"
    path.write_text(json.dumps({"clusters": [cluster]}))
    code = main(["check", "--cluster-json", str(path), "--json"])
    out = capsys.readouterr().out
    assert code in (0, 1)
    return {v["policy"] for v in json.loads(out)["violations"]}


def test_an_audit_reads_the_legacy_access_mode_names_as_it_reads_the_current_ones(tmp_path, capsys):
    """A workspace returns clusters made either way (and may return SINGLE_USER for one created as
    DATA_SECURITY_MODE_DEDICATED: the provider suppresses that diff as an alias, resource_cluster.go): a dev node
    judged by its current names and by its legacy ones gets the same verdicts; one that is neither is named."""
    base = {"cluster_name": "nb", "spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.xlarge",
            "driver_node_type_id": "g5.xlarge", "num_workers": 0, "autotermination_minutes": 30,
            "single_user_name": "a@example.com", "aws_attributes": {"availability": "ON_DEMAND"},
            "custom_tags": {"workload": "genai", "cost_center": "ai"}}
    current = _audit(tmp_path, capsys, {**base, "cluster_id": "0101-current", "kind": "CLASSIC_PREVIEW",
                                        "data_security_mode": "DATA_SECURITY_MODE_DEDICATED", "is_single_node": True,
                                        "use_ml_runtime": True})
    legacy = _audit(tmp_path, capsys, {**base, "cluster_id": "0101-legacy", "data_security_mode": "SINGLE_USER",
                                       "spark_conf": {"spark.databricks.cluster.profile": "singleNode",
                                                      "spark.master": "local[*]"},
                                       "custom_tags": {**base["custom_tags"], "ResourceClass": "SingleNode"}})
    neither = _audit(tmp_path, capsys, {**base, "cluster_id": "0101-neither", "data_security_mode": "SINGLE_USER"})
    assert current == legacy and "databricks-cluster-configure-single-node" not in current
    assert neither == current | {"databricks-cluster-configure-single-node"}


# --- 10. a CPU driver where the launcher we generate runs no rank on it -----------------------------------------------

def _job_cluster(plan: dict[str, Any], job_name: str) -> tuple[dict[str, Any], list[str]]:
    (job,) = [r["inputs"] for r in resources(plan, "job:Job") if r["name"] == job_name]
    return job["jobClusters"][0]["newCluster"], job["tasks"][0]["sparkPythonTask"]["parameters"]


@pytest.mark.parametrize("stack, job, driver, processes", [
    ("prod", "prod-training-job", "m5.2xlarge", "16"),  # 2 workers x 8 A100s of p4d.24xlarge
    ("azure-prod", "azure-prod-training-job", "Standard_D8s_v3", "8"),  # 2 x 4 of NC96ads_A100_v4
    ("estate", "estate-llama-ft-job", "m5.2xlarge", "16"),
])
def test_a_training_job_that_runs_train_py_on_workers_has_a_cpu_driver(plan_of, stack, job, driver, processes):
    """Before: a GPU driver ($2,243 a month in prod, $2,158 in azure-prod, $3,364 in estate) that ran no rank: the job
    passes --processes (a rank per worker GPU) and train.py starts them on the workers, none on the driver."""
    cluster, params = _job_cluster(plan_of(stack), job)
    assert cluster["driverNodeTypeId"] == driver and cluster["nodeTypeId"] != driver
    assert params[params.index("--processes") + 1] == processes


def test_the_cpu_driver_is_what_the_cost_falls_by_and_an_explicit_gpu_driver_keeps_it(write_stack, capsys):
    def job_cost(training: dict[str, Any], name: str) -> tuple[float, str]:
        code, out, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, name=name, training=training),
                             "--json")
        assert code == 0, err
        entry = next(e for e in json.loads(out)["cost"]["resources"].values() if e["name"] == f"{name}-training-job")
        return entry["monthly"]["expected"], err

    training = copy.deepcopy(BASE_CONFIG["dbx-ai-infra:training"])
    training.pop("all_purpose_cluster")  # a job alone
    training["job"] = {"parameters": ["--model", "m", "--data", "/Volumes/c/s/v/d"]}
    cpu, err = job_cost(training, "cpu")
    gpu, err_gpu = job_cost({**training, "driver": "gpu"}, "gpu")
    assert cpu < gpu and "training: the driver is a GPU node" not in err + err_gpu
    own, err_own = job_cost({**training, "job": {**training["job"], "python_file": "/Workspace/train.py"}}, "own")
    assert own == gpu and "dbx-ai-infra:training: the driver is a GPU node: the job runs /Workspace/train.py" in err_own


def test_the_preview_says_why_an_inference_driver_stays_a_gpu_node(write_stack, capsys):
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack))
    assert code == 0 and ("dbx-ai-infra:inference: the driver is a GPU node: the stack generates no launcher for an "
                          "inference cluster") in err
    inference = {**copy.deepcopy(BASE_CONFIG["dbx-ai-infra:inference"]), "driver": "gpu"}
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, name="said", inference=inference))
    assert code == 0 and "inference: the driver is a GPU node" not in err


# --- 9. the training entry point: what it needs, and what it does not do ----------------------------------------------

def test_the_preview_names_what_the_entry_point_needs_and_a_workload_it_cannot_fit(write_stack, capsys, plan_of):
    training = {**copy.deepcopy(BASE_CONFIG["dbx-ai-infra:training"]), "job": {}}
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, training=training))
    assert code == 0 and ("dbx-ai-infra:training.job runs the project's train.py, which needs --model and --data in "
                          "job.parameters") in err
    code, _, err = run_cli(capsys, "preview", "--stack", "new-workspace")  # a LoRA workload: train.py trains LoRA
    assert code == 0 and "needs --model" not in err and "train.py" not in err
    quantized = {**training, "job": {"parameters": ["--model", "m", "--data", "/Volumes/c/s/v/d"]},
                 "model": {**training["model"], "precision": "int4", "method": "lora"}}
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, name="q", training=quantized))
    assert code == 0 and ("the project's train.py loads the weights in bf16 and quantizes nothing (no QLoRA), but the "
                          "workload is sized for int4 weights") in err
    assert "train.py trains LoRA with Hugging Face peft, which training.libraries does not list" in err
    with_peft = {**quantized, "libraries": ["peft==0.12.0"]}
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, name="p", training=with_peft))
    assert code == 0 and "Hugging Face peft" not in err


@pytest.mark.parametrize("stack, job, told", [
    ("new-workspace", "new-workspace-training-job", ["--method", "lora", "--dtype", "bf16"]),  # 7B LoRA on one GPU
    ("prod", "prod-training-job", ["--sharding", "fsdp", "--dtype", "bf16"]),  # 13B full over a node's 4 GPUs
    ("estate", "estate-llama-ft-job", ["--method", "lora", "--sharding", "fsdp", "--dtype", "bf16"]),
])
def test_the_job_tells_train_py_the_method_the_sharding_and_the_precision_the_stack_is_sized_for(plan_of, stack, job,
                                                                                                told):
    """Before: LoRA stacks and models spread over GPUs got a note that train.py trains every weight, a replica per
    GPU; now train.py does both (peft; FSDP2), told by the job."""
    _, params = _job_cluster(plan_of(stack), job)
    flags = {"--method", "--sharding", "--dtype"}
    assert {p: params[i + 1] for i, p in enumerate(params) if p in flags} == dict(zip(told[::2], told[1::2], strict=True))


# --- the audit of issue 52 on main: what the shipped stacks still missed ---------------------------------------------

def _holds(plan: dict[str, Any], who: str, privilege: str, path: str) -> bool:
    """Whether ``who`` holds ``privilege`` on the Volume of ``path`` (/Volumes/<catalog>/<schema>/<volume>/...) and
    USE_CATALOG, USE_SCHEMA above it: a privilege on the catalog or the schema reaches the Volumes under it (Databricks
    docs, "Privileges for Unity Catalog volumes": read files needs USE CATALOG, USE SCHEMA, READ VOLUME)."""
    catalog, schema, volume = path.split("/")[2:5]
    held: dict[str, set[str]] = {}
    for r in resources(plan, "grants:Grants"):
        target = next(v for k, v in r["inputs"].items() if k != "grants")
        for g in r["inputs"]["grants"]:
            held.setdefault(target, set()).update(g["privileges"] if g["principal"] == who else ())
    for r in resources(plan, "grant:Grant"):
        target = next(v for k, v in r["inputs"].items() if k not in ("principal", "privileges"))
        held.setdefault(target, set()).update(r["inputs"]["privileges"] if r["inputs"]["principal"] == who else ())

    def on(*levels: str, privilege: str) -> bool:
        return any({privilege, "ALL_PRIVILEGES"} & held.get(level, set()) for level in levels)

    return (on(catalog, privilege="USE_CATALOG")
            and on(catalog, f"{catalog}.{schema}", privilege="USE_SCHEMA")
            and on(catalog, f"{catalog}.{schema}", f"{catalog}.{schema}.{volume}", privilege=privilege))


def _volume_uses(c: dict[str, Any]) -> list[tuple[str, str]]:
    """What a cluster reads and writes on Volumes as its dedicated identity: its init scripts (read), and the Volume
    paths its environment names (the HF cache, checkpoints, the collector's samples: written)."""
    uses = [("READ_VOLUME", s["volumes"]["destination"]) for s in c.get("initScripts", []) if "volumes" in s]
    return uses + [("WRITE_VOLUME", v) for v in c.get("sparkEnvVars", {}).values()
                   if isinstance(v, str) and v.startswith("/Volumes/")]


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_cluster_of_the_shipped_stacks_can_read_and_write_the_volumes_it_names(plan_of, stack):
    """Before: a cluster dedicated to a group (prod's and azure-prod's inference clusters, all four of estate's) ran
    its init script from the code Volume and wrote the HF cache and the GPU samples as the group, which held none of
    it: the init script runs as the cluster's assigned principal, user or group (Databricks docs, "What files can I
    reference in an init script?"), so the cluster could not start."""
    plan = plan_of(stack)
    checked = 0
    for name, c in _clusters_of(plan):
        for privilege, path in _volume_uses(c):
            assert _holds(plan, c["singleUserName"], privilege, path), (name, c["singleUserName"], privilege, path)
            checked += 1
    for job in resources(plan, "job:Job"):
        who = next(iter(job["inputs"]["runAs"].values()))
        for task in job["inputs"]["tasks"]:
            python = (task.get("sparkPythonTask") or {}).get("pythonFile", "")
            if python.startswith("/Volumes/"):
                assert _holds(plan, who, "READ_VOLUME", python), (job["name"], who, python)
    assert checked or stack == "serverless"


@pytest.mark.parametrize("stack", SHIPPED)
def test_no_shipped_stacks_training_run_fails_as_the_preview_foresees(capsys, stack):
    """Before: estate's llama-ft trained LoRA with the project's train.py, which imports peft, and listed no peft
    (the 18 LTS ML runtime has none): its first run would fail, as the preview said."""
    code, _, err = run_cli(capsys, "preview", "--stack", stack)
    assert code == 0
    for fails in ("the run fails", "the run exits 2", "will not fit", "refuses --gpus"):
        assert fails not in err, err


def test_a_pool_backed_cluster_takes_its_driver_from_its_pool(plan_of, write_stack, capsys):
    """Before: new-workspace's training job cluster named a CPU driver (m5.2xlarge) beside its pool's instance_pool_id.
    The provider sends neither node_type_id nor driver_node_type_id with an instance_pool_id (terraform-provider-
    databricks clusters ModifyRequestOnInstancePool, which jobs/resource_job.go applies to every job cluster), and a
    cluster on a pool takes its driver from that pool when no driver pool is named (Clusters API,
    driver_instance_pool_id): the driver was a GPU node of the pool, priced as a CPU one, under a policy that required
    driver_node_type_id and forbade driver_instance_pool_id."""
    for stack in SHIPPED:
        for name, c in _clusters_of(plan_of(stack)):
            if c.get("instancePoolId"):
                assert c.get("driverInstancePoolId") == c["instancePoolId"], (stack, name)
                assert "driverNodeTypeId" not in c and "nodeTypeId" not in c, (stack, name)
    code, _, err = run_cli(capsys, "preview", "--stack", "new-workspace")
    assert code == 0 and ("dbx-ai-infra:training: the driver is a GPU node: its workers come from an instance pool "
                          "(instance_pools.training)") in err
    inference = {**copy.deepcopy(BASE_CONFIG["dbx-ai-infra:inference"]), "driver": "cpu"}
    pools = {"inference": {"min_idle_instances": 0, "max_capacity": 8}}
    code, _, err = run_cli(capsys, "preview", "--stack", stack_with(write_stack, inference=inference,
                                                                   instance_pools=pools))
    assert code == 2 and "dbx-ai-infra:inference.driver: asks for a CPU driver" in err
    assert "Fix: remove inference.driver and inference.driver_node_type_id" in err
    code, out, _ = run_cli(capsys, "preview", "--json", "--stack", stack_with(
        write_stack, name="pooled", instance_pools=pools))
    cluster = next(r["inputs"] for r in json.loads(out)["resources"] if r["name"] == "pooled-inference-cluster")
    assert code == 0 and cluster["driverInstancePoolId"] == cluster["instancePoolId"]
