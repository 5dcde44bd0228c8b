"""What a real Databricks workspace would refuse or run other than meant: each finding of the fidelity review, and the
API conformance rule that keeps the class closed (databricks-sdk's dataclasses and enums, and the documented limits).
"""

from __future__ import annotations

import copy
import json

import pytest
from conftest import BASE_CONFIG, SHIPPED, resources, run_cli

from dbx_ai_infra.dbxtypes.shape import cluster_shape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, GRANTS, INSTANCE_POOL, JOB, SCHEMA, VOLUME
from dbx_ai_infra.gpucatalog.runtime_libraries import library_table
from dbx_ai_infra.guardrails import evaluate, evaluate_shape
from dbx_ai_infra.policies.registry import RULES_BY_NAME, rule_messages

API = RULES_BY_NAME["databricks-api-conformance"]
SP = "6f1c2b8e-4d3a-4b7e-9c21-0a5e8d7f3b64"


def conformance(resource_type: str, props: dict, source: str = "pulumi") -> list[str]:
    return rule_messages(API, resource_type, props, source=source)


# --- 1. libraries on the task, not on a shared job cluster ------------------------------------------------------

def test_libraries_sit_on_the_training_task_and_the_rule_refuses_them_on_a_job_cluster(plan_of):
    (job,) = [r for r in resources(plan_of("prod"), "job:Job")]
    inputs = job["inputs"]
    assert "libraries" not in inputs["jobClusters"][0]["newCluster"]
    # prod names transformers and peft bare: its runtime's (17.3 LTS ML) pins from the runtime library table
    pins = library_table().runtimes["17.3"].pins
    assert inputs["tasks"][0]["libraries"] == [{"pypi": {"package": f"transformers=={pins['transformers']}"}},
                                               {"pypi": {"package": f"peft=={pins['peft']}"}}]
    broken = copy.deepcopy(inputs)
    broken["jobClusters"][0]["newCluster"]["libraries"] = inputs["tasks"][0]["libraries"]
    (message,) = conformance(JOB, broken)
    assert message.startswith("job_clusters[0].new_cluster.libraries is not a field of the Databricks API object "
                              "ClusterSpec")
    assert conformance(JOB, inputs) == []


# --- the class: fields and enum values of databricks-sdk's types ------------------------------------------------

@pytest.mark.parametrize("resource_type,props,fragment", [
    (CLUSTER, {"sparkVersion": "17.3.x-gpu-ml-scala2.13", "awsAttributes": {"availability": "SPOT_PLEASE"}},
     "aws_attributes.availability is 'SPOT_PLEASE', which the API does not know (AwsAvailability"),
    (CLUSTER, {"sparkVersion": "17.3.x-gpu-ml-scala2.13", "dataSecurityMode": "WIDE_OPEN"},
     "data_security_mode is 'WIDE_OPEN'"),
    (CLUSTER, {"sparkVersion": "17.3.x-gpu-ml-scala2.13", "numWorkerz": 2}, "num_workerz is not a field"),
    (JOB, {"tasks": [{"taskKey": "t", "retryOnTimeoutt": True}]}, "tasks[0].retry_on_timeoutt is not a field"),
    (JOB, {"runAs": {"servicePrincipal": "x"}}, "run_as.service_principal is not a field"),
    (INSTANCE_POOL, {"instancePoolName": "p", "awsAttributes": {"availability": "SPOT_WITH_FALLBACK"}},
     "aws_attributes.availability is 'SPOT_WITH_FALLBACK'"),  # pools take SPOT or ON_DEMAND only
    (VOLUME, {"catalogName": "ai", "schemaName": "m", "name": "v", "volumeType": "SHARED"}, "volume_type is 'SHARED'"),
    (SCHEMA, {"catalogName": "ai", "name": "m", "colour": "red"}, "colour is not a field"),
])
def test_fields_and_enum_values_the_api_does_not_know_are_violations(resource_type, props, fragment):
    messages = conformance(resource_type, props)
    assert any(fragment in m for m in messages), messages
    assert all("Fix:" in m for m in messages)


def test_exported_clusters_are_read_as_cluster_details(capsys, tmp_path):
    exported = {"cluster_id": "0101-abc", "cluster_name": "x", "spark_version": "17.3.x-gpu-ml-scala2.13",
                "node_type_id": "g5.xlarge", "num_workers": 0, "state": "RUNNING", "creator_user_name": "a@b.c",
                "autotermination_minutes": 30, "custom_tags": {"workload": "interactive", "cost_center": "c"}}
    assert conformance(CLUSTER, exported, source="api") == []  # read-only fields of clusters/get are fine


# --- 5. values the API refuses ------------------------------------------------------------------------------------

def _stack(write_stack, **sections):
    config = copy.deepcopy(BASE_CONFIG)
    for key, value in sections.items():
        config[f"dbx-ai-infra:{key}"] = value
    return str(write_stack(config))


def test_autoscale_needs_max_above_min(write_stack, capsys):
    code, _, err = run_cli(capsys, "check", "--stack", _stack(write_stack, inference={
        "min_workers": 3, "max_workers": 3, "model": {"params_billions": 7, "precision": "fp16"}}))
    assert code == 2 and "dbx-ai-infra:inference" in err and "max_workers must be above min_workers" in err
    assert conformance(CLUSTER, {"autoscale": {"minWorkers": 3, "maxWorkers": 3}}) == []  # the bounds rule's
    from dbx_ai_infra.policies.registry import RULES_BY_NAME, rule_messages

    (message,) = rule_messages(RULES_BY_NAME["databricks-cluster-configure-worker-bounds"], CLUSTER,
                               {"autoscale": {"minWorkers": 3, "maxWorkers": 3}})
    assert "max_workers 3 <= min_workers 3" in message and "num_workers 3" in message and "at least 4" in message


def test_pool_idle_minutes_are_capped_at_the_apis_10000(write_stack, capsys):
    code, _, err = run_cli(capsys, "check", "--stack", _stack(write_stack, instance_pools={
        "inference": {"idle_instance_autotermination_minutes": 10_001}}))
    assert code == 2 and "instance_pools.inference.idle_instance_autotermination_minutes" in err
    (message,) = conformance(INSTANCE_POOL, {"instancePoolName": "p", "idleInstanceAutoterminationMinutes": 20_000})
    assert "0 to 10,000" in message


@pytest.mark.parametrize("grant,words", [
    ({"principal": "g", "privileges": ["USE_CATALOG"], "securable": "models.hf_cache"},
     "privilege USE_CATALOG does not apply to a volume"),
    ({"principal": "g", "privileges": ["READ_EVERYTHING"]}, "'READ_EVERYTHING' is not a Unity Catalog privilege"),
    ({"principal": "g", "privileges": ["CREATE_SCHEMA"], "securable": "raw"}, "CREATE_SCHEMA does not apply to a "
                                                                              "schema"),
])
def test_privileges_come_from_the_sdk_and_must_apply_to_their_securable(write_stack, capsys, grant, words):
    code, _, err = run_cli(capsys, "check", "--stack", _stack(write_stack, unity_catalog={"grants": [grant]}))
    assert code == 2 and "dbx-ai-infra:unity_catalog.grants[0]" in err and words in err
    securable = {"catalog": {"catalog": "ai"}, "raw": {"schema": "ai.raw"}}.get(grant.get("securable", "catalog"),
                                                                                  {"volume": "ai.models.hf_cache"})
    messages = conformance(GRANTS, {**securable, "grants": [{"principal": "g", "privileges": grant["privileges"]}]})
    assert messages and words in messages[0]


# --- 6. retry_on_timeout needs a timeout --------------------------------------------------------------------------

def _training(job: dict) -> dict:
    return {"num_workers": 1, "model": {"params_billions": 1}, "job": {"python_file": "/Workspace/t.py", **job}}


def test_retry_on_timeout_only_with_a_timeout(write_stack, capsys):
    code, _, err = run_cli(capsys, "check", "--stack", _stack(write_stack, training=_training({"retry_on_timeout": True})))
    assert code == 2 and "dbx-ai-infra:training.job" in err and "timeout_seconds" in err
    code, out, _ = run_cli(capsys, "preview", "--json", "--stack",
                       _stack(write_stack, training=_training({"timeout_seconds": 14_400})))
    (job,) = [r for r in json.loads(out)["resources"] if r["type"] == JOB]
    task = job["inputs"]["tasks"][0]
    assert code == 0 and task["timeoutSeconds"] == 14_400 and task["retryOnTimeout"] is True


# --- 4. the job runs as the clusters' identity ----------------------------------------------------------------

def test_the_job_runs_as_the_service_principal_by_application_id(plan_of):
    (job,) = resources(plan_of("prod"), "job:Job")
    assert job["inputs"]["runAs"] == {"servicePrincipalName": SP}
    (job_cluster,) = job["inputs"]["jobClusters"]
    assert job_cluster["newCluster"]["singleUserName"] == SP


# --- 3. access to the Volumes -------------------------------------------------------------------------------------

def _grants(plan: dict) -> dict[str, dict[str, list[str]]]:
    """Securable -> principal -> privileges, over the authoritative Grants and the per-principal Grant resources."""
    out: dict[str, dict[str, list[str]]] = {}
    for r in resources(plan, "grants:Grants"):
        target = next(v for k, v in r["inputs"].items() if k != "grants")
        out.setdefault(target, {}).update({g["principal"]: g["privileges"] for g in r["inputs"]["grants"]})
    for r in resources(plan, "grant:Grant"):
        target = next(v for k, v in r["inputs"].items() if k not in ("principal", "privileges"))
        out.setdefault(target, {})[r["inputs"]["principal"]] = r["inputs"]["privileges"]
    return out


def test_the_clusters_identity_can_read_and_write_what_its_workloads_use(plan_of):
    grants = _grants(plan_of("prod"))
    assert grants["ai_prod"][SP] == ["USE_CATALOG"]
    assert all(grants[f"ai_prod.{s}"][SP] == ["USE_SCHEMA"] for s in ("models", "processed", "raw", "vector_index"))
    assert grants["ai_prod.models.hf_cache"][SP] == grants["ai_prod.models.checkpoints"][SP] == [
        "READ_VOLUME", "WRITE_VOLUME"]
    assert grants["ai_prod.processed.datasets"][SP] == ["READ_VOLUME"]


def test_grant_chains_are_completed(plan_of):
    grants = _grants(plan_of("prod"))
    # data-engineers were granted privileges on the raw schema only: they also need USE_CATALOG
    assert grants["ai_prod"]["data-engineers"] == ["USE_CATALOG"]
    assert grants["ai_prod.raw"]["data-engineers"] == ["USE_SCHEMA", "READ_VOLUME", "WRITE_VOLUME"]


def test_a_volume_grant_gets_its_schema(write_stack, capsys):
    code, out, _ = run_cli(capsys, "preview", "--json", "--stack", _stack(write_stack, unity_catalog={"grants": [
        {"principal": "readers", "privileges": ["READ_VOLUME"], "securable": "processed.datasets"}]}))
    plan = json.loads(out)
    grants = _grants(plan)
    assert code == 0 and grants["ai_test"]["readers"] == ["USE_CATALOG"] and grants["ai_test.processed"][
        "readers"] == ["USE_SCHEMA"]


def test_a_volume_grant_needs_no_use_schema_its_principal_holds_another_way(write_stack, capsys):
    # USE_SCHEMA on the catalog reaches every schema, ALL_PRIVILEGES on the schema holds it: none is added there
    code, out, _ = run_cli(capsys, "preview", "--json", "--stack", _stack(write_stack, unity_catalog={"grants": [
        {"principal": "readers", "privileges": ["USE_CATALOG", "USE_SCHEMA"]},
        {"principal": "readers", "privileges": ["READ_VOLUME"], "securable": "processed.datasets"},
        {"principal": "owners", "privileges": ["ALL_PRIVILEGES"], "securable": "raw"},
        {"principal": "owners", "privileges": ["WRITE_VOLUME"], "securable": "raw.corpus"}]}))
    grants = _grants(json.loads(out))
    assert code == 0
    assert grants["ai_test"]["readers"] == ["USE_CATALOG", "USE_SCHEMA"] and "readers" not in grants[
        "ai_test.processed"] and grants["ai_test.processed.datasets"]["readers"] == ["READ_VOLUME"]
    assert grants["ai_test"]["owners"] == ["USE_CATALOG"] and grants["ai_test.raw"]["owners"] == ["ALL_PRIVILEGES"]
    assert grants["ai_test.raw.corpus"]["owners"] == ["WRITE_VOLUME"]


# --- mock ids shaped like the provider's -------------------------------------------------------------------------

def test_unity_catalog_ids_are_names_as_the_provider_makes_them(plan_of):
    plan = plan_of("dev")
    ids = {r["type"].rsplit(":", 1)[-1]: r["id"] for r in plan["resources"] if r["name"].endswith(
        ("uc-catalog", "schema-models", "volume-models-hf_cache"))}
    assert ids == {"Catalog": "ai_dev", "Schema": "ai_dev.models", "Volume": "ai_dev.models.hf_cache"}
    assert "ai_dev.models.hf_cache" in _grants(plan)


# --- 2. every generated policy admits every cluster of its stack, job clusters included -------------------------

def test_a_policy_limiting_autotermination_without_isoptional_refuses_job_clusters():
    definition = {"autotermination_minutes": {"type": "range", "minValue": 10, "maxValue": 120, "defaultValue": 60},
                  "cluster_type": {"type": "allowlist", "values": ["all-purpose", "job"]}}
    job_cluster = {"num_workers": 2, "spark_version": "17.3.x-gpu-ml-scala2.13"}
    refused = evaluate(definition, job_cluster, cluster_type="job")
    assert not refused.allowed and "cannot be set on a job cluster" in refused.violations[0].message
    assert evaluate(definition, job_cluster, cluster_type="all-purpose").allowed  # the default fills it in
    optional = {**definition, "autotermination_minutes": {**definition["autotermination_minutes"], "isOptional": True}}
    assert evaluate(optional, job_cluster, cluster_type="job").allowed


@pytest.mark.parametrize("stack", SHIPPED)
def test_generated_training_policies_are_met_by_the_training_jobs_cluster(stack, plan_of):
    plan = plan_of(stack)
    policies = {r["id"]: json.loads(r["inputs"]["definition"]) for r in resources(plan, "clusterPolicy:ClusterPolicy")}
    for job in resources(plan, "job:Job"):
        new = job["inputs"]["jobClusters"][0]["newCluster"]
        from dbx_ai_infra.dbxtypes.shape import shapes_of_resource

        (shape,) = shapes_of_resource(JOB, job["inputs"])
        assert evaluate_shape(policies[new["policyId"]], shape).allowed


# --- 7. dbus_per_hour ceilings leave headroom ---------------------------------------------------------------------

def test_dbu_ceilings_leave_ten_percent_headroom(plan_of):
    from dbx_ai_infra.gpucatalog import load_catalog
    from dbx_ai_infra.guardrails.stack import DBU_CEILING_HEADROOM

    plan = plan_of("dev")
    (policy,) = [r for r in resources(plan, "clusterPolicy:ClusterPolicy") if r["name"].endswith("inference")]
    ceiling = json.loads(policy["inputs"]["definition"])["dbus_per_hour"]["maxValue"]
    largest = load_catalog().get("g5.xlarge").dbu_per_hour * 3  # max_workers 2 + the driver
    assert DBU_CEILING_HEADROOM == 0.10 and ceiling == pytest.approx(largest * 1.1, abs=1e-3)
    shape = cluster_shape({"node_type_id": "g5.xlarge", "autoscale": {"min_workers": 1, "max_workers": 2}})
    definition = {"dbus_per_hour": {"type": "range", "maxValue": ceiling}}
    assert evaluate_shape(definition, shape, dbus_per_hour=largest * 1.05).allowed  # the workspace's table is higher


# --- 9. single-node form: the legacy form is emitted, both forms are admitted ------------------------------------

def test_the_dev_policy_admits_the_modern_single_node_form_too(plan_of):
    plan = plan_of("dev")
    (policy,) = [r for r in resources(plan, "clusterPolicy:ClusterPolicy") if r["name"].endswith("-dev")]
    definition = json.loads(policy["inputs"]["definition"])
    (dev,) = [r["inputs"] for r in resources(plan, "cluster:Cluster") if r["name"] == "dev-dev-cluster"]
    modern = {k: v for k, v in dev.items() if k not in ("sparkConf",)}
    modern.update({"isSingleNode": True, "kind": "CLASSIC_PREVIEW"})
    modern["customTags"] = {k: v for k, v in dev["customTags"].items() if k != "ResourceClass"}
    assert evaluate_shape(definition, cluster_shape(dev)).allowed
    assert evaluate_shape(definition, cluster_shape(modern)).allowed
    assert conformance(CLUSTER, modern) == []


# --- CPU driver and interconnect (what the seeds prescribe) --------------------------------------------------------

CPU_DRIVER = {
    "training": {"num_workers": 2, "driver": "cpu", "model": {"params_billions": 7, "precision": "fp16", "method": "lora"},
                 "job": {"python_file": "/Workspace/t.py"}, "all_purpose_cluster": True},
    "inference": {"driver": "cpu", "model": {"params_billions": 7, "precision": "fp16"}},
}


def test_a_cpu_driver_is_a_catalog_node_of_the_cloud_priced_and_admitted_by_the_policy(write_stack, capsys):
    from dbx_ai_infra.gpucatalog import load_catalog
    from dbx_ai_infra.pricing import load_prices

    code, out, _ = run_cli(capsys, "preview", "--json", "--stack", _stack(write_stack, **CPU_DRIVER))
    plan = json.loads(out)
    assert code == 0 and not [v for v in plan["violations"] if v["enforcement"] == "mandatory"]
    clusters = {r["name"]: r["inputs"] for r in plan["resources"] if r["type"] == CLUSTER}
    training, serving = clusters["test-training-cluster"], clusters["test-inference-cluster"]
    cpu = load_catalog().cpu_driver("aws")
    assert cpu is not None and cpu.gpu_count == 0
    assert training["driverNodeTypeId"] == cpu.node_type_id and training["nodeTypeId"] == "g5.xlarge"
    # no pool (a cluster on a pool takes its driver from it: tests/test_first_day_round3.py refuses a CPU driver there)
    assert serving["driverNodeTypeId"] == cpu.node_type_id and serving["nodeTypeId"] == "g5.xlarge"
    # priced with the driver's own figures: driver on demand, two spot workers
    entry = next(e for e in plan["cost"]["resources"].values() if e["name"] == "test-training-cluster")
    book = load_prices()
    gpu, rate = book.node("g5.xlarge"), book.usd_per_dbu("aws", "all_purpose")
    spot = book.node_spot("aws", "g5.xlarge")[0]
    driver = cpu.usd_per_hour_on_demand + cpu.dbu_per_hour * rate
    worker = gpu.usd_per_hour_on_demand * spot + gpu.dbu_per_hour * rate
    assert entry["driver_node_type_id"] == cpu.node_type_id and entry["hourly"] == pytest.approx(driver + 2 * worker)
    # the generated policies admit the stack's clusters, job cluster included
    policies = {r["id"]: json.loads(r["inputs"]["definition"]) for r in plan["resources"]
                if r["type"].endswith("ClusterPolicy")}
    from dbx_ai_infra.dbxtypes.shape import shapes_of_resource

    for r in plan["resources"]:
        for shape in shapes_of_resource(r["type"], r["inputs"]):
            assert evaluate_shape(policies[shape.props["policy_id"]], shape).allowed, r["name"]
    assert "driver m5.2xlarge (CPU)" in run_cli(capsys, "preview", "--stack", _stack(write_stack, **CPU_DRIVER))[1]


@pytest.mark.parametrize("section,words", [
    ({"driver": "cpu", "driver_node_type_id": "m5.large"}, "is not a CPU driver node type of aws"),
    ({"driver": "gpu", "driver_node_type_id": "m5.2xlarge"}, "is set but driver is gpu"),  # alone, it means cpu
])
def test_bad_driver_settings_exit_2(write_stack, capsys, section, words):
    inference = {**BASE_CONFIG["dbx-ai-infra:inference"], **section}
    code, _, err = run_cli(capsys, "check", "--stack", _stack(write_stack, inference=inference))
    assert code == 2 and "dbx-ai-infra:inference.driver_node_type_id" in err and words in err


def test_network_figures_carry_their_sources():
    from dbx_ai_infra.gpucatalog import load_catalog

    bandwidth_sources = {"karpenter_aws_bw", "msdocs_sizes", "msdocs_ib", "gcp_gpu_net", "g2_net_note",
                         "aws_capblocks", "torchx_aws", "aws_batch_gpu"}
    catalog = load_catalog()
    assert catalog.get("p4d.24xlarge").interconnect_gbps == 400 and catalog.get("g5.12xlarge").network_gbps == 40
    for node in catalog.nodes:
        if node.network_gbps is not None or node.interconnect_gbps is not None:
            assert bandwidth_sources & set(node.sources), node.node_type_id


def test_p3_is_being_retired_never_picked_while_a_current_node_fits_and_flagged_when_used():
    from dbx_ai_infra.gpucatalog import choose_node, load_catalog

    catalog = load_catalog()
    assert all(n.deprecated for n in catalog.nodes if n.node_type_id.startswith("p3"))
    # the v100 family on AWS is only P3: the sizer still answers, and the advisory rule says it is retiring
    assert choose_node(catalog, "aws", "v100", 10).node.node_type_id.startswith("p3")
    messages = rule_messages(RULES_BY_NAME["databricks-cluster-avoid-retiring-node-types"], CLUSTER,
                             {"nodeTypeId": "p3.2xlarge", "numWorkers": 1})
    assert messages and "is being retired" in messages[0]


# --- the SDK snapshot the rule reads is the pinned SDK's own types -------------------------------------------------

def test_the_sdk_type_snapshot_is_what_the_installed_databricks_sdk_says():
    """`dbx_ai_infra/dbxtypes/data/sdk_types.json` spares every run the SDK's import; regenerated from the SDK it must not
    differ (after an SDK upgrade: `make sdk-types`)."""
    from importlib.metadata import version

    from dbx_ai_infra.dbxtypes.sdk_snapshot import generate
    from dbx_ai_infra.dbxtypes.sdk_types import SNAPSHOT

    snapshot = json.loads(SNAPSHOT.read_text())
    assert snapshot["sdk_version"] == version("databricks-sdk")
    assert snapshot == generate(), "dbx_ai_infra/dbxtypes/data/sdk_types.json is stale: make sdk-types"


def test_the_snapshot_keeps_what_the_rule_needs_of_a_cluster():
    from databricks.sdk.service import catalog, compute

    from dbx_ai_infra.dbxtypes.sdk_types import enum_values, fields_of

    assert set(fields_of("compute.ClusterSpec")) == {f.name for f in __import__("dataclasses").fields(
        compute.ClusterSpec)}
    assert fields_of("compute.ClusterSpec")["aws_attributes"] == {"type": "compute.AwsAttributes"}
    assert fields_of("compute.AwsAttributes")["availability"] == {"enum": "compute.AwsAvailability"}
    assert set(enum_values("catalog.Privilege")) == {p.value for p in catalog.Privilege}
