"""Several workloads of a role (``dbx-ai-infra:workloads``, issue 28 part 1): names, resources, keyed sections, prices,
findings and advise targets per workload."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import BASE_CONFIG, run_cli

from dbx_ai_infra.dbxtypes.vocabulary import WORKLOAD_TAG

CLUSTER, JOB = "databricks:index/cluster:Cluster", "databricks:index/job:Job"
POLICY, POOL = "databricks:index/clusterPolicy:ClusterPolicy", "databricks:index/instancePool:InstancePool"

#: Two inference models and two fine-tunes, each with a job and asking for its all-purpose cluster too, beside the role
#: sections of BASE_CONFIG.
ESTATE: dict[str, Any] = {
    **copy.deepcopy(BASE_CONFIG),
    "dbx-ai-infra:workloads": {
        "chat": {"role": "inference", "min_workers": 2, "max_workers": 8,
                 "model": {"params_billions": 7, "precision": "fp16"}},
        "embed": {"role": "inference", "min_workers": 2, "max_workers": 4, "autotermination_minutes": 60,
                  "model": {"params_billions": 1, "precision": "fp16"}},
        "ft-a": {"role": "training", "num_workers": 2, "model": {"params_billions": 1, "precision": "bf16"},
                 "job": {"python_file": "/Workspace/a.py"}, "all_purpose_cluster": True},
    },
}


def plan_json(capsys, path: Path) -> dict[str, Any]:
    code, out, err = run_cli(capsys, "preview", "--stack", str(path), "--json")
    assert code == 0, err
    return json.loads(out)


def with_(config: dict[str, Any], **sections: Any) -> dict[str, Any]:
    out = copy.deepcopy(config)
    out.update({f"dbx-ai-infra:{k}": v for k, v in sections.items()})
    return out


def tags_of(resource: dict[str, Any]) -> dict[str, str]:
    inputs = resource["inputs"]
    if resource["type"] == JOB:
        return inputs["jobClusters"][0]["newCluster"]["customTags"]
    return inputs["customTags"]


# ---- one of everything per workload --------------------------------------------------------------------------------

def test_each_workload_gets_its_own_cluster_policy_tag_prices_and_sizing(write_stack, capsys):
    plan = plan_json(capsys, write_stack(ESTATE))
    by_name = {r["name"]: r for r in plan["resources"]}
    for workload in ("training", "inference", "dev", "chat", "embed", "ft-a"):
        cluster = by_name[f"test-{workload}-cluster"]
        assert cluster["inputs"]["clusterName"] == f"test-{workload}"
        assert tags_of(cluster)[WORKLOAD_TAG] == workload
        assert by_name[f"test-policy-{workload}"]["type"] == POLICY
        assert cluster["inputs"]["policyId"]  # under its own policy
        assert plan["cost"]["resources"][cluster["urn"]]["monthly"]["expected"] > 0
    for workload in ("training", "ft-a"):  # each job's cluster carries its workload too
        assert tags_of(by_name[f"test-{workload}-job"])[WORKLOAD_TAG] == workload
    sizing = {z["workload"]: z for z in plan["sizing"]}
    assert [z["workload"] for z in plan["sizing"]] == ["training", "inference", "dev", "chat", "embed", "ft-a"]
    assert sizing["embed"]["section"] == "inference" and sizing["embed"]["need_gb"] == 2.4
    assert sizing["chat"]["need_gb"] == 16.8
    code, table, _ = run_cli(capsys, "preview", "--stack", str(write_stack(ESTATE)))
    assert code == 0 and "embed (inference): 1B x 2 B x 1.2 = 2.4 GB" in table


def test_the_role_sections_keep_their_names_and_outputs(write_stack, capsys, plan_of):
    """A stack without workloads makes what it made before: the shipped prod keeps prod-training, prod-inference."""
    plan = plan_of("prod")
    names = {r["name"] for r in plan["resources"]}
    assert {"prod-training", "prod-inference", "prod-inference-pool", "prod-policy-training"} <= names
    assert not any(n.startswith("prod-workloads") for n in names)


def test_a_role_name_is_every_workload_s_default_and_a_name_wins(write_stack, capsys):
    config = with_(ESTATE,
                   instance_pools={"inference": {"min_idle_instances": 1, "max_capacity": 12},
                                   "embed": {"min_idle_instances": 0, "max_capacity": 6}},
                   cluster_policies={"can_use": {"inference": ["serving"], "chat": ["chat-team"]}},
                   permissions={"ft-a": {"job": [{"group_name": "research", "permission_level": "CAN_MANAGE_RUN"}]}})
    plan = plan_json(capsys, write_stack(config))
    by_name = {r["name"]: r for r in plan["resources"]}
    pools = {n: r["inputs"] for n, r in by_name.items() if r["type"] == POOL}
    # one pool per inference workload, each of its own node type; embed's own entry wins over the role's
    assert pools["test-inference-pool-pool"]["minIdleInstances"] == 1
    assert pools["test-chat-pool-pool"]["maxCapacity"] == 12
    assert pools["test-embed-pool-pool"]["maxCapacity"] == 6 and pools["test-embed-pool-pool"]["minIdleInstances"] == 0
    assert by_name["test-chat-cluster"]["inputs"]["instancePoolId"]
    assert "nodeTypeId" not in by_name["test-chat-cluster"]["inputs"]

    def groups(name: str) -> list[str]:
        return [c["groupName"] for c in by_name[name]["inputs"]["accessControls"] if "groupName" in c]

    assert groups("test-policy-chat-permissions") == ["chat-team"]
    assert groups("test-policy-embed-permissions") == ["serving"]
    assert groups("test-policy-inference-permissions") == ["serving"]
    assert "research" in groups("test-ft-a-job-permissions")
    assert "research" not in groups("test-training-job-permissions")


def test_a_workload_s_own_usage_prices_it(write_stack, capsys):
    config = with_(ESTATE, usage={"inference_burst_hours_per_month": 60, "embed": {"inference_hours_per_month": 300},
                                  "ft-a": {"training_job_hours_per_month": 10}})
    plan = plan_json(capsys, write_stack(config))
    entries = {plan_r["name"]: plan["cost"]["resources"][plan_r["urn"]] for plan_r in plan["resources"]
               if plan_r["urn"] in plan["cost"]["resources"]}
    embed, chat = entries["test-embed-cluster"], entries["test-chat-cluster"]
    assert embed["hours_per_month"] == 300 and "inference_hours_per_month.embed" in embed["hours_basis"]
    assert chat["hours_per_month"] == 730  # always on: autotermination 0
    ft, training = entries["test-ft-a-job"], entries["test-training-job"]
    assert ft["hours_per_month"] == 10 and training["hours_per_month"] == 80  # the stack's default
    assert plan["assumptions"]["inference_hours_per_month.embed"] == 300


# ---- names ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("workloads", "sections", "rule"), [
    ({"Chat": {"role": "dev"}}, {}, "'Chat' is not a workload name: lower-case letters"),
    ({"chat-": {"role": "dev"}}, {}, "'chat-' is not a workload name"),
    ({"uc": {"role": "dev"}}, {}, "collides with the Unity Catalog storage"),
    ({"policy": {"role": "dev"}}, {}, "collides with the cluster policies"),
    ({"gpu-collector": {"role": "dev"}}, {}, "collides with the GPU collector"),
    ({"serving-chat": {"role": "dev"}}, {}, "names starting with serving- are kept for the serving endpoints' resources"),
    ({"chat": {"role": "dev"}, "chat-pool": {"role": "dev"}}, {}, "collides with the instance pool of workload chat"),
    ({"dev-pool": {"role": "dev"}}, {}, "collides with the instance pool of workload dev"),
    ({"inference": {"role": "inference", "model": {"params_billions": 1}}}, {}, "the name 'inference' is used twice"),
    ({"training": {"role": "training", "num_workers": 1, "model": {"params_billions": 1}}}, {"training": None},
     "a role's name is its section's workload"),
    ({"x": {"min_workers": 1}}, {}, "has no role. Fix: add role: training, inference or dev"),
])
def test_a_bad_or_colliding_name_is_exit_2_with_the_rule(write_stack, capsys, tmp_path, workloads, sections, rule):
    config = with_(BASE_CONFIG, workloads=workloads)
    for key, value in sections.items():
        config.pop(f"dbx-ai-infra:{key}") if value is None else config.update({f"dbx-ai-infra:{key}": value})
    out = tmp_path / "plan.json"
    code, _, err = run_cli(capsys, "preview", "--stack", str(write_stack(config)), "--json", "--out", str(out))
    assert code == 2 and rule in err and "dbx-ai-infra:workloads" in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(("sections", "rule"), [
    ({"instance_pools": {"chta": {"min_idle_instances": 1}}}, "instance_pools.chta names no workload of the stack"),
    ({"cluster_policies": {"can_use": {"nope": ["g"]}}}, "cluster_policies.can_use.nope names no workload"),
    ({"permissions": {"embed": {"job": [{"group_name": "g", "permission_level": "CAN_VIEW"}]}}},
     "permissions.embed.job is set but embed makes no job"),
    ({"usage": {"chat": {"training_hours_per_month": 5}}}, "usage.chat.training_hours_per_month does not apply"),
    ({"usage": {"chat": {"pool_idle_hours_per_month": 5}}}, "without a pool"),
    ({"usage": {"inference_hours_per_mnth": 5}}, "'inference_hours_per_mnth' is not a usage assumption"),
    ({"usage": {"ghost": {"inference_hours_per_month": 5}}}, "usage.ghost names no workload"),
])
def test_a_key_that_names_no_workload_is_refused(write_stack, capsys, sections, rule):
    code, _, err = run_cli(capsys, "preview", "--stack", str(write_stack(with_(ESTATE, **sections))))
    assert code == 2 and rule in err, err


# ---- findings, diffs and advice per workload --------------------------------------------------------------------------

def test_a_cost_diff_has_a_row_per_changed_workload(write_stack, capsys, tmp_path):
    base = write_stack(ESTATE, name="base")
    changed = copy.deepcopy(ESTATE)
    changed["dbx-ai-infra:workloads"]["embed"]["max_workers"] = 6
    code, out, err = run_cli(capsys, "cost", "--stack", str(write_stack(changed, name="head")), "--against", str(base),
                         "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["diff"]["rows"]
    assert [r["name"] for r in rows if r["status"] != "unchanged"] == ["head-embed-cluster"]
    (row,) = [r for r in rows if r["status"] != "unchanged"]
    assert row["delta"]["monthly_max"] > 0 and row["delta"]["monthly_min"] == 0


def test_a_finding_on_a_workload_points_at_its_workloads_entry(write_stack, capsys):
    """A workload's finding is located at its own field in the stack file (GitHub annotations, SARIF), the role
    section's at the stack-wide field it inherits."""
    config = copy.deepcopy(ESTATE)
    config["dbx-ai-infra:workloads"]["ft-a"]["gpu_family"] = "a10g"  # multi-node training without an interconnect
    path = write_stack(config)
    code, out, _ = run_cli(capsys, "check", "--stack", str(path), "--format", "github")
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.strip() == "ft-a:")
    own = next(i for i, line in enumerate(lines, 1) if i > start and line.strip().startswith("gpu_family:"))
    stack_wide = next(i for i, line in enumerate(lines, 1) if line.startswith("  dbx-ai-infra:gpu_family:"))

    def line_of(resource: str) -> int:
        found = next(line for line in out.splitlines() if f"::{resource}:" in line)
        return int(found.split(",line=", 1)[1].split(",", 1)[0])

    assert code == 0
    assert line_of("test-ft-a-cluster") == own and line_of("test-ft-a-job") == own
    assert line_of("test-training-cluster") == stack_wide


def test_the_job_compute_advice_pairs_each_cluster_with_its_own_job(write_stack, capsys):
    config = with_(ESTATE)
    config["dbx-ai-infra:workloads"]["ft-b"] = {
        "role": "training", "num_workers": 2, "model": {"params_billions": 3, "precision": "bf16"},
        "job": {"python_file": "/Workspace/b.py"}, "all_purpose_cluster": True}
    plan = plan_json(capsys, write_stack(config))
    advice = {a["resource_name"]: a["message"] for a in plan["advice"] if a["id"] == "training-on-job-compute"}
    assert "(test-ft-b-job," in advice["test-ft-b-cluster"]
    assert "dbx-ai-infra:workloads.ft-b.all_purpose_cluster: false" in advice["test-ft-b-cluster"]
    assert "(test-training-job," in advice["test-training-cluster"]
    assert "dbx-ai-infra:training.all_purpose_cluster: false" in advice["test-training-cluster"]


def _advise(capsys, stack: Path, usage: Path, out: Path, *extra: str) -> dict[str, Any]:
    code, _, err = run_cli(capsys, "advise", "--stack", str(stack), "--usage", str(usage), "--json", "--out", str(out),
                       *extra)
    assert code == 0, err
    return json.loads(out.read_text())


def test_advise_matches_each_job_run_to_its_workload_by_tag(write_stack, capsys, tmp_path):
    """Two training workloads' job clusters (names made up per run) go each to its own workload by dbx_workload; a
    run without the tag (made before it) is matched by role only where the role has one workload."""
    from dbx_ai_infra.advise.telemetry import write_exports
    from dbx_ai_infra.engine.pipeline import build_plan

    path = write_stack(ESTATE)
    plan = build_plan(str(path), with_policies=False, with_cost=True)
    usage = tmp_path / "usage"
    write_exports(usage, plan, plant=[], days=2)
    doc = _advise(capsys, path, usage, tmp_path / "a.json")
    runs = {w["workload"]: w["runs"] for w in doc["workloads"]}
    assert runs["test-ft-a-run"] > 0 and runs["test-training-run"] > 0
    assert runs["test-chat"] > 0 and runs["test-embed"] > 0

    # the same exports without the dbx_workload tag: training is shared, so its job runs match no workload
    rows = list(csv.DictReader((usage / "clusters.csv").open()))
    for row in rows:
        tags = json.loads(row["tags"])
        tags.pop(WORKLOAD_TAG)
        row["tags"] = json.dumps(tags)
    with (usage / "clusters.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["cluster_id", "cluster_name", "tags"])
        writer.writeheader()
        writer.writerows(rows)
    doc = _advise(capsys, path, usage, tmp_path / "b.json")
    runs = {w["workload"]: w["runs"] for w in doc["workloads"]}
    assert not runs.get("test-ft-a-run") and not runs.get("test-training-run")
    assert runs["test-chat"] > 0  # all-purpose clusters match by name

    # a stack with one training workload matches an untagged job run by role (deployments before the tag)
    single = write_stack(with_(BASE_CONFIG), name="single")
    plan = build_plan(str(single), with_policies=False, with_cost=True)
    write_exports(tmp_path / "one", plan, plant=[], days=2)
    rows = list(csv.DictReader((tmp_path / "one" / "clusters.csv").open()))
    for row in rows:
        row["tags"] = json.dumps({k: v for k, v in json.loads(row["tags"]).items() if k != WORKLOAD_TAG})
    with (tmp_path / "one" / "clusters.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["cluster_id", "cluster_name", "tags"])
        writer.writeheader()
        writer.writerows(rows)
    doc = _advise(capsys, single, tmp_path / "one", tmp_path / "c.json")
    assert {w["workload"]: w["runs"] for w in doc["workloads"]}["single-training-run"] > 0


def test_an_advise_proposal_edits_the_workloads_entry_and_the_stack_accepts_it(write_stack, capsys, tmp_path):
    from dbx_ai_infra.advise.telemetry import write_exports
    from dbx_ai_infra.engine.pipeline import build_plan

    path = write_stack(ESTATE)
    plan = build_plan(str(path), with_policies=False, with_cost=True)
    write_exports(tmp_path / "usage", plan, plant=["spot-reclaim-hits-base", "idle-cluster"], days=2)
    nxt = tmp_path / "Pulumi.next.yaml"
    doc = _advise(capsys, path, tmp_path / "usage", tmp_path / "a.json", "--write-stack", str(nxt))
    edits = {k: v for f in doc["findings"] if f.get("proposal") for k, v in f["proposal"]["edit"].items()}
    assert any(k.startswith("dbx-ai-infra:workloads.chat.") for k in edits) or \
        any(k.startswith("dbx-ai-infra:inference.") for k in edits), edits
    # the role-named dev workload's usage edit keeps the other dev workloads' figures (none here) and the file loads
    written = yaml.safe_load(nxt.read_text())["config"]
    for key, value in edits.items():
        node: Any = written
        for part in key.removeprefix("dbx-ai-infra:").split(".")[:1]:
            node = node.get(f"dbx-ai-infra:{part}", node.get(part))
        for part in key.removeprefix("dbx-ai-infra:").split(".")[1:]:
            node = node[part]
        assert node == value
    code, _, err = run_cli(capsys, "check", "--stack", str(nxt))
    assert code == 0, err


def test_a_usage_edit_of_a_role_named_workload_keeps_the_other_workloads_figures(write_stack, capsys, tmp_path):
    """``usage.dev`` is the dev workload's and every dev workload's default: advise lowering the dev workload's hours
    writes the other dev workload's current figure under its own name, so only the idle one changes."""
    from dbx_ai_infra.advise.telemetry import write_exports
    from dbx_ai_infra.engine.pipeline import build_plan

    config = with_(ESTATE)
    config["dbx-ai-infra:dev"]["autotermination_minutes"] = 60
    config["dbx-ai-infra:workloads"]["nb"] = {"role": "dev"}
    path = write_stack(config)
    plan = build_plan(str(path), with_policies=False, with_cost=True)
    write_exports(tmp_path / "usage", plan, plant=["idle-cluster"], days=2)
    nxt = tmp_path / "Pulumi.next.yaml"
    doc = _advise(capsys, path, tmp_path / "usage", tmp_path / "a.json", "--write-stack", str(nxt))
    (idle,) = [f for f in doc["findings"] if f["id"] == "idle-cluster"]
    edit = idle["proposal"]["edit"]
    assert idle["workload"] == "test-dev" and edit["dbx-ai-infra:usage.dev.dev_hours_per_working_day"] < 6
    assert edit["dbx-ai-infra:usage.nb.dev_hours_per_working_day"] == 6  # its figure, kept
    before = plan_json(capsys, path)
    after = plan_json(capsys, nxt)

    def monthly(p: dict[str, Any], name: str) -> float:
        urn = next(r["urn"] for r in p["resources"] if r["name"] == name)
        return p["cost"]["resources"][urn]["monthly"]["expected"]

    assert monthly(after, "next-nb-cluster") == monthly(before, "test-nb-cluster")
    assert monthly(after, "next-dev-cluster") < monthly(before, "test-dev-cluster")
