"""Issue 45, item 2: the Databricks checks peers make (KICS's Databricks queries), on Terraform plans, on workspace
exports and on what Pulumi sends: a token with no lifetime, an autoscale block missing a bound, a legacy
spark_submit_task, a spark_version that is no runtime key. Plans are written as ``terraform show -json`` writes
them (format_version, resource_changes[].change.after and after_unknown, blocks as lists of one object)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbx_ai_infra.cli.cli import main

TOKEN_RULE = "databricks-token-require-lifetime"
BOUNDS_RULE = "databricks-cluster-require-complete-autoscale-bounds"
SUBMIT_RULE = "databricks-job-disallow-spark-submit-task"
KEY_RULE = "databricks-cluster-require-runtime-key"
TAGS = {"workload": "etl", "cost_center": "data"}


def change(rtype: str, name: str, after: dict[str, Any], unknown: dict[str, Any] | None = None,
           actions: tuple[str, ...] = ("create",), mode: str = "managed") -> dict[str, Any]:
    prefix = "data." if mode == "data" else ""
    return {"address": f"{prefix}{rtype}.{name}", "mode": mode, "type": rtype, "name": name,
            "change": {"actions": list(actions), "before": None, "after": after, "after_unknown": unknown or {}}}


def plan(tmp_path: Path, *changes: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"format_version": "1.2", "terraform_version": "1.9.5",
                                "resource_changes": list(changes)}))
    return str(path)


def cpu_cluster(**fields: Any) -> dict[str, Any]:
    return {"cluster_name": "etl", "spark_version": "17.3.x-scala2.13", "node_type_id": "i3.xlarge",
            "autotermination_minutes": 30, "custom_tags": TAGS, **fields}


def check(capsys, *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", *argv, "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, json.loads(out)


def policies_of(doc: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in doc["violations"]:
        if v["enforcement"] != "not-judged":  # what a rule could not judge is said, and is no finding
            out.setdefault(v["policy"], []).append(v["resource_name"])
    return out


def test_a_token_without_a_lifetime_fails_and_one_with_a_lifetime_passes(capsys, tmp_path: Path) -> None:
    path = plan(tmp_path,
                change("databricks_token", "forever", {"comment": "ci", "lifetime_seconds": None},
                       {"token_value": True, "id": True}),
                change("databricks_token", "ninety_days", {"comment": "ci", "lifetime_seconds": 7776000},
                       {"token_value": True}),
                change("databricks_obo_token", "sp", {"application_id": "abc", "comment": "sp"},
                       {"token_value": True}))
    code, doc = check(capsys, "--terraform-plan", path)
    assert code == 1
    assert sorted(policies_of(doc)[TOKEN_RULE]) == ["databricks_obo_token.sp", "databricks_token.forever"]
    assert doc["checked"]["tokens"] == 3
    config = tmp_path / "pc.json"  # a maximum lifetime: no default, set by the team
    config.write_text(json.dumps({TOKEN_RULE: {"max_lifetime_seconds": 2592000}}))
    code, doc = check(capsys, "--terraform-plan", path, "--policy-config", str(config))
    assert len(policies_of(doc)[TOKEN_RULE]) == 3
    longest = next(v for v in doc["violations"] if v["resource_name"] == "databricks_token.ninety_days")
    assert "longer than the policy's maximum 2592000" in longest["message"]


def test_a_workspace_token_that_never_expires_is_reported(capsys, tmp_path: Path) -> None:
    export = tmp_path / "tokens.json"  # GET /api/2.0/token/list
    export.write_text(json.dumps({"token_infos": [
        {"token_id": "t1", "creation_time": 1733400000000, "expiry_time": -1, "comment": "laptop"},
        {"token_id": "t2", "creation_time": 1733400000000, "expiry_time": 1741176000000, "comment": "ci"}]}))
    code, doc = check(capsys, "--cluster-json", str(export))
    assert code == 1 and policies_of(doc) == {TOKEN_RULE: ["laptop"]}
    assert doc["checked"]["tokens"] == 2


def test_autoscale_with_a_bound_missing_fails_closed(capsys, tmp_path: Path) -> None:
    path = plan(tmp_path,
                change("databricks_cluster", "half", cpu_cluster(autoscale=[{"min_workers": 1, "max_workers": None}])),
                change("databricks_cluster", "whole", cpu_cluster(cluster_name="whole",
                                                                 autoscale=[{"min_workers": 1, "max_workers": 4}])))
    code, doc = check(capsys, "--terraform-plan", path)
    assert code == 1 and policies_of(doc)[BOUNDS_RULE] == ["databricks_cluster.half"]
    message = next(v["message"] for v in doc["violations"] if v["policy"] == BOUNDS_RULE)
    assert "autoscale sets no max_workers" in message


def test_a_spark_submit_task_fails_and_a_jar_task_passes(capsys, tmp_path: Path) -> None:
    new_cluster = [{"spark_version": "17.3.x-scala2.13", "node_type_id": "i3.xlarge", "num_workers": 2}]
    path = plan(tmp_path,
                change("databricks_job", "legacy", {"name": "legacy", "tags": TAGS, "task": [
                    {"task_key": "main", "new_cluster": new_cluster,
                     "spark_submit_task": [{"parameters": ["--class", "com.acme.Main", "/dbfs/a.jar"]}]}]}),
                change("databricks_job", "jar", {"name": "jar", "tags": TAGS, "task": [
                    {"task_key": "main", "new_cluster": new_cluster,
                     "spark_jar_task": [{"main_class_name": "com.acme.Main"}]}]}))
    code, doc = check(capsys, "--terraform-plan", path)
    assert code == 1 and policies_of(doc)[SUBMIT_RULE] == ["databricks_job.legacy"]
    assert "tasks[main] is a spark_submit_task" in next(v["message"] for v in doc["violations"]
                                                        if v["policy"] == SUBMIT_RULE)


def test_a_spark_version_that_is_no_runtime_key_fails_and_an_unknown_one_is_not_judged(capsys, tmp_path) -> None:
    path = plan(tmp_path,
                change("databricks_cluster", "spark", cpu_cluster(cluster_name="spark", spark_version="3.3.1",
                                                                  num_workers=1)),
                change("databricks_cluster", "looked_up", cpu_cluster(cluster_name="looked_up", spark_version=None,
                                                                      num_workers=1), {"spark_version": True}),
                change("databricks_cluster", "photon", cpu_cluster(
                    cluster_name="photon", spark_version="14.3.x-aarch64-photon-scala2.12", num_workers=1)))
    code, doc = check(capsys, "--terraform-plan", path)
    assert code == 1 and policies_of(doc)[KEY_RULE] == ["databricks_cluster.spark"]


def test_the_shipped_stacks_meet_the_new_rules(capsys) -> None:
    """What the project generates sets both autoscale bounds, runtime keys, no spark-submit task and no token."""
    code, doc = check(capsys, "--all")
    assert code == 0
    found = {v["policy"] for stack in doc["stacks"] for v in stack["violations"]} if "stacks" in doc else \
        {v["policy"] for v in doc["violations"]}
    assert not found & {TOKEN_RULE, BOUNDS_RULE, SUBMIT_RULE, KEY_RULE}


ACCESS_RULE = "databricks-resource-require-access-control"
OWNER_RULE = "databricks-job-require-service-principal-owner"


def _configured(address: str, rtype: str, attribute: str, target: str) -> dict[str, Any]:
    """A resource of the plan's configuration whose ``attribute`` references ``target`` (its id, unknown until
    apply): how ``terraform show -json`` writes ``cluster_id = databricks_cluster.x.id``."""
    return {"address": address, "mode": "managed", "type": rtype, "name": address.split(".")[-1],
            "expressions": {attribute: {"references": [f"{target}.id", target]}}}


def test_a_plan_s_permissions_say_who_may_use_its_clusters_and_jobs(capsys, tmp_path: Path) -> None:
    """Issue 45: a cluster or job with no access control list, or a job owned by a person, passed. The plan's
    databricks_permissions name their target through the configuration (the id is unknown until apply)."""
    job = {"name": "nightly", "tags": TAGS, "task": [{"task_key": "main", "spark_jar_task": [
        {"main_class_name": "com.acme.Main"}], "new_cluster": [
        {"spark_version": "17.3.x-scala2.13", "node_type_id": "i3.xlarge", "num_workers": 2}]}]}
    changes = [
        change("databricks_cluster", "shared", cpu_cluster(cluster_name="shared", num_workers=1),
               {"cluster_id": True}),
        change("databricks_cluster", "open", cpu_cluster(cluster_name="open", num_workers=1), {"cluster_id": True}),
        change("databricks_cluster", "mine", cpu_cluster(cluster_name="mine", num_workers=0,
                                                         single_user_name="ana@acme.com",
                                                         spark_conf={"spark.databricks.cluster.profile": "singleNode",
                                                                     "spark.master": "local[*]"},
                                                         custom_tags={**TAGS, "ResourceClass": "SingleNode"})),
        change("databricks_job", "nightly", job, {"id": True}),
        change("databricks_permissions", "shared", {"cluster_id": None, "access_control": [
            {"group_name": "data-eng", "permission_level": "CAN_ATTACH_TO"}]}, {"cluster_id": True}),
        change("databricks_permissions", "nightly", {"job_id": None, "access_control": [
            {"user_name": "ana@acme.com", "permission_level": "IS_OWNER"},
            {"group_name": "data-eng", "permission_level": "CAN_MANAGE_RUN"}]}, {"job_id": True}),
    ]
    configuration = {"root_module": {"resources": [
        _configured("databricks_permissions.shared", "databricks_permissions", "cluster_id",
                    "databricks_cluster.shared"),
        _configured("databricks_permissions.nightly", "databricks_permissions", "job_id", "databricks_job.nightly"),
    ]}}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"format_version": "1.2", "terraform_version": "1.9.5", "resource_changes": changes,
                                "configuration": configuration}))
    code, doc = check(capsys, "--terraform-plan", str(path))
    found = policies_of(doc)
    assert found[ACCESS_RULE] == ["databricks_cluster.open"]  # the shared one is granted, mine is dedicated
    assert found[OWNER_RULE] == ["databricks_job.nightly"]
    assert code == 0  # both advisory
    owner = next(v["message"] for v in doc["violations"] if v["policy"] == OWNER_RULE)
    assert "is user 'ana@acme.com'" in owner

    # the owner a service principal: no finding; the job's Permissions gone: the job says who may run it no more
    changes[5]["change"]["after"]["access_control"][0] = {"service_principal_name": "6f1c2b8e-4d3a-4b7e-9c21-0a5e8d7f3b64",
                                                          "permission_level": "IS_OWNER"}
    path.write_text(json.dumps({"format_version": "1.2", "resource_changes": changes, "configuration": configuration}))
    assert OWNER_RULE not in policies_of(check(capsys, "--terraform-plan", str(path))[1])
    path.write_text(json.dumps({"format_version": "1.2", "resource_changes": changes[:5],
                                "configuration": configuration}))
    assert sorted(policies_of(check(capsys, "--terraform-plan", str(path))[1])[ACCESS_RULE]) == \
        ["databricks_cluster.open", "databricks_job.nightly"]


def test_a_workspace_export_holds_no_permissions_so_access_is_not_judged(capsys, tmp_path: Path) -> None:
    export = tmp_path / "clusters.json"
    export.write_text(json.dumps({"clusters": [cpu_cluster(cluster_id="0101-a", num_workers=1)]}))
    code, doc = check(capsys, "--cluster-json", str(export))
    assert ACCESS_RULE not in policies_of(doc)
