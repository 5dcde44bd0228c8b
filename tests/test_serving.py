"""GPU Model Serving endpoints (issue 13): sizing per cloud, invalid pins, the component, the policies, the price
computed by hand, and the cluster-vs-endpoint comparison."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import config_for, resources

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.gpucatalog import memory_need_gb
from dbx_ai_infra.gpucatalog.serving import ServingSizingError, choose_serving_type, load_serving_catalog
from dbx_ai_infra.pricing import load_prices
from dbx_ai_infra.pricing.model import on_demand_node_hourly

SCALE = "databricks-serving-disallow-scale-to-zero-in-production"
FIT = "databricks-serving-require-fitting-workload-type"


def endpoint(**fields: Any) -> dict[str, Any]:
    # the stack creates catalog ai: the endpoint is its second run, once the model version is registered there
    return {"entity": "ai.models.llama_chat", "entity_version": "3", "model_registered": True,
            "model": {"params_billions": 7, "precision": "fp16"}, "rate_limit_per_user_per_minute": 60, **fields}


def serving(cloud: str = "aws", **endpoints: dict[str, Any]) -> dict[str, Any]:
    return config_for(cloud, serving={"endpoints": endpoints or {"chat": endpoint()}}, training=None, dev=None)


def run_json(capsys, *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


# --- sizing -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("cloud", "params", "expected"), [
    ("aws", 7, "GPU_MEDIUM"),       # 16.8 GB: one A10G (24 GB); GPU_SMALL (one T4, 16 GB) does not hold it
    ("azure", 7, "GPU_LARGE"),      # Azure has no GPU_MEDIUM: one A100 80GB
    ("gcp", 7, "GPU_MEDIUM"),       # one L4 (24 GB)
    # 168 GB: 8 x H100 (640 GB); GPU_MEDIUM_8 (8 x A10G, 192 GB) would hold it, but databricks-sdk's
    # ServingModelWorkloadType does not list it, so auto-sizing does not pick it
    ("aws", 70, "GPU_XLARGE_8"),
])
def test_the_smallest_workload_type_of_the_cloud_that_holds_the_model(cloud, params, expected):
    need = memory_need_gb(params, "fp16", "inference")
    assert need == pytest.approx(params * 2 * 1.2)
    assert choose_serving_type(load_serving_catalog(), cloud, need).workload_type == expected


def test_auto_sizing_picks_only_types_the_sdk_lists_and_a_pin_of_another_is_taken_with_a_warning(write_stack):
    from conftest import BASE_CONFIG

    from dbx_ai_infra.engine.pipeline import build
    from dbx_ai_infra.gpucatalog.serving import sdk_knows

    assert not sdk_knows("GPU_MEDIUM_8") and sdk_knows("GPU_XLARGE_8")
    # Azure lists GPU_LARGE_2 and GPU_LARGE_8, which the SDK does not: a 70B model fits none it lists
    with pytest.raises(ServingSizingError, match="no GPU workload type of Model Serving on azure holds 168 GB"):
        choose_serving_type(load_serving_catalog(), "azure", 168.0)
    pinned = choose_serving_type(load_serving_catalog(), "aws", 168.0, "GPU_MEDIUM_8")
    assert pinned.workload_type == "GPU_MEDIUM_8"  # a stack may pin it
    config = {**BASE_CONFIG, "dbx-ai-infra:serving": {"endpoints": {"big": {
        "entity": "ml.models.chat", "entity_version": "1", "model": {"params_billions": 70, "precision": "fp16"},
        "workload_type": "GPU_MEDIUM_8"}}}}
    built = build(str(write_stack(config)))
    assert any("GPU_MEDIUM_8 is not in databricks-sdk's ServingModelWorkloadType" in n for n in built.notes)


def test_a_model_no_type_holds_is_refused():
    with pytest.raises(ServingSizingError, match="no GPU workload type of Model Serving on gcp holds 168 GB"):
        choose_serving_type(load_serving_catalog(), "gcp", 168.0)


def test_the_stack_sizes_its_endpoint_and_shows_the_sizing(write_stack, capsys):
    code, plan = run_json(capsys, "preview", "--stack", str(write_stack(serving("azure"))))
    assert code == 0
    (line,) = [z for z in plan["sizing"] if z["workload"] == "serving chat"]
    assert line["node_type_id"] == "GPU_LARGE" and line["need_gb"] == 16.8
    assert line["next_smaller"] == {"node_type_id": "GPU_SMALL", "gpu_memory_gb": 16.0, "passed_over": None}


@pytest.mark.parametrize(("cloud", "pin", "fragment"), [
    ("azure", "GPU_MEDIUM", "GPU_MEDIUM is not a GPU workload type of Model Serving on azure (Azure refuses it"),
    ("aws", "GPU_SMALL", "GPU_SMALL has 16 GB of GPU memory; the model needs 16.8 GB. Fix: use one that fits: "
                         "GPU_MEDIUM (1 x A10G, 24 GB)"),
    ("aws", "GPU_HUGE", "GPU_HUGE is not a GPU workload type of Model Serving on aws. Fix: use one that fits the "
                        "model (16.8 GB): GPU_MEDIUM"),
    ("gcp", "GPU_LARGE", "GPU_LARGE is not a GPU workload type of Model Serving on gcp"),
])
def test_an_invalid_pin_is_invalid_input_naming_the_field_and_the_types_that_fit(write_stack, capsys, cloud, pin,
                                                                                  fragment):
    stack = write_stack(serving(cloud, chat=endpoint(workload_type=pin)))
    assert main(["preview", "--stack", str(stack)]) == 2
    err = capsys.readouterr().err
    assert "dbx-ai-infra:serving.endpoints.chat.workload_type" in err and fragment in err


@pytest.mark.parametrize(("field", "value", "fragment"), [
    ("entity", "llama_chat", "serving.endpoints.chat.entity"),
    ("concurrency", {"min": 8, "max": 4}, "max 4 is below min 8"),
    ("rate_limit_per_user_per_minute", 0, "serving.endpoints.chat.rate_limit_per_user_per_minute"),
])
def test_other_invalid_endpoint_fields(write_stack, capsys, field, value, fragment):
    assert main(["check", "--stack", str(write_stack(serving(chat=endpoint(**{field: value}))))]) == 2
    assert fragment in capsys.readouterr().err


# --- the component ----------------------------------------------------------------------------------------------------

def test_the_component_registers_the_endpoint_its_gateway_and_permissions(plan_of):
    plan = plan_of("prod")
    (component,) = resources(plan, "dbx-ai-infra:serving:ServingEndpoint")
    (model_serving,) = resources(plan, "modelServing:ModelServing")
    assert model_serving["parent"] == component["urn"]
    inputs = model_serving["inputs"]
    assert inputs["name"] == "chat"
    (entity,) = inputs["config"]["servedEntities"]
    assert entity == {"entityName": "ai_prod.models.llama_chat", "entityVersion": "3", "workloadType": "GPU_MEDIUM",
                      "minProvisionedConcurrency": 4, "maxProvisionedConcurrency": 16, "scaleToZeroEnabled": False}
    gateway = inputs["aiGateway"]
    assert gateway["inferenceTableConfig"] == {"catalogName": "ai_prod", "schemaName": "serving",
                                               "tableNamePrefix": "chat", "enabled": True}
    assert gateway["usageTrackingConfig"] == {"enabled": True}
    assert gateway["rateLimits"] == [{"calls": 60, "key": "user", "renewalPeriod": "minute"}]
    tags = {t["key"]: t["value"] for t in inputs["tags"]}
    assert tags == {"workload": "genai", "cost_center": "ai-team", "env": "prod", "workload_type": "inference",
                         "dbx_cloud": "aws", "dbx_stack": "prod", "gpu_memory_need_gb": "16.8"}
    perms = [r for r in resources(plan, "permissions:Permissions") if "servingEndpointId" in r["inputs"]]
    assert [r["inputs"]["accessControls"] for r in perms] == [[
        {"groupName": "ml-serving", "permissionLevel": "CAN_QUERY"},
        {"groupName": "ml-engineers", "permissionLevel": "CAN_MANAGE"}]]
    assert perms[0]["inputs"]["servingEndpointId"] == "prod-serving-chat-endpoint-id"
    # the inference tables' schema is in the Unity Catalog layout, readable by the endpoint's managers
    (grant,) = [r for r in resources(plan, "grant:Grant") if r["inputs"].get("schema") == "ai_prod.serving"
                and r["inputs"]["principal"] == "ml-engineers"]
    assert grant["inputs"]["privileges"] == ["USE_SCHEMA", "SELECT"]


# --- policies ---------------------------------------------------------------------------------------------------------

def test_scale_to_zero_in_a_production_stack_fails_and_points_at_the_field(write_stack, capsys, tmp_path):
    prod = write_stack(serving(chat=endpoint(scale_to_zero=True)), name="prod")
    assert main(["check", "--stack", str(prod), "--format", "github"]) == 1
    (command,) = [c for c in capsys.readouterr().out.splitlines() if SCALE in c]
    line = int(command.split(",line=")[1].split(",")[0])
    assert prod.read_text().splitlines()[line - 1].strip() == "scale_to_zero: true"
    # the same endpoint in a stack the policy config does not call production passes
    dev = write_stack(serving(chat=endpoint(scale_to_zero=True)), name="staging")
    assert main(["check", "--stack", str(dev)]) == 0
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({SCALE: {"production_stacks": ["staging"]}}))
    assert main(["check", "--stack", str(dev), "--policy-config", str(config)]) == 1
    capsys.readouterr()
    config.write_text(json.dumps({SCALE: {"production_stacks": "staging"}}))
    assert main(["check", "--stack", str(dev), "--policy-config", str(config)]) == 2
    assert f"{SCALE}.production_stacks: must be a list of names" in capsys.readouterr().err


def test_no_inference_table_and_no_rate_limit_are_advisory(write_stack, capsys):
    config = serving(chat=endpoint(inference_table=False, rate_limit_per_user_per_minute=None))
    config["dbx-ai-infra:usage_policy_id"] = "policy-1"  # the usage-policy rule has its own tests (issue 55)
    stack = write_stack(config)
    code, plan = run_json(capsys, "check", "--stack", str(stack))
    assert code == 0
    assert {(v["policy"], v["enforcement"]) for v in plan["violations"]} == {
        ("databricks-serving-require-inference-table", "advisory"),
        ("databricks-serving-require-rate-limit", "advisory")}


def test_the_shipped_endpoints_meet_every_policy(capsys):
    for stack in ("prod", "dev"):
        code, plan = run_json(capsys, "check", "--stack", stack)
        assert code == 0
        assert not [v for v in plan["violations"] if "serving" in v["policy"]]


def test_the_workload_type_rule_reads_the_need_tag_like_the_cluster_rule():
    from dbx_ai_infra.policies.registry import evaluate_resource

    props = {"config": {"servedEntities": [{"workloadType": "GPU_LARGE", "scaleToZeroEnabled": False}]},
             "tags": [{"key": "workload", "value": "w"}, {"key": "cost_center", "value": "c"},
                      {"key": "dbx_cloud", "value": "azure"}, {"key": "gpu_memory_need_gb", "value": "168"}]}
    (v,) = [v for v in evaluate_resource("databricks:index/modelServing:ModelServing", props, urn="u", name="n")
            if v.policy == FIT]
    assert "GPU_LARGE has 80 GB of GPU memory; the model needs 168 GB" in v.message
    assert v.message.endswith("Fix: use one that fits: GPU_LARGE_8.")


# --- price, by hand ---------------------------------------------------------------------------------------------------

def _entry(plan: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in plan["cost"]["resources"].values() if e["name"] == name)


def test_an_always_warm_endpoint_costs_its_dbus_for_the_month(capsys):
    code, plan = run_json(capsys, "preview", "--stack", "prod")
    assert code == 0
    e = _entry(plan, "prod-serving-chat")
    # AWS GPU_MEDIUM: 20 DBU/h (lakemeter) x $0.07/DBU (model serving, premium) = $1.40 an hour, 730 hours
    assert e["hourly"] == pytest.approx(20 * 0.07)
    assert e["monthly"]["expected"] == pytest.approx(20 * 0.07 * 730) == pytest.approx(1022.0)
    # concurrency 16 = 4 replicas at most
    assert e["monthly"]["max"] == pytest.approx(4 * 20 * 0.07 * 730)
    assert e["compute_kind"] == "model_serving" and e["hours_basis"].startswith("always on")
    assert plan["cost"]["by_workload"]["serving"] == pytest.approx(1022.0)


def test_a_scale_to_zero_endpoint_costs_its_active_hours_and_launches(capsys, write_stack):
    code, plan = run_json(capsys, "preview", "--stack", "dev")
    e = _entry(plan, "dev-serving-chat-dev")
    assert e["monthly"]["expected"] == pytest.approx(20 * 0.07 * 60 + 60 * 0.07) == pytest.approx(88.2)
    # without its own hours: the usage assumption (200 h), and the launches
    code, plan = run_json(capsys, "preview", "--stack", str(write_stack(serving(chat=endpoint()), name="s2z")))
    e = _entry(plan, "s2z-serving-chat")
    assert e["monthly"]["expected"] == pytest.approx(20 * 0.07 * 200 + 60 * 0.07)
    assert {s["figure"] for s in plan["cost"]["sources"]} >= {"serving.aws.GPU_MEDIUM.dbu_per_hour",
                                                              "serving.launch_usd",
                                                              "usd_per_dbu.aws.premium.model_serving"}


def test_a_type_with_no_public_rate_is_unpriced_not_zero(capsys, write_stack):
    stack = write_stack(serving("aws", chat=endpoint(workload_type="GPU_XLARGE_8")))
    code, plan = run_json(capsys, "preview", "--stack", str(stack))
    e = _entry(plan, "test-serving-chat")
    assert e["unpriced"].startswith("no public serving DBU rate for GPU_XLARGE_8 on aws (price it with "
                                    "pricing.serving_dbu_per_hour.aws.GPU_XLARGE_8); the cheapest priced type that "
                                    "holds its 16.8 GB: GPU_MEDIUM (24 GB")
    assert e["monthly"]["expected"] is None


# --- cluster or endpoint ----------------------------------------------------------------------------------------------

def test_each_inference_cluster_and_endpoint_is_priced_the_other_way(capsys):
    code, plan = run_json(capsys, "preview", "--stack", "prod")
    advice = {a["id"]: a for a in plan["advice"]}
    cluster = _entry(plan, "prod-inference-cluster")
    endpoint_cost = 2 * 20 * 0.07 * 210  # two replicas for the two base workers, at the cluster's 210 hours
    a = advice["cluster-vs-endpoint"]
    assert a["resource_name"] == "prod-inference-cluster"
    assert a["monthly_cost_delta"] == pytest.approx(endpoint_cost - cluster["monthly"]["expected"])
    assert "the endpoint is cheaper" in a["message"] and "GPU_MEDIUM, 2 replicas" in a["message"]
    b = advice["endpoint-vs-cluster"]
    node = b["message"].split("16.8 GB -> ", 1)[1].split(",", 1)[0]
    hourly = on_demand_node_hourly(load_prices(), "aws", node)
    assert b["monthly_cost_delta"] == pytest.approx(2 * hourly * 730 - 1022.0)  # a driver and one worker
    assert ("the endpoint is cheaper" in b["message"]) is (b["monthly_cost_delta"] > 0)
    md = main(["cost", "--stack", "prod", "--format", "markdown"])
    assert md == 0 and "cluster-vs-endpoint" in capsys.readouterr().out


def test_offers_without_an_api_name_are_recorded_but_never_chosen():
    """The AWS 8 x A100 40 GB offer (538.4 DBU/h) is priced publicly but no source names its workload type."""
    from dbx_ai_infra.gpucatalog.serving import choose_serving_type, load_serving_catalog

    catalog = load_serving_catalog()
    (a100_40,) = [o for o in catalog.unnamed["aws"] if o.gpu == "A100 40GB"]
    assert (a100_40.gpu_count, a100_40.gpu_memory_gb, a100_40.dbu_per_hour) == (8, 320, 538.4)
    assert a100_40.source and a100_40.date and a100_40.doubt
    # a model that would fit it is sized to a named type, never to the unnamed offer
    assert choose_serving_type(catalog, "aws", 300).workload_type == "GPU_XLARGE_8"


def _with_need(plan: Any, need: str | None) -> Any:
    """``plan`` with the inference cluster's and the endpoint's GPU memory need tag set to ``need`` (None: removed)."""
    from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, GPU_MEMORY_NEED_TAG, MODEL_SERVING_ENDPOINT

    resources = []
    for r in plan.resources:
        inputs = dict(r.inputs)
        if r.type == CLUSTER:
            tags = {k: v for k, v in inputs["customTags"].items() if k != GPU_MEMORY_NEED_TAG}
            inputs["customTags"] = tags if need is None else {**tags, GPU_MEMORY_NEED_TAG: need}
        elif r.type == MODEL_SERVING_ENDPOINT:
            tags = [t for t in inputs["tags"] if t["key"] != GPU_MEMORY_NEED_TAG]
            inputs["tags"] = tags if need is None else [*tags, {"key": GPU_MEMORY_NEED_TAG, "value": need}]
        resources.append(r.model_copy(update={"inputs": inputs}))
    return plan.model_copy(update={"resources": resources})


def test_the_serving_comparison_leaves_out_what_it_cannot_size():
    """No GPU memory need tag, or a need that neither a Model Serving type nor a node of any family holds: neither side
    is compared."""
    from dbx_ai_infra.engine.pipeline import build_plan
    from dbx_ai_infra.pricing import load_prices, serving_comparison

    plan, book = build_plan("prod", with_policies=False, with_cost=True), load_prices()
    assert {a.id for a in serving_comparison(plan, book)} == {"cluster-vs-endpoint", "endpoint-vs-cluster"}
    assert serving_comparison(_with_need(plan, None), book) == []
    assert serving_comparison(_with_need(plan, "5000"), book) == []
