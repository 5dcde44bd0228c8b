"""The policy pack as the Pulumi CLI runs it: a subprocess serving pulumirpc.Analyzer over gRPC.

The server starts once per module (``python -u -m pulumi.policy <engine> .`` from ``policies/``); every Analyze
answer must equal what `evaluate_plan` finds offline for the same resources.
"""

from __future__ import annotations

import copy
import selectors
import subprocess
import sys
import tempfile
from pathlib import Path

import grpc
import pytest
from conftest import SHIPPED
from google.protobuf import empty_pb2
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Struct
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from dbx_ai_infra.policies.registry import ALL_RULES, RULES_BY_NAME, evaluate_plan

POLICIES_DIR = Path(__file__).resolve().parent.parent / "policies"
STARTUP_TIMEOUT_S = 60
PREFIX = "urn:pulumi:dev::dbx-ai-infra::"

GOOD_INFERENCE = {
    "clusterName": "dev-inference", "sparkVersion": "17.3.x-gpu-ml-scala2.13", "nodeTypeId": "g5.2xlarge",
    "autoscale": {"minWorkers": 2.0, "maxWorkers": 8.0},
    "awsAttributes": {"availability": "SPOT_WITH_FALLBACK", "firstOnDemand": 3.0},
    "autoterminationMinutes": 60.0, "dataSecurityMode": "SINGLE_USER",
    "customTags": {"workload": "inference", "workload_type": "inference", "cost_center": "ai-team",
                   "gpu_memory_need_gb": "16.8"},
    "sparkEnvVars": {"HF_HOME": "/Volumes/ml/models/hf", "HF_TOKEN": "{{secrets/ml/hf}}"},
    "libraries": [{"pypi": {"package": "vllm==0.6.3"}}],
}
BAD_INFERENCE = {
    "clusterName": "dev-bad", "sparkVersion": "13.3.x-gpu-ml-scala2.12", "nodeTypeId": "g5.2xlarge",
    "driverNodeTypeId": "g5.2xlarge", "numWorkers": 2.0, "autoscale": {"minWorkers": 2.0, "maxWorkers": 100.0},
    "azureAttributes": {"availability": "SPOT_AZURE", "spotBidMaxPrice": -1.0}, "autoterminationMinutes": 0.0,
    "dataSecurityMode": "WIDE_OPEN",
    "customTags": {"workload": "inference", "gpu_memory_need_gb": 60.0},
    "sparkEnvVars": {"HF_TOKEN": "hf_plaintext_value", "TRANSFORMERS_CACHE": "/dbfs/cache"},
    "libraries": [{"pypi": {"package": "transformers"}}],
}
NOTEBOOK = {
    "clusterName": "dev-notebook", "sparkVersion": "3.3.1", "nodeTypeId": "i3.xlarge",
    "numWorkers": 0.0, "autoterminationMinutes": 0.0,
    "sparkConf": {"spark.databricks.cluster.profile": "singleNode", "spark.sql.shuffle.partitions": "200"},
    "customTags": {"workload": "interactive", "cost_center": "ai-team"},
}
JOB = {
    "name": "dev-train",
    "tags": {"cost_center": "ai-team", "workload": "training"},
    "jobClusters": [
        {"jobClusterKey": "train", "newCluster": {
            "sparkVersion": "17.3.x-gpu-ml-scala2.13", "nodeTypeId": "g5.12xlarge", "numWorkers": 4.0,
            "runtimeEngine": "PHOTON",
            "awsAttributes": {"availability": "SPOT", "firstOnDemand": 1.0}}},
        {"jobClusterKey": "eval", "newCluster": {
            "sparkVersion": "17.3.x-gpu-ml-scala2.13", "instancePoolId": "pool-123", "nodeTypeId": "p3.2xlarge",
            "autoscale": {"minWorkers": 1.0}}},
    ],
    "tasks": [
        {"taskKey": "fit", "jobClusterKey": "train", "maxRetries": 2.0,
         "sparkPythonTask": {"pythonFile": "/Workspace/train.py", "parameters": ["--epochs", "3"]},
         "libraries": [{"pypi": {"package": "peft>=0.12"}}]},
        {"taskKey": "eval", "jobClusterKey": "eval",
         "sparkPythonTask": {"pythonFile": "/Workspace/eval.py"}},
        {"taskKey": "legacy", "jobClusterKey": "train",
         "sparkSubmitTask": {"parameters": ["--class", "com.acme.Export", "/Volumes/ml/jars/export.jar"]}},
    ],
}
GRANTS = {"catalog": "ml", "grants": [{"principal": "account users", "privileges": ["ALL_PRIVILEGES"]},
                                      {"principal": "ml-engineers", "privileges": ["USE_CATALOG"]}]}
POOL = {"instancePoolName": "dev-pool", "nodeTypeId": "g5.2xlarge", "idleInstanceAutoterminationMinutes": 15.0,
        "awsAttributes": {"availability": "SPOT"}, "customTags": {"workload_type": "inference"}}


def _resource(kind: str, rtype: str, name: str, inputs: dict) -> dict:
    return {"urn": f"{PREFIX}{rtype}::{name}", "type": rtype, "name": name, "inputs": inputs}


PLAN = {
    "stack": "dev",
    "project": "dbx-ai-infra",
    "resources": [
        _resource("cluster", "databricks:index/cluster:Cluster", "dev-inference", GOOD_INFERENCE),
        _resource("cluster", "databricks:index/cluster:Cluster", "dev-bad", BAD_INFERENCE),
        _resource("cluster", "databricks:index/cluster:Cluster", "dev-notebook", NOTEBOOK),
        {**_resource("job", "databricks:index/job:Job", "dev-train", JOB), "id": "dev-train-id"},
        _resource("grants", "databricks:index/grants:Grants", "dev-grants", GRANTS),
        _resource("pool", "databricks:index/instancePool:InstancePool", "dev-pool", POOL),
        # a production endpoint on a type too small for its model, scaling to zero, with no inference table,
        # no rate limit and no cost_center tag (camelCase, as the engine hands it over)
        _resource("endpoint", "databricks:index/modelServing:ModelServing", "dev-chat", {
            "name": "chat",
            "config": {"servedEntities": [{"entityName": "ai.models.chat", "entityVersion": "3",
                                           "workloadType": "GPU_SMALL", "minProvisionedConcurrency": 0,
                                           "maxProvisionedConcurrency": 4, "scaleToZeroEnabled": True}]},
            "aiGateway": {"usageTrackingConfig": {"enabled": True}},
            "tags": [{"key": "workload", "value": "genai"}, {"key": "dbx_cloud", "value": "aws"},
                     {"key": "dbx_stack", "value": "prod"}, {"key": "gpu_memory_need_gb", "value": "16.8"}]}),
        # a provisioned-throughput endpoint (issue 55) provisioning no model units
        _resource("pt", "databricks:index/modelServingProvisionedThroughput:ModelServingProvisionedThroughput",
                  "dev-assistant", {"name": "assistant", "budgetPolicyId": "policy-1", "config": {"servedEntities": [
                      {"entityName": "system.ai.llama-4-maverick", "entityVersion": "1", "provisionedModelUnits": 0}]},
                      "aiGateway": {"usageTrackingConfig": {"enabled": True},
                                    "inferenceTableConfig": {"catalogName": "ai", "schemaName": "serving",
                                                             "enabled": True},
                                    "rateLimits": [{"calls": 60, "key": "user", "renewalPeriod": "minute"}]},
                      "tags": [{"key": "workload", "value": "genai"}, {"key": "cost_center", "value": "ai"}]}),
        _resource("token", "databricks:index/token:Token", "dev-token", {"comment": "ci"}),  # never expires
        _resource("notebook", "databricks:index/notebook:Notebook", "dev-nb", {"path": "/Shared/x", "source": "x.py"}),
        # the job is owned by a person (judged with the plan: the owner rule reads the job's Permissions)
        _resource("permissions", "databricks:index/permissions:Permissions", "dev-train-perm", {
            "jobId": "dev-train-id", "accessControls": [{"userName": "ana@acme.com", "permissionLevel": "IS_OWNER"}]}),
    ],
}


@pytest.fixture(scope="module")
def stub():
    with tempfile.TemporaryFile(mode="w+") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:0", "."],
            cwd=POLICIES_DIR, stdout=subprocess.PIPE, stderr=stderr, text=True,
        )
        channel = None
        try:
            selector = selectors.DefaultSelector()
            selector.register(proc.stdout, selectors.EVENT_READ)
            line = proc.stdout.readline() if selector.select(STARTUP_TIMEOUT_S) else ""
            selector.close()
            if not line.strip().isdigit():
                stderr.seek(0)
                pytest.fail(f"policy pack did not print its port (got {line!r}); stderr:\n{stderr.read()}")
            channel = grpc.insecure_channel(f"127.0.0.1:{line.strip()}")
            grpc.channel_ready_future(channel).result(timeout=STARTUP_TIMEOUT_S)
            analyzer = analyzer_pb2_grpc.AnalyzerStub(channel)
            analyzer.ConfigureStack(analyzer_pb2.AnalyzerStackConfigureRequest(
                stack="dev", project="dbx-ai-infra", organization="organization", dry_run=True))
            yield analyzer
        finally:
            if channel is not None:
                channel.close()
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()


def _level(value: int) -> str:
    return analyzer_pb2.EnforcementLevel.Name(value).lower()


def _property_dependencies(res: dict, plan: dict) -> dict:
    """What the Pulumi engine sends with a resource: for a Permissions, the resource its target id comes from (here
    found by the id the offline engine recorded)."""
    by_id = {r.get("id"): r["urn"] for r in plan["resources"] if r.get("id")}
    return {key: analyzer_pb2.AnalyzerPropertyDependencies(urns=[by_id[res["inputs"][key]]])
            for key in ("clusterId", "jobId") if res["inputs"].get(key) in by_id}


def analyze_plan(analyzer, plan: dict) -> list[tuple[str, str, str, str]]:
    """The pack's verdict on a plan as the CLI asks for it: each resource (Analyze), then the stack (AnalyzeStack:
    the rules judged with their plan, and the budget); sorted, as the offline verdict is compared sorted."""
    out = []
    for res in plan["resources"]:
        request = analyzer_pb2.AnalyzeRequest(type=res["type"], urn=res["urn"], name=res["name"],
                                              properties=ParseDict(res["inputs"], Struct()))
        for d in analyzer.Analyze(request).diagnostics:
            out.append((d.policyName, d.urn, _level(d.enforcementLevel), d.message))
    stack = analyzer_pb2.AnalyzeStackRequest(resources=[
        analyzer_pb2.AnalyzerResource(type=r["type"], urn=r["urn"], name=r["name"],
                                      properties=ParseDict(r["inputs"], Struct()),
                                      propertyDependencies=_property_dependencies(r, plan))
        for r in plan["resources"]])
    for d in analyzer.AnalyzeStack(stack).diagnostics:
        out.append((d.policyName, d.urn, _level(d.enforcementLevel), d.message))
    return sorted(out)


def expected_diagnostics(plan: dict, config: dict | None = None) -> list[tuple[str, str, str, str]]:
    # The SDK prefixes each reported message with the policy description and a newline.
    return sorted((v.policy, v.urn, v.enforcement, f"{RULES_BY_NAME[v.policy].description}\n{v.message}")
                  for v in evaluate_plan(plan, config))


def test_analyzer_info_lists_all_rules(stub) -> None:
    info = stub.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "dbx-ai-infra-policies"
    assert [p.name for p in info.policies] == [r.name for r in ALL_RULES] + ["databricks-stack-budget"]
    for policy, rule in zip(info.policies[:-1], ALL_RULES, strict=True):
        assert policy.description == rule.description
        assert _level(policy.enforcementLevel) == rule.enforcement
        assert policy.remediation_steps == rule.remediation
        schema = MessageToDict(policy.configSchema.properties)
        assert {k: v["default"] for k, v in schema.items()} == {
            k: list(v) if isinstance(v, tuple) else v for k, v in rule.thresholds.items()}


def test_analyze_matches_evaluate_plan(stub) -> None:
    got = analyze_plan(stub, PLAN)
    expected = expected_diagnostics(PLAN)
    assert got == expected
    policies = {p for p, *_ in got}
    # the plan exercises every rule that judges what the project generates
    assert policies == {rule.name for rule in ALL_RULES if "pulumi" in rule.sources}  # the pack judges resources
    assert {u for _, u, *_ in got} == {r["urn"] for r in PLAN["resources"][0:9]}
    # the good cluster meets every rule but the one judged with the plan (no Permissions names it)
    assert {p for p, u, *_ in got if u == PLAN["resources"][0]["urn"]} == {"databricks-resource-require-access-control"}
    assert all("hf_plaintext_value" not in m for *_, m in got)


def test_analyze_stack_judges_access_with_the_whole_stack(stub) -> None:
    """The stack validation sees the Permissions: a cluster one names gets no access finding; without it, it does."""
    access = "databricks-resource-require-access-control"
    granted = copy.deepcopy(PLAN)
    bad = granted["resources"][1]
    bad["id"] = "dev-bad-id"
    granted["resources"].append(_resource("permissions", "databricks:index/permissions:Permissions", "dev-bad-perm", {
        "clusterId": "dev-bad-id", "accessControls": [{"groupName": "ml", "permissionLevel": "CAN_ATTACH_TO"}]}))
    flagged = {u for p, u, *_ in analyze_plan(stub, PLAN) if p == access}
    assert bad["urn"] in flagged
    assert {u for p, u, *_ in analyze_plan(stub, granted) if p == access} == flagged - {bad["urn"]}
    assert analyze_plan(stub, granted) == expected_diagnostics(granted)


def test_configure_changes_levels_and_thresholds(stub) -> None:
    config = {
        "databricks-cluster-configure-worker-bounds": {"enforcementLevel": "advisory", "max_workers_cap": 200},
        "databricks-resource-require-tags": {"enforcementLevel": "disabled"},
        "databricks-cluster-require-autotermination": {"enforcementLevel": "mandatory",
                                                       "max_autotermination_minutes": 20},
    }
    request = analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={
        name: analyzer_pb2.PolicyConfig(
            enforcementLevel=analyzer_pb2.EnforcementLevel.Value(value["enforcementLevel"].upper()),
            properties=ParseDict({k: v for k, v in value.items() if k != "enforcementLevel"}, Struct()))
        for name, value in config.items()})
    stub.Configure(request)
    try:
        got = analyze_plan(stub, PLAN)
        assert got == expected_diagnostics(PLAN, config)
        assert got != expected_diagnostics(PLAN)
        assert not any(p == "databricks-resource-require-tags" for p, *_ in got)
    finally:
        stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest())
    assert analyze_plan(stub, PLAN) == expected_diagnostics(PLAN)


@pytest.mark.parametrize("stack", SHIPPED)
def test_recorded_stack_plans_get_the_offline_verdict_over_grpc(stub, plan_of, stack) -> None:
    """A plan recorded by the offline engine, sent resource by resource as the CLI sends it: same diagnostics."""
    plan = copy.deepcopy(plan_of(stack))
    assert analyze_plan(stub, plan) == expected_diagnostics(plan)
    # and a broken variant of the same plan: the clusters lose their on-demand base (a pool-backed one has none of
    # its own) and their cost_center tag
    for res in plan["resources"]:
        if res["type"] == "databricks:index/cluster:Cluster":
            res["inputs"]["customTags"].pop("cost_center")
        block = next((k for k in ("awsAttributes", "azureAttributes", "gcpAttributes") if k in res["inputs"]), None)
        if res["type"] == "databricks:index/cluster:Cluster" and block:
            res["inputs"][block]["availability"] = {"awsAttributes": "SPOT", "azureAttributes": "SPOT_AZURE",
                                                    "gcpAttributes": "PREEMPTIBLE_GCP"}[block]
    got = analyze_plan(stub, plan)
    assert got == expected_diagnostics(plan)
    assert any(level == "mandatory" for _, _, level, _ in got)


def test_rules_still_run_when_ids_are_unknown_during_preview(stub, plan_of) -> None:
    """In a real preview of a new stack the pool and policy ids are unknown; the other fields are still judged."""
    from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

    from dbx_ai_infra.policies.pack import UNKNOWN

    plan = copy.deepcopy(plan_of("prod"))
    (cluster,) = [r for r in plan["resources"] if r["name"] == "prod-inference-cluster"]
    cluster["inputs"].update(instancePoolId=UNKNOWN_STRING_VALUE, driverInstancePoolId=UNKNOWN_STRING_VALUE,
                             policyId=UNKNOWN_STRING_VALUE)
    del cluster["inputs"]["customTags"]["cost_center"]
    got = analyze_plan(stub, {"resources": [cluster]})
    assert ("databricks-resource-require-tags", cluster["urn"], "mandatory") in {g[:3] for g in got}
    assert not any("during preview" in message for *_, message in got)
    as_offline = copy.deepcopy(cluster)
    as_offline["inputs"].update(instancePoolId=UNKNOWN, driverInstancePoolId=UNKNOWN, policyId=UNKNOWN)
    assert got == expected_diagnostics({"resources": [as_offline]})


def test_a_config_entry_without_enforcement_level_keeps_the_policys_level(stub) -> None:
    """As the CLI does it (applyConfig): an entry without enforcementLevel is sent with the level the pack declared
    in GetAnalyzerInfo, so a mandatory policy stays mandatory; the offline reader agrees."""
    from dbx_ai_infra.policies.registry import load_policy_config

    bounds = "databricks-cluster-configure-worker-bounds"
    config = {bounds: {"max_workers_cap": 4}}
    declared = {p.name: p.enforcementLevel for p in stub.GetAnalyzerInfo(empty_pb2.Empty()).policies}
    assert _level(declared[bounds]) == "mandatory"
    stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={
        bounds: analyzer_pb2.PolicyConfig(enforcementLevel=declared[bounds],
                                          properties=ParseDict(config[bounds], Struct()))}))
    try:
        got = [g for g in analyze_plan(stub, PLAN) if g[0] == bounds]
        assert got and {level for _, _, level, _ in got} == {"mandatory"}
        assert got == [g for g in expected_diagnostics(PLAN, config) if g[0] == bounds]
    finally:
        stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest())
    assert load_policy_config(config).level(RULES_BY_NAME[bounds]) == "mandatory"


def test_a_stack_rule_is_a_stack_validation_configured_like_any_policy(stub) -> None:
    """A stack rule the pack can judge (the budget: its limits in the pack config) answers AnalyzeStack, failing
    over its limit and passing under it, on the stack (no resource URN); disabled like any policy."""
    budget = "databricks-stack-budget"
    one_cluster = {"resources": [PLAN["resources"][0]]}

    def judged(config: dict, level: str = "MANDATORY") -> list[tuple[str, str, str, str]]:
        stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={budget: analyzer_pb2.PolicyConfig(
            enforcementLevel=analyzer_pb2.EnforcementLevel.Value(level), properties=ParseDict(config, Struct()))}))
        try:
            return [g for g in analyze_plan(stub, one_cluster) if g[0] == budget]
        finally:
            stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest())

    ((_, urn, level, message),) = judged({"monthly_expected_max": 1})
    assert urn == "" and level == "mandatory" and "over budget.monthly_expected_max $1.00" in message
    assert judged({"monthly_expected_max": 10 ** 6}) == []
    assert judged({"monthly_expected_max": 1}, "DISABLED") == []
    assert [g for g in analyze_plan(stub, one_cluster) if g[0] == budget] == []  # no limit configured
