"""``check --terraform-plan`` (issue 30, part 2, the check): a Terraform plan's Databricks resources judged by the same
rules as a stack or an export, named by their Terraform address. The plans under examples/terraform are written from
Terraform's documented plan JSON (``terraform show -json``: format_version, resource_changes[].change.after and
after_unknown, blocks as lists of one object) and the provider's resource schemas."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.sources.exports import TERRAFORM_UNKNOWN, terraform_items

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "terraform"
GOOD, BAD = EXAMPLES / "plan-good.json", EXAMPLES / "plan-bad.json"


def check(capsys, *argv: str) -> tuple[int, dict[str, Any], str]:
    code = main(["check", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def test_an_all_spot_inference_cluster_and_an_autoscaled_spot_training_job_fail(capsys) -> None:
    code, doc, _ = check(capsys, "--terraform-plan", str(BAD))
    assert code == 1
    mandatory = {(v["policy"], v["resource_name"]) for v in doc["violations"] if v["enforcement"] == "mandatory"}
    assert ("databricks-cluster-disallow-all-spot-inference", "module.ml.databricks_cluster.chat") in mandatory
    assert ("databricks-cluster-disallow-autoscaled-or-spot-training", "databricks_job.train") in mandatory
    names = {v["resource_name"] for v in doc["violations"]}
    assert "databricks_cluster.gone" not in names  # being deleted: not judged
    # the provider's own and computed attributes (id, url, a new cluster's state) are not findings
    assert not [v for v in doc["violations"] if v["policy"] == "databricks-export-unrecognised-field"]


def test_a_good_plan_passes(capsys) -> None:
    code, doc, _ = check(capsys, "--terraform-plan", str(GOOD))
    assert code == 0
    assert not [v for v in doc["violations"] if v["enforcement"] == "mandatory"]
    assert doc["checked"]["clusters"] == 1 and doc["checked"]["job_clusters"] == 1 and \
        doc["checked"]["instance_pools"] == 1


def test_the_plan_is_read_in_the_api_shape() -> None:
    doc = json.loads(BAD.read_text())
    items = {i.label: i for i in terraform_items(doc, str(BAD))}
    chat = items["module.ml.databricks_cluster.chat"].props
    assert chat["autoscale"] == {"min_workers": 2, "max_workers": 8}  # a block: a list of one object in the plan
    assert chat["aws_attributes"]["availability"] == "SPOT"
    assert chat["libraries"] == [{"pypi": {"package": "vllm==0.6.3"}}]  # library blocks: the API's libraries
    assert "cluster_id" not in chat and "state" not in chat  # computed, unknown: not set by the plan
    job = items["databricks_job.train"].props
    assert job["job_clusters"][0]["new_cluster"]["autoscale"] == {"min_workers": 2, "max_workers": 6}
    assert job["tasks"][0]["spark_python_task"]["python_file"] == "/Workspace/train.py"
    plan = json.loads(GOOD.read_text())
    good = {i.label: i for i in terraform_items(plan, str(GOOD))}
    # the pool the plan creates: its id known only after apply; the configuration says which resource it is
    assert good["databricks_cluster.chat"].props["instance_pool_id"] == "databricks_instance_pool.inference"
    assert good["databricks_instance_pool.inference"].props["instance_pool_id"] == "databricks_instance_pool.inference"
    del plan["configuration"]  # without it, a value known only after apply is set, not absent
    bare = {i.label: i for i in terraform_items(plan, str(GOOD))}
    assert bare["databricks_cluster.chat"].props["instance_pool_id"] == TERRAFORM_UNKNOWN


def test_a_plan_change_that_turns_a_cluster_all_spot_fails(capsys, tmp_path: Path) -> None:
    doc = json.loads(GOOD.read_text())
    changed = copy.deepcopy(doc)
    chat = next(rc for rc in changed["resource_changes"] if rc["address"] == "databricks_cluster.chat")
    chat["change"]["actions"] = ["update"]
    chat["change"]["after"]["node_type_id"] = "g5.xlarge"
    chat["change"]["after_unknown"].pop("instance_pool_id")
    chat["change"]["after_unknown"].pop("driver_instance_pool_id")
    chat["change"]["after"]["aws_attributes"] = [{"availability": "SPOT", "first_on_demand": 1}]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(changed))
    code, out, _ = check(capsys, "--terraform-plan", str(path))
    assert code == 1
    assert {v["resource_name"] for v in out["violations"] if v["enforcement"] == "mandatory"} == \
        {"databricks_cluster.chat"}


def test_sarif_names_the_plan_file_and_the_address(capsys, tmp_path: Path) -> None:
    out = tmp_path / "plan.sarif"
    assert main(["check", "--terraform-plan", str(BAD), "--format", "sarif", "--out", str(out)]) == 1
    results = json.loads(out.read_text())["runs"][0]["results"]
    location = results[0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"].endswith("plan-bad.json")
    assert location["logicalLocations"][0]["name"] in {"module.ml.databricks_cluster.chat", "databricks_job.train"}
    assert "region" not in location["physicalLocation"]  # a plan has no lines


@pytest.mark.parametrize(("text", "message"), [
    ('{"clusters": []}', "is not a Terraform plan's JSON (has 'clusters')"),
    ('{"format_version": "0.2", "resource_changes": []}', "format_version: is '0.2'; this reads the plan JSON of "
                                                          "format 1.x"),
    ("[1, 2]", "is not a Terraform plan's JSON"),
])
def test_what_is_not_a_plan_is_exit_2_naming_what_it_expected(capsys, tmp_path: Path, text: str,
                                                              message: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(text)
    code = main(["check", "--terraform-plan", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "1.x" in err


def test_one_source_of_clusters(capsys) -> None:
    assert main(["check", "--terraform-plan", str(GOOD), "--cluster-json", str(GOOD)]) == 2
    assert "--terraform-plan and --cluster-json are two sources of clusters" in capsys.readouterr().err
    assert main(["check", "--terraform", str(GOOD.parent), "--terraform-plan", str(GOOD), "--workspace"]) == 2
    assert "are several sources of clusters" in capsys.readouterr().err


def cost(capsys, *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["cost", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out) if out.strip() else {}


def test_both_clusters_of_a_good_plan_are_priced(capsys) -> None:
    """The inference cluster on the pool the plan creates (the configuration's reference says which) and the
    training job's cluster: priced as a stack's are (DBU + VM, spot, min/expected/max)."""
    code, doc = cost(capsys, "--terraform-plan", str(GOOD))
    assert code == 0
    by_name = {e["name"]: e for e in doc["cost"]["resources"].values()}
    chat, train = by_name["databricks_cluster.chat"], by_name["databricks_job.train"]
    assert chat["unpriced"] is None and chat["instance_pool"] == "databricks_instance_pool.inference"
    assert chat["nodes"] == {"min": 3, "max": 9} and chat["monthly"]["max"] > chat["monthly"]["expected"] > 0
    assert train["unpriced"] is None and train["monthly"]["expected"] > 0
    assert by_name["databricks_instance_pool.inference"]["monthly"]["expected"] > 0
    assert doc["cost"]["unpriced"] == []


def test_a_plan_against_another_is_a_cost_diff(capsys, tmp_path: Path) -> None:
    head = json.loads(GOOD.read_text())
    chat = next(rc for rc in head["resource_changes"] if rc["address"] == "databricks_cluster.chat")
    chat["change"]["after"]["autoscale"][0]["max_workers"] = 11
    path = tmp_path / "head.json"
    path.write_text(json.dumps(head))
    code, doc = cost(capsys, "--terraform-plan", str(path), "--against", str(GOOD))
    assert code == 0
    changed = [r for r in doc["diff"]["rows"] if r["status"] != "unchanged"]
    assert [r["name"] for r in changed] == ["databricks_cluster.chat"]
    assert changed[0]["delta"]["monthly_max"] > 0 and changed[0]["delta"]["monthly_min"] == 0


def test_the_bad_plan_is_priced_too(capsys) -> None:
    code, doc = cost(capsys, "--terraform-plan", str(BAD))
    assert code == 0  # cost fails only on a budget; check fails on the findings
    by_name = {e["name"]: e for e in doc["cost"]["resources"].values()}
    assert by_name["module.ml.databricks_cluster.chat"]["unpriced"] is None
    assert "databricks_cluster.gone" not in by_name


def test_the_terraform_workflow_example_is_clean_and_runs_commands_that_exist() -> None:
    """examples/terraform/github-workflow.yml: no zizmor finding, and every stackplan command in it parses."""
    import shlex

    from dbx_ai_infra.cli.cli import parser
    from tests.test_cli_cost import _zizmor

    workflow = EXAMPLES / "github-workflow.yml"
    assert _zizmor(workflow) == []
    text = workflow.read_text().replace("\\\n", " ")
    commands = [line.split("-m stackplan", 1)[1] for line in text.splitlines() if "-m stackplan" in line]
    assert len(commands) == 3
    for command in commands:
        argv = [a for a in shlex.split(command.split("||")[0].replace('"${against[@]}"', ""))]
        parser().parse_args(argv)  # exits (a SystemExit failing the test) on an unknown flag


def test_exceptions_accept_a_finding_by_address_and_refuse_a_typo(capsys, tmp_path: Path) -> None:
    accepted = tmp_path / "exceptions.yaml"
    accepted.write_text("exceptions:\n  - rule: databricks-cluster-disallow-all-spot-inference\n"
                        "    resource: module.ml.databricks_cluster.chat\n    reason: TICKET-42 canary fleet\n"
                        "    expires: 2999-01-31\n")
    code, doc, _ = check(capsys, "--terraform-plan", str(BAD), "--exceptions", str(accepted))
    assert code == 1  # the training job's findings still fail
    chat = [v for v in doc["violations"] if v["resource_name"] == "module.ml.databricks_cluster.chat"
            and v["policy"] == "databricks-cluster-disallow-all-spot-inference"]
    assert chat and all(v["exception"]["reason"] == "TICKET-42 canary fleet" for v in chat)
    expired = tmp_path / "expired.yaml"
    expired.write_text(accepted.read_text().replace("2999-01-31", "2020-01-31"))
    _, doc, _ = check(capsys, "--terraform-plan", str(BAD), "--exceptions", str(expired))
    assert all(v["exception"]["expired"] for v in doc["violations"] if v.get("exception"))
    typo = tmp_path / "typo.yaml"
    typo.write_text("- {rule: databricks-cluster-disallow-all-spot-inference, resource: databricks_cluster.chta, "
                    "reason: r}\n")
    assert main(["check", "--terraform-plan", str(BAD), "--exceptions", str(typo)]) == 2
    err = capsys.readouterr().err
    assert "exceptions[0].resource: names no resource of the plan or export" in err


def test_a_serving_endpoint_of_a_plan_is_judged_and_priced_like_a_stack_s(capsys, tmp_path: Path) -> None:
    code, doc = cost(capsys, "--terraform-plan", str(GOOD))
    endpoint = next(e for e in doc["cost"]["resources"].values() if e["name"] == "databricks_model_serving.chat_api")
    # GPU_MEDIUM, 4 provisioned (one replica), always warm: what the dev stack's GPU_MEDIUM endpoint costs an hour
    assert endpoint["unpriced"] is None and endpoint["hours_per_month"] == 730
    stack = cost(capsys, "--stack", "dev")[1]
    dev = next(e for e in stack["cost"]["resources"].values() if e["name"] == "dev-serving-chat-dev")
    assert endpoint["hourly"] == pytest.approx(dev["hourly"])
    plan = json.loads(GOOD.read_text())
    served = next(rc for rc in plan["resource_changes"] if rc["type"] == "databricks_model_serving")
    served["change"]["after"]["ai_gateway"][0]["rate_limits"] = []
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    code, out, _ = check(capsys, "--terraform-plan", str(path))
    assert out["checked"]["serving_endpoints"] == 1
    assert ("databricks-serving-require-rate-limit", "databricks_model_serving.chat_api") in \
        {(v["policy"], v["resource_name"]) for v in out["violations"]}


def _chat_change(plan: dict[str, Any]) -> dict[str, Any]:
    return next(rc for rc in plan["resource_changes"] if rc["address"] == "module.ml.databricks_cluster.chat")


def test_a_data_source_is_never_judged_or_priced_and_a_no_op_is_priced_not_judged(capsys, tmp_path: Path) -> None:
    """Issue 45: a deferred ``data "databricks_cluster"`` read (``mode: data``, ``actions: ["read"]``) is no resource
    the plan creates: the all-spot cluster it describes raised 3 mandatory findings and exit 1 on a plan that
    creates nothing. A resource the plan leaves as it is (``no-op``) exists: it is priced, but not judged."""
    bad = json.loads(BAD.read_text())
    read = copy.deepcopy(_chat_change(bad))
    read.update(mode="data", address="data.databricks_cluster.chat", name="chat")
    read["change"]["actions"] = ["read"]
    only_read = tmp_path / "read.json"
    only_read.write_text(json.dumps({**bad, "resource_changes": [read]}))
    code, doc, err = check(capsys, "--terraform-plan", str(only_read))
    assert (code, doc["violations"], doc["checked"]["clusters"]) == (0, [], 0), err
    assert terraform_items({**bad, "resource_changes": [read]}, "p") == []

    kept = copy.deepcopy(_chat_change(bad))
    kept["change"]["actions"] = ["no-op"]
    kept["change"]["before"] = kept["change"]["after"]
    unchanged = tmp_path / "noop.json"
    unchanged.write_text(json.dumps({**bad, "resource_changes": [kept, read]}))
    code, doc, err = check(capsys, "--terraform-plan", str(unchanged))
    assert (code, doc["violations"], doc["checked"]["unchanged"]) == (0, [], 1), err
    assert main(["check", "--terraform-plan", str(unchanged)]) == 0
    assert "1 resource the plan leaves unchanged (not judged)" in capsys.readouterr().out
    code, priced = cost(capsys, "--terraform-plan", str(unchanged))
    names = [e["name"] for e in priced["cost"]["resources"].values()]
    assert code == 0 and names == ["module.ml.databricks_cluster.chat"]
    assert priced["cost"]["total"]["monthly"]["expected"] > 0

    created = tmp_path / "created.json"
    created.write_text(json.dumps({**bad, "resource_changes": [_chat_change(bad), read]}))
    code, doc, _ = check(capsys, "--terraform-plan", str(created))
    assert code == 1 and {v["resource_name"] for v in doc["violations"]} == {"module.ml.databricks_cluster.chat"}
