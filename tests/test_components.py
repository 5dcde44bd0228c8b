"""Each component's resources, asserted on the inputs the program registers, per cloud."""

from __future__ import annotations

import pytest
from conftest import cluster, config_for, resources

from dbx_ai_infra.components import DevClusterArgs, InferenceClusterArgs, TrainingClusterArgs
from dbx_ai_infra.engine.engine import run_program
from dbx_ai_infra.gpucatalog.runtime_libraries import library_table
from dbx_ai_infra.stackspec import load_stack

BLOCKS = {"aws": "awsAttributes", "azure": "azureAttributes", "gcp": "gcpAttributes"}
FALLBACK = {"aws": "SPOT_WITH_FALLBACK", "azure": "SPOT_WITH_FALLBACK_AZURE", "gcp": "PREEMPTIBLE_WITH_FALLBACK_GCP"}
ON_DEMAND = {"aws": "ON_DEMAND", "azure": "ON_DEMAND_AZURE", "gcp": "ON_DEMAND_GCP"}


@pytest.fixture(scope="module", params=["aws", "azure", "gcp"])
def cloud_plan(request, tmp_path_factory):
    import yaml

    cloud = request.param
    path = tmp_path_factory.mktemp(cloud) / f"Pulumi.{cloud}-test.yaml"
    path.write_text(yaml.safe_dump({"config": config_for(cloud)}))
    return cloud, run_program(load_stack(str(path))).to_json()


def only_own_block(inputs: dict, cloud: str) -> dict:
    present = [b for b in BLOCKS.values() if b in inputs]
    assert present == [BLOCKS[cloud]], f"attribute blocks {present} on a {cloud} cluster"
    return inputs[BLOCKS[cloud]]


def test_training_cluster_is_fixed_spot_with_fallback_and_driver_on_demand(cloud_plan):
    cloud, plan = cloud_plan
    c = cluster(plan, "training")
    assert c["numWorkers"] == 2 and "autoscale" not in c
    attrs = only_own_block(c, cloud)
    assert attrs["availability"] == FALLBACK[cloud]
    assert attrs["firstOnDemand"] >= 1
    assert "-gpu-ml-" in c["sparkVersion"]
    # the current access-mode names (issue 52 item 11; provider docs, resources/cluster.md)
    assert (c["kind"], c["dataSecurityMode"], c["useMlRuntime"], c["singleUserName"]) == (
        "CLASSIC_PREVIEW", "DATA_SECURITY_MODE_DEDICATED", True, "ml@example.com")
    # the catalog is the stack's own, ai_<stack> (issue 52: one metastore serves every stack of a region)
    assert c["sparkEnvVars"]["CHECKPOINT_DIR"].startswith(f"/Volumes/ai_{cloud}_test/models/checkpoints/")
    assert c["autoterminationMinutes"] == 60


def test_training_job_resumes_from_checkpoints_with_retries(cloud_plan):
    cloud, plan = cloud_plan
    (job,) = resources(plan, "job:Job")
    inputs = job["inputs"]
    (job_cluster,) = inputs["jobClusters"]
    new = job_cluster["newCluster"]
    assert new["numWorkers"] == 2 and "autoscale" not in new
    assert only_own_block(new, cloud)["availability"] == FALLBACK[cloud]
    assert "autoterminationMinutes" not in new  # job clusters end with their run
    (task,) = inputs["tasks"]
    assert task["jobClusterKey"] == job_cluster["jobClusterKey"]
    # no time limit by default, so no retry_on_timeout either (it has no effect without one)
    assert task["maxRetries"] == 3 and "retryOnTimeout" not in task and "timeoutSeconds" not in task
    assert inputs["runAs"] == {"userName": "ml@example.com"}  # the identity its dedicated cluster belongs to
    params = task["sparkPythonTask"]["parameters"]
    assert params[params.index("--checkpoint-dir") + 1] == new["sparkEnvVars"]["CHECKPOINT_DIR"]
    assert "--resume-from-latest" in params
    assert inputs["maxConcurrentRuns"] == 1


def test_inference_cluster_autoscales_over_an_on_demand_base(cloud_plan):
    cloud, plan = cloud_plan
    c = cluster(plan, "inference")
    assert c["autoscale"] == {"minWorkers": 2, "maxWorkers": 6}
    assert "numWorkers" not in c
    attrs = only_own_block(c, cloud)
    assert attrs["firstOnDemand"] == 3  # the driver plus the two base workers
    assert attrs["availability"] == FALLBACK[cloud]
    # the seed's 10 idle minutes scale idle workers down to the base; the whole cluster stops after an idle hour
    # (issue 52: the base stayed up the whole month by default, whether anyone used it or not)
    assert c["sparkConf"]["spark.databricks.aggressiveWindowDownS"] == "600"
    assert c["autoterminationMinutes"] == 60
    assert c["sparkEnvVars"]["HF_HOME"] == f"/Volumes/ai_{cloud}_test/models/hf_cache"


def test_dev_cluster_is_single_node_on_demand_with_cache_on_a_volume(cloud_plan):
    cloud, plan = cloud_plan
    c = cluster(plan, "interactive")
    assert c["numWorkers"] == 0
    # one node by is_single_node with kind CLASSIC_PREVIEW: the legacy single-node settings are not sent (the API
    # refuses spark.databricks.cluster.profile beside an access mode; databricks/databricks-sdk-py issue 881)
    assert (c["kind"], c["isSingleNode"], c["dataSecurityMode"]) == ("CLASSIC_PREVIEW", True,
                                                                     "DATA_SECURITY_MODE_DEDICATED")
    assert c["sparkConf"] == {"spark.sql.shuffle.partitions": "8"}
    assert "ResourceClass" not in c["customTags"]
    assert c["autoterminationMinutes"] == 30
    assert c["sparkEnvVars"]["HF_HOME"].startswith("/Volumes/") and "/dbfs" not in c["sparkEnvVars"]["HF_HOME"]
    assert only_own_block(c, cloud)["availability"] == ON_DEMAND[cloud]


def test_node_type_follows_family_and_model(cloud_plan):
    cloud, plan = cloud_plan
    c = cluster(plan, "inference")
    expected = {"aws": "g5.xlarge", "azure": "Standard_NV36ads_A10_v5", "gcp": "g2-standard-4"}[cloud]
    assert c["nodeTypeId"] == c["driverNodeTypeId"] == expected
    assert c["customTags"]["gpu_memory_need_gb"] == "16.8"


def test_every_taggable_resource_carries_the_stack_tags(cloud_plan):
    _, plan = cloud_plan
    for r in plan["resources"]:
        inputs = r["inputs"]
        tags = inputs.get("customTags") or inputs.get("tags") or inputs.get("properties")
        if r["type"].startswith("databricks:index/") and r["type"].split(":")[-1] in (
                "Cluster", "Job", "InstancePool", "Catalog", "Schema"):
            assert tags["workload"] == "genai" and tags["cost_center"] == "ai-team", r["name"]
        for jc in inputs.get("jobClusters", []):
            assert jc["newCluster"]["customTags"]["cost_center"] == "ai-team"


def test_children_are_parented_to_their_component(cloud_plan):
    _, plan = cloud_plan
    by_urn = {r["urn"]: r for r in plan["resources"]}
    for r in resources(plan, "cluster:Cluster"):
        parent = by_urn[r["parent"]]
        assert parent["type"] in {"dbx-ai-infra:compute:TrainingCluster", "dbx-ai-infra:compute:InferenceCluster",
                                  "dbx-ai-infra:compute:DevCluster"}
        assert r["urn"].split("::")[2] == f"{parent['type']}$databricks:index/cluster:Cluster"
        assert r["name"] == f"{parent['name']}-cluster"


def test_unity_catalog_layout_volumes_and_paths(plan_of):
    plan = plan_of("prod")
    (catalog,) = resources(plan, "catalog:Catalog")
    assert catalog["inputs"]["name"] == "ai_prod"
    schemas = {r["inputs"]["name"] for r in resources(plan, "schema:Schema")}
    # serving: the inference tables; ops: the GPU collector's samples; platform: the code the stack runs
    assert schemas == {"raw", "processed", "models", "vector_index", "serving", "ops", "platform"}
    volumes = {(r["inputs"]["schemaName"], r["inputs"]["name"]) for r in resources(plan, "volume:Volume")}
    assert {("raw", "corpus"), ("models", "hf_cache"), ("models", "checkpoints"),
            ("vector_index", "indexes"), ("processed", "datasets"), ("ops", "telemetry"),
            ("platform", "code")} == volumes
    assert all(r["inputs"]["volumeType"] == "MANAGED" for r in resources(plan, "volume:Volume"))
    assert plan["outputs"]["volume_paths"]["models.checkpoints"] == "/Volumes/ai_prod/models/checkpoints"
    assert plan["outputs"]["checkpoint_dir"] == "/Volumes/ai_prod/models/checkpoints/prod-training"


def test_grants_are_per_principal_except_on_the_code_volume_the_stack_owns_entirely(plan_of):
    """Issue 52, item 3: a databricks.Grants is authoritative (the next `pulumi up` removes the grants people added by
    hand), so only the code Volume and its schema, which only the deployer may write, get one."""
    plan = plan_of("prod")
    grants = resources(plan, "grants:Grants")
    assert sorted(next(k for k in g["inputs"] if k != "grants") for g in grants) == ["schema", "volume"]
    catalog_grants = {g["inputs"]["principal"]: g["inputs"]["privileges"] for g in resources(plan, "grant:Grant")
                      if g["inputs"].get("catalog") == "ai_prod"}
    sp = "6f1c2b8e-4d3a-4b7e-9c21-0a5e8d7f3b64"
    assert catalog_grants == {sp: ["USE_CATALOG"], "data-engineers": ["USE_CATALOG"],  # completed: raw
                              "ml-engineers": ["USE_CATALOG"],
                              "ml-serving": ["USE_CATALOG"]}  # the inference cluster's group: its identity


def test_pool_backed_cluster_takes_node_and_availability_from_an_on_demand_pool(plan_of):
    plan = plan_of("prod")
    (pool,) = resources(plan, "instancePool:InstancePool")
    p = pool["inputs"]
    assert p["awsAttributes"] == {"availability": "ON_DEMAND"}
    assert p["preloadedSparkVersions"] == ["17.3.x-gpu-ml-scala2.13"]  # prod's runtime
    assert p["minIdleInstances"] == 1 and p["maxCapacity"] == 12 and p["idleInstanceAutoterminationMinutes"] == 20
    assert p["customTags"]["workload_type"] == "inference" and p["nodeTypeId"] == "g5.xlarge"
    c = cluster(plan, "inference")
    assert c["instancePoolId"] == c["driverInstancePoolId"] == pool["id"]
    assert "nodeTypeId" not in c and "driverNodeTypeId" not in c
    assert not any(b in c for b in BLOCKS.values())


def test_prod_training_uses_a100_sized_for_13b_full_fine_tune(plan_of):
    plan = plan_of("prod")
    # prod's training has a job, so it runs on the job's compute alone: no all-purpose 3 x p4d cluster idles beside it
    assert not [r for r in resources(plan, "cluster:Cluster")
                if r["inputs"]["customTags"]["workload_type"] == "training"]
    (job,) = resources(plan, "job:Job")
    ((job_cluster,),) = [job["inputs"]["jobClusters"]]
    c = job_cluster["newCluster"]
    assert c["nodeTypeId"] == "p4d.24xlarge"  # 13B x 16 bytes = 208 GB > the 8 x 24 GB of g5.48xlarge
    assert c["customTags"]["gpu_memory_need_gb"] == "208"
    (task,) = job["inputs"]["tasks"]
    pins = library_table().runtimes["17.3"].pins  # prod (17.3 LTS ML) names them bare: the runtime's pins
    assert [lib["pypi"]["package"] for lib in task["libraries"]] == [f"transformers=={pins['transformers']}",
                                                                      f"peft=={pins['peft']}"]


ARGS = dict(cloud="aws", spark_version="17.3.x-gpu-ml-scala2.13", node_type_id="g5.xlarge",
            single_user_name="u", tags={"workload": "w", "cost_center": "c"}, autotermination_minutes=30)


@pytest.mark.parametrize("make, message", [
    (lambda: TrainingClusterArgs(**ARGS, num_workers=0, spot=True, first_on_demand=1, checkpoint_dir="/Volumes/a/b/c"),
     "num_workers must be >= 1"),
    (lambda: TrainingClusterArgs(**ARGS, num_workers=2, spot=True, first_on_demand=0, checkpoint_dir="/Volumes/a/b/c"),
     "driver is on-demand"),
    (lambda: TrainingClusterArgs(**ARGS, num_workers=2, spot=True, first_on_demand=1, checkpoint_dir="/dbfs/ckpt"),
     "Unity Catalog Volume path"),
    (lambda: InferenceClusterArgs(**ARGS, min_workers=5, max_workers=2, spot_above_base=True, scale_down_minutes=10),
     "the API needs max_workers above min_workers"),
    # the same range the spec and the worker-bounds rule refuse: the API needs max above min
    (lambda: InferenceClusterArgs(**ARGS, min_workers=2, max_workers=2, spot_above_base=True, scale_down_minutes=10),
     "max_workers 2 <= min_workers 2"),
    (lambda: InferenceClusterArgs(**ARGS, min_workers=0, max_workers=2, spot_above_base=True, scale_down_minutes=10),
     "min_workers must be at least 1"),
    (lambda: InferenceClusterArgs(**ARGS, min_workers=1, max_workers=2, spot_above_base=True, scale_down_minutes=11),
     "scale_down_minutes must be 1..10"),
    (lambda: DevClusterArgs(**ARGS, shuffle_partitions=8, model_cache_dir="/dbfs/hf"), "/Volumes/"),
    (lambda: DevClusterArgs(**{**ARGS, "cloud": "oci"}, shuffle_partitions=8, model_cache_dir="/Volumes/a/b/c"),
     "cloud must be one of"),
])
def test_component_args_reject_unsafe_values(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_two_runs_of_the_program_over_one_stack_register_the_same_plan(stack: str) -> None:
    """The program under Pulumi's mocks is deterministic: what lets the test processes run it once per input
    (tests/conftest.py)."""
    loaded = load_stack(stack)
    assert run_program(loaded).to_json() == run_program(loaded).to_json()


def test_a_plan_the_tests_reuse_is_a_copy_that_a_test_cannot_change_for_the_next() -> None:
    from conftest import _run_once_per_input

    loaded = load_stack("dev")
    first = _run_once_per_input(loaded)
    expected = first.to_json()
    first.resources.clear()
    first.outputs["planted"] = 1
    assert _run_once_per_input(loaded).to_json() == expected
