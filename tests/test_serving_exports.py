"""Issue 55, item 5: Model Serving endpoints (GPU serving and provisioned throughput) read from a workspace export and
from a live read, judged by the same rules and priced by the same rates as a stack's or a Terraform plan's.

The responses are small ones written here after databricks-sdk 0.167's types (``service/serving.py``):
``ServingEndpointDetailed`` (serving-endpoints get: ``config`` an ``EndpointCoreConfigOutput`` whose
``served_entities`` are ``ServedEntityOutput``: ``workload_type`` of ``ServingModelWorkloadType``, ``workload_size``,
``scale_to_zero_enabled``, ``provisioned_model_units``, ``min/max_provisioned_throughput``; ``tags`` a list of
``EndpointTag``; ``ai_gateway`` an ``AiGatewayConfig``; ``budget_policy_id``), the deprecated ``served_models``
(``ServedModelOutput``: ``model_name``, ``model_version``), and ``ListEndpointsResponse`` (serving-endpoints list:
``ServingEndpoint`` summaries whose ``served_entities`` are ``ServedEntitySpec``, with no compute)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli_json
from test_workspace_live import workspace  # noqa: F401 - the fixture: a local server replaying the API

from dbx_ai_infra.cli.cli import main

TAGS = [{"key": "workload", "value": "chat"}, {"key": "cost_center", "value": "42"}]
GATEWAY = {"inference_table_config": {"enabled": True, "catalog_name": "ml", "schema_name": "serving",
                                      "table_name_prefix": "chat"},
           "rate_limits": [{"calls": 100, "key": "user", "renewal_period": "minute"}]}


def gpu_endpoint(name: str = "chat", **entity: Any) -> dict[str, Any]:
    """serving-endpoints get of a GPU endpoint sized by name (``workload_size``)."""
    served = {"name": f"{name}-3", "entity_name": "ml.models.chat", "entity_version": "3", "workload_type": "GPU_MEDIUM",
              "workload_size": "Small", "scale_to_zero_enabled": False, "creator": "ml@example.com",
              "state": {"deployment": "DEPLOYMENT_READY", "deployment_state_message": ""}, **entity}
    return {"name": name, "id": f"{name}-id", "creator": "ml@example.com", "creation_timestamp": 1764979200000,
            "state": {"ready": "READY", "config_update": "NOT_UPDATING"}, "permission_level": "CAN_MANAGE",
            "route_optimized": False, "task": "llm/v1/chat", "tags": TAGS, "ai_gateway": GATEWAY,
            "budget_policy_id": "bp-1",
            "config": {"config_version": 2, "served_entities": [served],
                       "traffic_config": {"routes": [{"served_model_name": f"{name}-3", "traffic_percentage": 100}]}}}


def pt_endpoint(name: str = "llm", **entity: Any) -> dict[str, Any]:
    """serving-endpoints get of a provisioned-throughput endpoint (model units)."""
    served = {"name": f"{name}-1", "entity_name": "system.ai.llama-4-maverick", "entity_version": "1",
              "provisioned_model_units": 50, "state": {"deployment": "DEPLOYMENT_READY"}, **entity}
    return {"name": name, "id": f"{name}-id", "state": {"ready": "READY", "config_update": "NOT_UPDATING"},
            "tags": TAGS, "ai_gateway": GATEWAY, "config": {"config_version": 1, "served_entities": [served]}}


def findings(doc: Any, rule: str) -> list[dict[str, Any]]:
    return [v for v in doc.get("violations", []) if v["policy"] == rule]


def entries(cost: Any) -> dict[str, Any]:
    return {e["name"]: e for stack in cost.get("stacks", [cost]) for e in stack["cost"]["resources"].values()}


def write(tmp_path: Path, name: str, doc: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_an_exports_endpoints_are_read_told_apart_and_judged(capsys, tmp_path: Path) -> None:
    """Before: an endpoint object was invalid input (exit 2) and ``{"endpoints": [...]}`` an unknown document."""
    prod_gpu = gpu_endpoint("chat", scale_to_zero_enabled=True, workload_size="Small")
    prod_gpu["tags"] = [*TAGS, {"key": "dbx_stack", "value": "prod"}]
    cpu = gpu_endpoint("embed", workload_type="CPU")
    bare = pt_endpoint("llm")
    bare.pop("ai_gateway")
    path = write(tmp_path, "endpoints.json", [prod_gpu, cpu, bare])
    code, doc = run_cli_json(capsys, "check", "--cluster-json", str(path))
    checked = doc["checked"]
    assert (checked["serving_endpoints"], checked["gpu_serving_endpoints"],
            checked["provisioned_throughput_serving_endpoints"]) == (3, 1, 1)
    # the rules of the stack's endpoints, on the workspace's
    assert [f["resource_name"] for f in findings(doc, "databricks-serving-disallow-scale-to-zero-in-production")] \
        == ["chat"]
    assert code == 1  # that rule is mandatory
    assert [f["resource_name"] for f in findings(doc, "databricks-serving-require-inference-table")] == ["llm"]
    assert [f["resource_name"] for f in findings(doc, "databricks-serverless-require-usage-policy")] == ["llm"]
    assert not findings(doc, "databricks-serving-provisioned-throughput-model-units")  # 50 units of a model-unit model
    capsys.readouterr()
    assert main(["check", "--cluster-json", str(path)]) == 1
    assert "3 serving endpoints (1 GPU, 1 provisioned throughput)" in capsys.readouterr().out


def test_an_exports_endpoints_are_priced_like_the_same_endpoint_in_a_terraform_plan(capsys, tmp_path: Path) -> None:
    """workload_size Small is concurrency 4-4 (ServedEntityOutput.workload_size); priced as a plan stating it."""
    path = write(tmp_path, "serving-endpoints.json", {"endpoints": [gpu_endpoint("chat"), pt_endpoint("llm")]})
    code, cost = run_cli_json(capsys, "cost", "--cluster-json", str(path))
    assert code == 0
    got = entries(cost)
    capsys.readouterr()
    main(["cost", "--cluster-json", str(path)])
    assert capsys.readouterr().out.startswith("Workspace export serving-endpoints (aws)")
    chat = got["chat"]
    assert chat["node_type_id"] == "GPU_MEDIUM" and chat["monthly"]["expected"] > 0
    entity = {"entity_name": "ml.models.chat", "entity_version": "3", "workload_type": "GPU_MEDIUM",
              "min_provisioned_concurrency": 4, "max_provisioned_concurrency": 4, "scale_to_zero_enabled": False}
    plan = {"format_version": "1.2", "terraform_version": "1.11.0", "resource_changes": [
        {"address": "databricks_model_serving.chat", "mode": "managed", "type": "databricks_model_serving",
         "name": "chat", "change": {"actions": ["create"], "before": None, "after_unknown": {},
                                    "after": {"name": "chat", "config": [{"served_entities": [entity]}]}}}]}
    _, same = run_cli_json(capsys, "cost", "--terraform-plan", str(write(tmp_path, "plan.json", plan)))
    assert chat["monthly"] == entries(same)["databricks_model_serving.chat"]["monthly"]
    llm = got["llm"]  # provisioned throughput: named unpriced (no public per-model-unit rate), never $0
    assert llm["compute_kind"] == "provisioned_throughput" and llm["model_units"] == 50
    assert llm["monthly"]["expected"] is None and llm["unpriced"]
    assert "llm" in cost["cost"]["total"]["unpriced"] and cost["cost"]["total"]["complete"] is False


def test_a_list_response_holds_no_compute_so_its_endpoints_are_not_judged_and_unpriced(capsys,
                                                                                      tmp_path: Path) -> None:
    """serving-endpoints list (ServedEntitySpec): no workload type, size or scale to zero. Unknown, never CPU."""
    summary = {"name": "chat", "id": "chat-id", "tags": [*TAGS, {"key": "dbx_stack", "value": "prod"}],
               "state": {"ready": "READY"}, "budget_policy_id": "bp-1", "ai_gateway": GATEWAY,
               "config": {"served_entities": [{"name": "chat-3", "entity_name": "ml.models.chat",
                                               "entity_version": "3"}]}}
    path = write(tmp_path, "endpoints.json", {"endpoints": [summary]})
    code, doc = run_cli_json(capsys, "check", "--cluster-json", str(path))
    not_judged = findings(doc, "databricks-serving-disallow-scale-to-zero-in-production")
    assert [f["enforcement"] for f in not_judged] == ["not-judged"]
    assert "serving-endpoints get" in not_judged[0]["message"]
    assert code == 0
    assert main(["check", "--cluster-json", str(path), "--fail-on-unknown"]) == 1
    capsys.readouterr()
    _, cost = run_cli_json(capsys, "cost", "--cluster-json", str(path))
    chat = entries(cost)["chat"]
    assert chat["monthly"]["expected"] is None and "not known" in chat["unpriced"]


def test_served_models_a_custom_size_and_a_tokens_per_second_band(capsys, tmp_path: Path) -> None:
    """The deprecated served_models (ServedModelOutput) read as entities; a custom workload size has no public
    concurrency range (unpriced, named); a legacy family's band (min/max_provisioned_throughput) is provisioned
    throughput, not a model-unit shortfall."""
    legacy = gpu_endpoint("legacy")
    legacy["config"] = {"served_models": [{"name": "m-1", "model_name": "ml.models.chat", "model_version": "1",
                                           "workload_type": "GPU_SMALL", "workload_size": "Small",
                                           "scale_to_zero_enabled": False}]}
    custom = gpu_endpoint("custom", workload_size="XLarge-custom")
    band = pt_endpoint("band", entity_name="system.ai.llama_v3_3_70b_instruct", entity_version="3",
                       provisioned_model_units=None, min_provisioned_throughput=0, max_provisioned_throughput=9500)
    del band["config"]["served_entities"][0]["provisioned_model_units"]
    path = write(tmp_path, "endpoints.json", [legacy, custom, band])
    _, doc = run_cli_json(capsys, "check", "--cluster-json", str(path))
    assert doc["checked"]["gpu_serving_endpoints"] == 2
    assert doc["checked"]["provisioned_throughput_serving_endpoints"] == 1
    assert not findings(doc, "databricks-serving-provisioned-throughput-model-units")
    _, cost = run_cli_json(capsys, "cost", "--cluster-json", str(path))
    got = entries(cost)
    assert got["legacy"]["node_type_id"] == "GPU_SMALL" and got["legacy"]["monthly"]["expected"] > 0
    assert got["custom"]["monthly"]["expected"] is None and "XLarge-custom" in got["custom"]["unpriced"]
    assert got["band"]["monthly"]["expected"] is None and "tokens-per-second band" in got["band"]["unpriced"]


def test_a_string_where_the_api_writes_a_number_is_refused(capsys, tmp_path: Path) -> None:
    path = write(tmp_path, "endpoints.json", pt_endpoint(provisioned_model_units="fifty"))
    assert main(["check", "--cluster-json", str(path)]) == 2
    assert "provisioned_model_units" in capsys.readouterr().err


def test_cost_cluster_json_refuses_against(capsys, tmp_path: Path) -> None:
    path = write(tmp_path, "endpoints.json", [gpu_endpoint()])
    assert main(["cost", "--cluster-json", str(path), "--against", str(path)]) == 2
    assert "--against" in capsys.readouterr().err


@pytest.mark.parametrize("doc", [{"endpoints": []}, {"endpoints": None, "next_page_token": None}])
def test_an_empty_endpoints_page_is_an_empty_export(capsys, tmp_path: Path, doc: Any) -> None:
    code, out = run_cli_json(capsys, "check", "--cluster-json", str(write(tmp_path, "e.json", doc)))
    assert code == 0 and out["checked"]["serving_endpoints"] == 0


def _summary(detailed: dict[str, Any]) -> dict[str, Any]:
    """The list's ServingEndpoint of a ServingEndpointDetailed: its served entities as ServedEntitySpec."""
    spec = [{k: e[k] for k in ("name", "entity_name", "entity_version") if k in e}
            for e in detailed["config"]["served_entities"]]
    return {k: v for k, v in detailed.items() if k in ("name", "id", "tags", "state", "ai_gateway", "budget_policy_id",
                                                        "creator", "task")} | {"config": {"served_entities": spec}}


def test_a_live_read_gets_each_endpoint_whole_and_judges_it_like_an_export(workspace, capsys,  # noqa: F811
                                                                         tmp_path: Path) -> None:
    """serving-endpoints list gives summaries; each is read with serving-endpoints get (ServingEndpointDetailed). One
    the caller may not get (403) stays the list's summary: its compute unknown, said as not judged."""
    chat = gpu_endpoint("chat", scale_to_zero_enabled=True)
    chat["tags"] = [*TAGS, {"key": "dbx_stack", "value": "prod"}]
    hidden = gpu_endpoint("hidden")
    hidden["tags"] = chat["tags"]
    workspace.script += [
        ("/api/2.0/serving-endpoints", 200, {}, {"endpoints": [_summary(chat), _summary(pt_endpoint("llm")),
                                                               _summary(hidden)]}),
        ("/api/2.0/serving-endpoints/chat", 200, {}, chat),
        ("/api/2.0/serving-endpoints/llm", 200, {}, pt_endpoint("llm")),
        ("/api/2.0/serving-endpoints/hidden", 403, {}, {"error_code": "PERMISSION_DENIED", "message": "no CAN_VIEW"}),
    ]
    saved = tmp_path / "export"
    code, doc = run_cli_json(capsys, "check", "--workspace", "--save-export", str(saved))
    assert code == 1
    checked = doc["checked"]
    assert (checked["serving_endpoints"], checked["gpu_serving_endpoints"],
            checked["provisioned_throughput_serving_endpoints"]) == (3, 1, 1)
    scale = {f["resource_name"]: f["enforcement"]
             for f in findings(doc, "databricks-serving-disallow-scale-to-zero-in-production")}
    assert scale == {"chat": "mandatory", "hidden": "not-judged"}
    # the saved export, read offline, gives the same verdicts, and is priced
    assert (saved / "serving-endpoints.json").is_file()
    _, again = run_cli_json(capsys, "check", "--cluster-json", str(saved))
    def key(v: dict[str, Any]) -> tuple[str, str]:
        return v["policy"], v["urn"]

    assert sorted(again["violations"], key=key) == sorted(doc["violations"], key=key)  # files are read in path order
    _, cost = run_cli_json(capsys, "cost", "--cluster-json", str(saved))
    got = entries(cost)
    assert got["chat"]["monthly"]["expected"] > 0 and got["hidden"]["monthly"]["expected"] is None


def test_a_workspace_that_refuses_the_endpoint_list_is_read_without_it_and_says_so(workspace, capsys) -> None:  # noqa: F811
    workspace.script.append(("/api/2.0/serving-endpoints", 403, {}, {"error_code": "PERMISSION_DENIED",
                                                                     "message": "serving is not enabled"}))
    code = main(["check", "--workspace", "--json"])
    captured = capsys.readouterr()
    assert code == 1  # the other lists' findings
    assert "endpoints not read, so not judged" in captured.err
