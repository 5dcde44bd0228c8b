"""A cost review you can sign, part 1 (issue 43): nothing unpriced is silent. A 70B fp16 endpoint on AWS is sized to
GPU_XLARGE_8 (8 x H100), which has no public serving rate: every total says it leaves it out, a budget that cannot be
verified fails closed, an unpriced resource is never a saving, and a stack's own rate prices it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from conftest import BASE_CONFIG, run_cli

from dbx_ai_infra.cli.cli import main

BIG = {"entity": "main.models.llama70b", "entity_version": "1", "model": {"params_billions": 70, "precision": "fp16"},
       "scale_to_zero": False, "rate_limit_per_user_per_minute": 10}
#: The nearest priced equivalent (8 x A100 80GB, 628 DBU/h) at $0.07/DBU, always warm: 628 x 0.07 x 730.
QUOTE = 628


def stack(write_stack, name: str = "big", **sections: Any) -> str:
    config = copy.deepcopy(BASE_CONFIG)
    for key in ("training", "inference", "dev"):
        config.pop(f"dbx-ai-infra:{key}")
    config["dbx-ai-infra:serving"] = {"endpoints": {"big": BIG}}
    config.update({f"dbx-ai-infra:{k}": v for k, v in sections.items()})
    return str(write_stack(config, name=name))


def test_the_total_object_says_what_it_leaves_out(write_stack, capsys):
    code, out, _ = run_cli(capsys, "cost", "--stack", stack(write_stack), "--format", "json")
    total = json.loads(out)["cost"]["total"]
    assert code == 0 and total["complete"] is False and total["unpriced"] == ["big-serving-big"]
    code, out, _ = run_cli(capsys, "cost", "--stack", "dev", "--format", "json")
    total = json.loads(out)["cost"]["total"]
    assert total["complete"] is True and total["unpriced"] == []


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_the_line_that_states_the_total_says_it_is_incomplete(write_stack, capsys, fmt):
    code, out, _ = run_cli(capsys, "cost", "--stack", stack(write_stack), "--format", fmt)
    lines = [line for line in out.splitlines() if "incomplete: leaves out 1 unpriced resource: big-serving-big" in line]
    assert code == 0 and lines
    total_line = {"table": "Total:", "markdown": "**Stack `big`", "html": "<strong>Stack big"}[fmt]
    assert any(total_line in line for line in lines)


def test_the_multi_stack_summary_says_it_too(write_stack, capsys):
    code, out, _ = run_cli(capsys, "cost", "--stack", stack(write_stack), "--stack", "dev", "--format", "markdown")
    row = next(line for line in out.splitlines() if line.startswith("| big |"))
    assert code == 0 and "(incomplete: unpriced big-serving-big)" in row


def test_a_budget_that_cannot_be_verified_fails_closed_naming_the_resource(write_stack, capsys):
    code, out, _ = run_cli(capsys, "check", "--stack", stack(write_stack, budget={"monthly_expected_max": 500}), "--json")
    (finding,) = [v for v in json.loads(out)["violations"] if v["policy"] == "databricks-stack-budget"]
    assert code == 1 and finding["enforcement"] == "mandatory"
    assert "cannot be verified against budget.monthly_expected_max" in finding["message"]
    assert "big-serving-big" in finding["message"] and "serving_dbu_per_hour" in finding["message"]


def test_a_rate_the_stack_gives_prices_it_and_the_budget_is_judged_on_the_price(write_stack, capsys):
    pricing = {"serving_dbu_per_hour": {"aws": {"GPU_XLARGE_8": QUOTE}}}
    over = stack(write_stack, name="over", budget={"monthly_expected_max": 500}, pricing=pricing)
    code, out, _ = run_cli(capsys, "check", "--stack", over, "--json")
    doc = json.loads(out)
    assert doc["cost"]["total"]["complete"] is True
    assert doc["cost"]["total"]["monthly"]["expected"] == pytest.approx(QUOTE * 0.07 * 730)  # $32,090.80
    (finding,) = [v for v in doc["violations"] if v["policy"] == "databricks-stack-budget"]
    assert code == 1 and "over budget.monthly_expected_max $500.00" in finding["message"]
    within = stack(write_stack, name="within", budget={"monthly_expected_max": 40_000}, pricing=pricing)
    assert run_cli(capsys, "check", "--stack", within)[0] == 0


def test_an_unpriced_resource_is_never_a_saving(write_stack, capsys, tmp_path):
    base = tmp_path / "base.json"
    assert main(["preview", "--stack", "dev", "--json", "--out", str(base)]) == 0
    capsys.readouterr()
    head = stack(write_stack, budget={"increase_max": 100})
    code, out, _ = run_cli(capsys, "cost", "--stack", head, "--against", str(base), "--format", "json")
    diff = json.loads(out)["diff"]
    assert diff["total"]["complete"] is False and diff["total"]["delta"]["monthly_expected"] is None
    assert diff["total"]["unpriced"] == {"base": [], "head": ["big-serving-big"]}
    (finding,) = [v for v in json.loads(out)["violations"] if v["policy"] == "databricks-stack-budget"]
    assert code == 1 and "the change cannot be verified against budget.increase_max" in finding["message"]
    code, out, _ = run_cli(capsys, "cost", "--stack", head, "--against", str(base))
    assert "The change is unknown: unpriced on the head big-serving-big" in out
    assert "-1,023.40" not in out  # never shown as a saving


def test_under_the_policy_pack_a_cluster_on_a_pool_the_preview_creates_is_priced_on_it(plan_of):
    """In a `pulumi preview` of a new stack the pool's id is unknown; the cluster's property dependency names the
    pool, so the pack prices the cluster on it (unpriced, the budget would fail closed on every such stack)."""
    from types import SimpleNamespace

    from dbx_ai_infra.policies.pack import UNKNOWN, _with_references, budget_violations

    plan = plan_of("prod")
    by_urn = {r["urn"]: SimpleNamespace(urn=r["urn"], resource_type=r["type"], name=r["name"],
                                        props=dict(r["inputs"]), property_dependencies={}) for r in plan["resources"]}
    pool = next(v for v in by_urn.values() if v.resource_type.endswith("InstancePool"))
    cluster = next(v for v in by_urn.values() if v.name == "prod-inference-cluster")
    for key in ("instancePoolId", "driverInstancePoolId"):
        cluster.props[key] = UNKNOWN  # known only after apply
    budget = {"monthly_expected_max": 10 ** 6}
    unlinked = budget_violations([_with_references(r) for r in by_urn.values()], "prod", budget)
    assert len(unlinked) == 1 and "prod-inference-cluster" in unlinked[0] and "cannot be verified" in unlinked[0]
    cluster.property_dependencies = {"instancePoolId": [pool], "driverInstancePoolId": [pool]}
    assert budget_violations([_with_references(r) for r in by_urn.values()], "prod", budget) == []


# --- item 6: Terraform plans of every shape ----------------------------------------------------------------------------

GOOD_PLAN = __import__("pathlib").Path(__file__).resolve().parent.parent / "examples" / "terraform" / "plan-good.json"


@pytest.mark.parametrize("base", [
    {"format_version": "1.2", "terraform_version": "1.9.0", "planned_values": {"root_module": {}}},  # changes nothing
    {"format_version": "1.2", "terraform_version": "1.9.0", "resource_changes": [
        {"address": "databricks_catalog.main", "type": "databricks_catalog", "name": "main",
         "change": {"actions": ["create"], "before": None, "after": {"name": "main"}, "after_unknown": {}}}]},
    {"format_version": "1.2", "terraform_version": "1.9.0", "resource_changes": [
        {"address": "aws_s3_bucket.b", "type": "aws_s3_bucket", "name": "b",
         "change": {"actions": ["create"], "before": None, "after": {"bucket": "b"}, "after_unknown": {}}}]},
], ids=["empty", "catalog-only", "not-databricks"])
def test_a_base_without_databricks_compute_is_zero_and_everything_is_new(capsys, tmp_path, base):
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base))
    code, out, err = run_cli(capsys, "cost", "--terraform-plan", str(GOOD_PLAN), "--against", str(path), "--format", "json")
    diff = json.loads(out)["diff"]
    assert code == 0, err
    assert diff["total"]["base"]["monthly_expected"] == 0 and diff["counts"]["added"] == len(diff["rows"]) > 0


def test_a_plan_of_a_trillion_workers_is_priced_at_once_and_says_what_it_refuses(capsys, tmp_path):
    doc = json.loads(GOOD_PLAN.read_text())
    for change in doc["resource_changes"]:
        if change["type"] == "databricks_cluster":
            change["change"]["after"].update(autoscale=[], num_workers=10 ** 12)
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(doc))
    code, out, _ = run_cli(capsys, "cost", "--terraform-plan", str(path), "--format", "json")
    cost = json.loads(out)["cost"]
    (entry,) = [e for e in cost["resources"].values() if e["name"] == "databricks_cluster.chat"]
    assert code == 0 and "1,000,000,000,000 workers is more than any cluster holds" in entry["unpriced"]
    assert cost["total"]["complete"] is False


def test_the_worker_arithmetic_does_not_iterate():
    from dbx_ai_infra.pricing.model import _ClusterPricer

    pricer = _ClusterPricer(driver_od=10, driver_spot=4, worker_od=10, worker_spot=4, spot=True, first_on_demand=3)
    assert pricer.size(5) == 10 + 2 * 10 + 3 * 4  # the driver and 2 workers on demand, 3 spot
    assert pricer.workers(1, 2.5) == 10 + 10 + 0.5 * 4 and pricer.spot_nodes(5) == 3
    assert pricer.size(10 ** 15) == pytest.approx(10 + 2 * 10 + (10 ** 15 - 2) * 4)


# --- item 2: the serving sizer says why it passed over a type, and prices an order of magnitude -----------------------

def test_a_type_that_fits_but_the_sdk_does_not_list_is_said_so_not_did_not_fit(write_stack, capsys):
    code, out, _ = run_cli(capsys, "preview", "--stack", stack(write_stack))
    line = next(line for line in out.splitlines() if "serving big:" in line)
    assert code == 0 and "GPU_MEDIUM_8 (192 GB) fits, but databricks-sdk's ServingModelWorkloadType does not list it" \
        in line and "did not fit" not in line
    code, out, _ = run_cli(capsys, "preview", "--stack", "dev")
    assert "GPU_SMALL (16 GB) did not fit" in out  # one that does not hold the need still says so


def test_an_unpriced_choice_names_the_cheapest_priced_type_that_holds_the_model(write_stack, capsys):
    code, out, _ = run_cli(capsys, "cost", "--stack", stack(write_stack), "--format", "json")
    (entry,) = [e for e in json.loads(out)["cost"]["resources"].values() if e["name"] == "big-serving-big"]
    assert "the cheapest priced type that holds its 168 GB: GPU_MEDIUM_8 (192 GB, 290.8 DBU/h, which " \
           "databricks-sdk's enum does not list), about $14,859.88 a month" in entry["unpriced"]


# --- CPU serving: priced per unit of concurrency, never chosen by sizing ------------------------------------------------

def _plan_on(tmp_path, workload_type: str, low: int, high: int) -> str:
    from pathlib import Path

    good = Path(__file__).resolve().parent.parent / "examples" / "terraform" / "plan-good.json"
    plan = json.loads(good.read_text())
    served = next(rc for rc in plan["resource_changes"] if rc["type"] == "databricks_model_serving")
    entity = served["change"]["after"]["config"][0]["served_entities"][0]
    entity.update({"workload_type": workload_type, "min_provisioned_concurrency": low,
                   "max_provisioned_concurrency": high, "scale_to_zero_enabled": False})
    path = tmp_path / f"{workload_type}.json"
    path.write_text(json.dumps(plan))
    return str(path)


def _endpoint(capsys, plan: str) -> tuple[dict[str, Any], dict[str, Any]]:
    code, out, err = run_cli(capsys, "cost", "--terraform-plan", plan, "--format", "json")
    assert code == 0 and "Traceback" not in err
    cost = json.loads(out)["cost"]
    return next(e for e in cost["resources"].values() if e["name"] == "databricks_model_serving.chat_api"), cost


def test_a_cpu_endpoint_is_priced_per_unit_of_concurrency(tmp_path, capsys):
    """databricks-sdk lists CPU; lakemeter prices it at 1 DBU/h per unit of concurrency: a GPU_MEDIUM replica (4 of
    concurrency) is 20 DBU/h, so the same concurrency on CPU costs 4/20 of it, and 16 of concurrency four times 4."""
    from dbx_ai_infra.gpucatalog.serving import load_serving_catalog

    catalog = load_serving_catalog()
    gpu, _ = _endpoint(capsys, _plan_on(tmp_path, "GPU_MEDIUM", 4, 16))
    cpu, cost = _endpoint(capsys, _plan_on(tmp_path, "CPU", 4, 16))
    per_unit = catalog.cpu_type("aws", "CPU").dbu_per_concurrency_hour
    ratio = per_unit * catalog.concurrency_per_replica / catalog.get("aws", "GPU_MEDIUM").dbu_per_hour
    assert cpu["unpriced"] is None and cost["total"]["complete"] is True
    assert cpu["hourly"] == pytest.approx(gpu["hourly"] * ratio) and cpu["hourly_max"] == pytest.approx(4 * cpu["hourly"])
    assert cpu["nodes"] == {"min": 1, "max": 4}


def test_a_cpu_type_with_no_public_rate_is_unpriced_and_the_total_says_so(tmp_path, capsys):
    entry, cost = _endpoint(capsys, _plan_on(tmp_path, "CPU_LARGE", 4, 8))
    assert "no public serving DBU rate for CPU_LARGE on aws" in entry["unpriced"]
    assert cost["total"]["complete"] is False and cost["total"]["unpriced"] == ["databricks_model_serving.chat_api"]
    entry, _ = _endpoint(capsys, _plan_on(tmp_path, "CPU_HUGE", 4, 8))  # no such type at all: said as such
    assert "CPU_HUGE is not a Model Serving workload type on aws" in entry["unpriced"]


def test_a_stack_that_pins_a_cpu_type_is_told_why_and_what_fits(write_stack, capsys):
    path = stack(write_stack, serving={"endpoints": {"big": {**BIG, "workload_type": "CPU"}}})
    code, _, err = run_cli(capsys, "preview", "--stack", path)
    assert code == 2 and "CPU is not a GPU workload type of Model Serving on aws (it is a CPU workload type" in err
    assert "Fix: use one that fits the model (168 GB)" in err and "Traceback" not in err


# --- Terraform: pools referenced through count, for_each and modules ----------------------------------------------------

_POOL = {"instance_pool_name": "gpu", "node_type_id": "g5.xlarge", "min_idle_instances": 0, "max_capacity": 8,
         "idle_instance_autotermination_minutes": 15, "aws_attributes": [{"availability": "ON_DEMAND"}],
         "custom_tags": {"workload_type": "inference", "workload": "genai", "cost_center": "ai"}}
_CLUSTER = {"cluster_name": "chat", "spark_version": "17.3.x-gpu-ml-scala2.13", "autotermination_minutes": 0,
            "num_workers": 2, "data_security_mode": "SINGLE_USER", "single_user_name": "ml@example.com",
            "custom_tags": {"workload_type": "inference", "workload": "genai", "cost_center": "ai"}}


def _change(address: str, kind: str, after: dict[str, Any], unknown: dict[str, Any]) -> dict[str, Any]:
    return {"address": address, "type": kind, "change": {"actions": ["create"], "after": after,
                                                          "after_unknown": unknown}}


def _tf_plan(tmp_path, name: str, changes: list[dict[str, Any]], root_module: dict[str, Any]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"format_version": "1.2", "resource_changes": changes,
                                "configuration": {"root_module": root_module}}))
    return str(path)


def _pools_and_clusters(keys: list[str], module: str = "") -> list[dict[str, Any]]:
    """A pool and a cluster per key, the pools of different node types so a wrong pairing shows in the price."""
    out = []
    for i, key in enumerate(keys):
        node = "g5.xlarge" if i == 0 else "g5.12xlarge"
        out.append(_change(f"{module}databricks_instance_pool.gpu{key}", "databricks_instance_pool",
                           {**_POOL, "node_type_id": node}, {"instance_pool_id": True}))
        out.append(_change(f"{module}databricks_cluster.chat{key}", "databricks_cluster", dict(_CLUSTER),
                           {"instance_pool_id": True, "driver_instance_pool_id": True}))
    return out


def _priced_pools(capsys, plan: str) -> dict[str, str]:
    code, out, err = run_cli(capsys, "cost", "--terraform-plan", plan, "--format", "json")
    assert code == 0 and "Traceback" not in err, err
    cost = json.loads(out)["cost"]
    assert cost["total"]["complete"] is True, cost["total"]
    return {e["name"]: (e["instance_pool"], e["node_type_id"]) for e in cost["resources"].values()
            if "databricks_cluster" in e["name"]}


def _resources(references: list[str], **extra: Any) -> list[dict[str, Any]]:
    expressions = {"instance_pool_id": {"references": references},
                   "driver_instance_pool_id": {"references": references}}
    return [{"address": "databricks_instance_pool.gpu", "type": "databricks_instance_pool", "name": "gpu",
             "expressions": {}, **extra.get("pool", {})},
            {"address": "databricks_cluster.chat", "type": "databricks_cluster", "name": "chat",
             "expressions": expressions, **extra.get("cluster", {})}]


def test_a_pool_referenced_through_count_index_is_the_pool_of_the_same_index(tmp_path, capsys):
    plan = _tf_plan(tmp_path, "count", _pools_and_clusters(["[0]", "[1]"]),
                    {"resources": _resources(["databricks_instance_pool.gpu", "count.index"])})
    assert _priced_pools(capsys, plan) == {
        "databricks_cluster.chat[0]": ("databricks_instance_pool.gpu[0]", "g5.xlarge"),
        "databricks_cluster.chat[1]": ("databricks_instance_pool.gpu[1]", "g5.12xlarge")}


def test_a_pool_referenced_through_each_key_or_each_value_is_the_pool_of_the_same_key(tmp_path, capsys):
    keys = ['["a"]', '["b"]']
    plan = _tf_plan(tmp_path, "each_key", _pools_and_clusters(keys),
                    {"resources": _resources(["databricks_instance_pool.gpu", "each.key"])})
    expected = {'databricks_cluster.chat["a"]': ('databricks_instance_pool.gpu["a"]', "g5.xlarge"),
                'databricks_cluster.chat["b"]': ('databricks_instance_pool.gpu["b"]', "g5.12xlarge")}
    assert _priced_pools(capsys, plan) == expected
    over_pools = {"cluster": {"for_each_expression": {"references": ["databricks_instance_pool.gpu"]}}}
    plan = _tf_plan(tmp_path, "each_value", _pools_and_clusters(keys),
                    {"resources": _resources(["each.value.id", "each.value"], **over_pools)})
    assert _priced_pools(capsys, plan) == expected


def test_a_pool_passed_into_a_module_with_count_is_the_pool_of_that_module_instance(tmp_path, capsys):
    """The root creates the pools (count 2) and calls a module per pool (count 2), passing
    databricks_instance_pool.gpu[count.index].id as var.pool_id; the module's cluster uses var.pool_id."""
    changes = [c for c in _pools_and_clusters(["[0]", "[1]"]) if c["type"] == "databricks_instance_pool"]
    changes += [_change(f"module.serve[{i}].databricks_cluster.chat", "databricks_cluster", dict(_CLUSTER),
                        {"instance_pool_id": True}) for i in (0, 1)]
    module = {"resources": [{"address": "databricks_cluster.chat", "type": "databricks_cluster", "name": "chat",
                             "expressions": {"instance_pool_id": {"references": ["var.pool_id"]}}}]}
    root = {"resources": _resources([])[:1],
            "module_calls": {"serve": {"source": "./serve", "count_expression": {"constant_value": 2},
                                       "expressions": {"pool_id": {"references": ["databricks_instance_pool.gpu",
                                                                                  "count.index"]}},
                                       "module": module}}}
    assert _priced_pools(capsys, _tf_plan(tmp_path, "module", changes, root)) == {
        "module.serve[0].databricks_cluster.chat": ("databricks_instance_pool.gpu[0]", "g5.xlarge"),
        "module.serve[1].databricks_cluster.chat": ("databricks_instance_pool.gpu[1]", "g5.12xlarge")}


def test_a_pool_in_the_same_module_instance_is_that_instance_s():
    from dbx_ai_infra.sources.tf_references import OWN_KEY, Reference, resolve

    assert resolve(Reference("module.ml.databricks_instance_pool.gpu"),
                   'module.ml["eu"].databricks_cluster.chat') == 'module.ml["eu"].databricks_instance_pool.gpu'
    assert resolve(Reference("databricks_instance_pool.gpu", OWN_KEY), "databricks_cluster.chat[3]") == \
        "databricks_instance_pool.gpu[3]"
    assert resolve(Reference("databricks_instance_pool.gpu[0]", OWN_KEY), "databricks_cluster.chat[3]") == \
        "databricks_instance_pool.gpu[0]"  # a static index stays
