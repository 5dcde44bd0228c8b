"""Generated cluster policies: every cluster a stack makes is allowed by its policy; bad clusters are refused."""

from __future__ import annotations

import json

import pytest
from conftest import SHIPPED, resources, with_

from dbx_ai_infra.dbxtypes.shape import ClusterShape, shapes_of_resource
from dbx_ai_infra.gpucatalog import load_catalog
from dbx_ai_infra.guardrails import evaluate, evaluate_shape, parse_definition
from dbx_ai_infra.guardrails.definitions import (
    POOL_ID_PLACEHOLDER,
    WorkloadLimits,
    pin_pool,
    pinned_pool,
    policy_definition,
)


def dbus_per_hour(shape: ClusterShape) -> float:
    node = load_catalog().get(shape.node_type_id or "g5.xlarge")
    return node.dbu_per_hour * (shape.max_workers + 1)


def policy_clusters(plan: dict):
    """(definition, cluster view) for every cluster in the plan that references a generated policy."""
    definitions = {r["id"]: json.loads(r["inputs"]["definition"]) for r in resources(plan, "clusterPolicy:ClusterPolicy")}
    for r in plan["resources"]:
        for view in shapes_of_resource(r["type"], r["inputs"]):
            yield definitions[view.props["policy_id"]], view


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_cluster_of_a_stack_is_allowed_by_its_generated_policy(stack, plan_of):
    plan = plan_of(stack)
    pairs = list(policy_clusters(plan))
    assert pairs, "the stack has no cluster under a policy"
    for definition, view in pairs:
        parse_definition(definition)  # a valid definition
        result = evaluate_shape(definition, view, dbus_per_hour=dbus_per_hour(view) if view.node_type_id else None)
        assert result.allowed, (stack, view.label, result.violations)


def test_policies_are_one_per_workload_with_can_use_permissions(plan_of):
    plan = plan_of("prod")
    policies = {r["inputs"]["name"] for r in resources(plan, "clusterPolicy:ClusterPolicy")}
    assert policies == {"prod-policy-training", "prod-policy-inference"}
    perms = {r["inputs"]["clusterPolicyId"]: r["inputs"]["accessControls"] for r in resources(plan, "permissions:Permissions")
             if "clusterPolicyId" in r["inputs"]}
    # the groups, and the identity the workload's clusters run as (issue 52, item 5)
    assert perms["prod-policy-inference-id"] == [{"groupName": "ml-engineers", "permissionLevel": "CAN_USE"},
                                                 {"groupName": "ml-serving", "permissionLevel": "CAN_USE"},
                                                 {"servicePrincipalName": "6f1c2b8e-4d3a-4b7e-9c21-0a5e8d7f3b64",
                                                  "permissionLevel": "CAN_USE"}]


def _limits(role, **over):
    base = dict(role=role, cloud="aws", node_types=["g5.xlarge", "g5.2xlarge"],
                tags={"workload": "genai", "cost_center": "ai-team"}, required_tags=("workload", "cost_center"),
                autotermination_minutes={"training": 60, "inference": 10, "interactive": 30}[role],
                max_autotermination_minutes=120, dbus_per_hour_max=None)
    base.update({"training": dict(num_workers=4), "inference": dict(min_workers=2, max_workers=10),
                 "interactive": {}}[role])
    base.update(over)
    return WorkloadLimits(**base)


GOOD = {
    "training": {"spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.xlarge",
                 "driver_node_type_id": "g5.xlarge", "num_workers": 4, "autotermination_minutes": 60,
                 "data_security_mode": "SINGLE_USER",
                 "aws_attributes": {"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 1},
                 "custom_tags": {"workload": "genai", "cost_center": "ai-team", "workload_type": "training"}},
    "inference": {"spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.xlarge",
                  "driver_node_type_id": "g5.xlarge", "autoscale": {"min_workers": 2, "max_workers": 10},
                  "autotermination_minutes": 10, "data_security_mode": "SINGLE_USER",
                  "aws_attributes": {"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 3},
                  "custom_tags": {"workload": "genai", "cost_center": "ai-team", "workload_type": "inference"}},
    # the current names (issue 52 item 11): one node by is_single_node, no legacy single-node Spark settings
    "interactive": {"spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.xlarge",
                    "driver_node_type_id": "g5.xlarge", "num_workers": 0, "autotermination_minutes": 30,
                    "kind": "CLASSIC_PREVIEW", "data_security_mode": "DATA_SECURITY_MODE_DEDICATED",
                    "is_single_node": True, "use_ml_runtime": True,
                    "aws_attributes": {"availability": "ON_DEMAND", "first_on_demand": 1},
                    "custom_tags": {"workload": "genai", "cost_center": "ai-team", "workload_type": "interactive"}},
}


# (role, change, the policy path that refuses it) - the bad clusters of the policy-pack rules
BAD = [
    ("inference", ("aws_attributes__first_on_demand", 1), "aws_attributes.first_on_demand"),  # all-spot inference
    ("inference", ("aws_attributes__availability", "SPOT"), "aws_attributes.availability"),
    ("inference", ("autoscale__max_workers", 50), "autoscale.max_workers"),
    ("training", ("autoscale", {"min_workers": 2, "max_workers": 8}), "autoscale.min_workers"),
    ("training", ("aws_attributes__availability", "SPOT"), "aws_attributes.availability"),
    ("training", ("azure_attributes", {"availability": "SPOT_WITH_FALLBACK_AZURE"}), "azure_attributes.availability"),
    ("training", ("spark_version", "17.3.x-scala2.13"), "spark_version"),
    ("training", ("node_type_id", "p3.2xlarge"), "node_type_id"),
    ("training", ("custom_tags__cost_center", "someone-else"), "custom_tags.cost_center"),
    ("training", ("runtime_engine", "PHOTON"), "runtime_engine"),
    ("interactive", ("autotermination_minutes", 0), "autotermination_minutes"),
    ("interactive", ("autotermination_minutes", 240), "autotermination_minutes"),
    ("interactive", ("is_single_node", False), "is_single_node"),
    ("interactive", ("data_security_mode", "DATA_SECURITY_MODE_STANDARD"), "data_security_mode"),  # no ML, no GPU
    ("training", ("data_security_mode", "USER_ISOLATION"), "data_security_mode"),  # the same, by its legacy name
    ("interactive", ("num_workers", 2), "num_workers"),
    ("interactive", ("gcp_attributes", {"availability": "ON_DEMAND_GCP"}), "gcp_attributes.availability"),
]


@pytest.mark.parametrize("role", list(GOOD))
def test_generated_policy_allows_the_compliant_cluster(role):
    assert evaluate(policy_definition(_limits(role)), GOOD[role]).allowed


@pytest.mark.parametrize("role, change, path", BAD, ids=[f"{r}-{c[0]}" for r, c, _ in BAD])
def test_generated_policy_refuses_bad_clusters(role, change, path):
    key, value = change
    result = evaluate(policy_definition(_limits(role)), with_(GOOD[role], **{key: value}))
    assert not result.allowed
    assert path in {v.path for v in result.violations}


def test_dbu_ceiling_and_job_cluster_type():
    training = policy_definition(_limits("training", dbus_per_hour_max=1.3637 * 5))
    assert evaluate(training, GOOD["training"], cluster_type="job", dbus_per_hour=1.3637 * 5).allowed
    over = evaluate(training, GOOD["training"], cluster_type="job", dbus_per_hour=1.3637 * 6)
    assert {v.path for v in over.violations} == {"dbus_per_hour"}
    inference = policy_definition(_limits("inference"))
    assert {v.path for v in evaluate(inference, GOOD["inference"], cluster_type="job").violations} == {"cluster_type"}


def _pinned(role="inference", pool="pool-1", **over):
    return pin_pool(policy_definition(_limits(role, pool_backed=True, **over)), pool)


def test_pool_backed_workload_omits_node_type_and_availability_and_is_pinned_to_its_pool():
    pooled = {k: v for k, v in GOOD["inference"].items()
              if k not in ("node_type_id", "driver_node_type_id", "aws_attributes")}
    pooled["instance_pool_id"] = pooled["driver_instance_pool_id"] = "pool-1"
    assert not evaluate(policy_definition(_limits("inference")), pooled).allowed
    assert evaluate(_pinned(), pooled).allowed
    other = {**pooled, "instance_pool_id": "pool-2", "driver_instance_pool_id": "pool-2"}
    assert {v.path for v in evaluate(_pinned(), other).violations} == {"instance_pool_id", "driver_instance_pool_id"}


def test_a_pool_backed_policy_refuses_the_seed_mistake_made_without_a_pool():
    """The seed's mistake made in the UI under a pool-backed inference policy: a node type and no attribute block
    means the cloud's default availability (spot on AWS), with the whole base on it. The policy pins the pool: a
    cluster that names its node type is refused; one that leaves the node out is put on the pool (fixed applies)."""
    bare = {k: v for k, v in GOOD["inference"].items() if k not in ("aws_attributes",)}
    outcome = evaluate(_pinned(), bare)
    assert not outcome.allowed
    assert {v.path for v in outcome.violations} == {"node_type_id", "driver_node_type_id"}
    nodeless = {k: v for k, v in bare.items() if k not in ("node_type_id", "driver_node_type_id")}
    assert evaluate(_pinned(), nodeless).allowed  # created under the policy: the policy sets the pool
    # the same cluster as a workspace export (the pool was never applied) is refused
    assert {"instance_pool_id", "driver_instance_pool_id"} <= {
        v.path for v in evaluate(_pinned(), nodeless, final=True).violations}


def test_a_pool_backed_policy_takes_the_driver_from_the_pool_whatever_driver_it_was_given():
    """Before (issue 52 audit): with a CPU driver the pinned policy forbade driver_instance_pool_id and required
    driver_node_type_id, which the provider never sends beside an instance_pool_id (ModifyRequestOnInstancePool): it
    refused the cluster it was made for."""
    definition = _pinned(driver_node_types=["m5.xlarge"])
    pooled = {k: v for k, v in GOOD["inference"].items() if k not in ("node_type_id", "aws_attributes")}
    pooled.update(instance_pool_id="pool-1", driver_instance_pool_id="pool-1")
    pooled.pop("driver_node_type_id", None)
    assert evaluate(definition, pooled).allowed
    assert "driver_node_type_id" in {v.path for v in evaluate(
        definition, {**pooled, "driver_node_type_id": "m5.xlarge"}).violations}


def test_a_definition_says_whether_it_needs_a_pool_id():
    unpinned = policy_definition(_limits("inference", pool_backed=True))
    assert pinned_pool(unpinned) and not pinned_pool(_pinned())
    assert not pinned_pool(policy_definition(_limits("inference")))
    assert unpinned["instance_pool_id"]["value"] == POOL_ID_PLACEHOLDER


def test_a_missing_required_tag_is_filled_in_by_the_policy_not_refused():
    """Databricks applies a fixed value to an attribute the user left out: the tag ends up set."""
    untagged = with_(GOOD["training"], custom_tags__cost_center=None)
    definition = policy_definition(_limits("training"))
    assert definition["custom_tags.cost_center"] == {"type": "fixed", "value": "ai-team"}
    assert evaluate(definition, untagged).allowed


# ---- the policy pack's own bad clusters (tests/test_policies_rules.py) against generated policies

from tests.test_policies_rules import CASES  # noqa: E402

#: Pack rules a cluster policy can express for the fixture's workload (the others: see the README's table).
EXPRESSIBLE = {
    "databricks-cluster-disallow-all-spot-inference": "inference",
    "databricks-cluster-disallow-autoscaled-or-spot-training": "training",
    "databricks-cluster-configure-worker-bounds": "inference",
    "databricks-cluster-require-matching-cloud-attributes": "inference",
    "databricks-cluster-require-matching-runtime": "inference",
    "databricks-cluster-require-autotermination": "training",
}


def _limits_for_fixture(cluster: dict, role: str) -> WorkloadLimits:
    tags = cluster["custom_tags"]
    if role == "training":
        sizes = dict(num_workers=cluster["num_workers"])
    else:
        sizes = dict(min_workers=cluster["autoscale"]["min_workers"], max_workers=cluster["autoscale"]["max_workers"])
    node = load_catalog().get(cluster["node_type_id"])
    return WorkloadLimits(role=role, cloud=node.cloud, tags=tags, required_tags=("workload", "cost_center"),
                          node_types=[n.node_type_id for n in load_catalog().family_nodes(node.cloud, node.family)],
                          autotermination_minutes=cluster["autotermination_minutes"],
                          max_autotermination_minutes=120, **sizes)


@pytest.mark.parametrize("rule", sorted(EXPRESSIBLE))
def test_the_policy_packs_bad_clusters_are_refused_by_the_generated_policy(rule):
    case, role = CASES[rule], EXPRESSIBLE[rule]
    definition = policy_definition(_limits_for_fixture(case.good, role))
    assert evaluate(definition, case.good).allowed, evaluate(definition, case.good).violations
    assert not evaluate(definition, case.bad).allowed


# --- the workspace policies follow the policy config (issue 24: they had drifted to the constant) -------------------

_IDLE = "databricks-cluster-require-autotermination"


@pytest.mark.parametrize(("config", "cap"), [
    (None, 120),  # the default
    ({_IDLE: {"max_autotermination_minutes": 60}}, 60),  # mandatory: the spec, the rule and the policies stop at 60
    ({_IDLE: "advisory"}, 120),  # advisory: the spec is unbounded, the workspace keeps the default cap
])
def test_exported_policies_cap_idle_time_at_the_policy_configs_threshold(tmp_path, config, cap):
    import json as _json

    from dbx_ai_infra.cli.cli import main

    args = ["export-policies", "--stack", "dev", "--out", str(tmp_path / "out")]
    if config is not None:
        (tmp_path / "config.json").write_text(_json.dumps(config))
        args += ["--policy-config", str(tmp_path / "config.json")]
    assert main(args) == 0
    definitions = [_json.loads(p.read_text()) for p in sorted((tmp_path / "out").glob("*.json"))]
    # training and inference take the cap; the dev policy stays at the dev cluster's own idle time (30 minutes)
    assert definitions and max(d["autotermination_minutes"]["maxValue"] for d in definitions) == cap


@pytest.mark.parametrize("stack", SHIPPED)
def test_the_inference_policy_and_component_share_the_on_demand_base(plan_of, stack):
    from dbx_ai_infra.dbxtypes.vocabulary import on_demand_base

    plan = plan_of(stack)
    checked = 0
    for cluster in [r for r in plan["resources"] if r["type"] == "databricks:index/cluster:Cluster"
                    and r["inputs"]["customTags"]["workload_type"] == "inference"]:
        block = next((k for k in ("awsAttributes", "azureAttributes", "gcpAttributes") if k in cluster["inputs"]), None)
        if block is None:  # on an instance pool: the (on-demand) pool decides
            continue
        (policy,) = [json.loads(r["inputs"]["definition"]) for r in plan["resources"]
                     if r["type"] == "databricks:index/clusterPolicy:ClusterPolicy"
                     and r["id"] == cluster["inputs"]["policyId"]]
        base = on_demand_base(cluster["inputs"]["autoscale"]["minWorkers"])
        assert cluster["inputs"][block]["firstOnDemand"] == base
        assert policy[f"{block.replace('Attributes', '_attributes')}.first_on_demand"]["minValue"] == base
        checked += 1
    assert checked or stack != "dev"  # dev's inference cluster has its own cloud block


def test_prods_inference_policy_refuses_a_cluster_with_no_attribute_block(plan_of):
    """Issue 26: prod's inference workload is pool-backed; a cluster made in the UI under its policy with no pool
    and no attribute block (spot by AWS's default) is refused, where it used to pass: the policy pins the pool."""
    import json

    plan = plan_of("prod")
    (definition,) = [json.loads(r["inputs"]["definition"]) for r in plan["resources"]
                     if r["type"] == "databricks:index/clusterPolicy:ClusterPolicy"
                     and json.loads(r["inputs"]["definition"]).get("custom_tags.workload_type", {}).get("value")
                     == "inference"]
    (cluster,) = [r["inputs"] for r in plan["resources"] if r["type"] == "databricks:index/cluster:Cluster"
                  and r["inputs"]["customTags"]["workload_type"] == "inference"]
    ui = {"spark_version": cluster["sparkVersion"], "autoscale": {"min_workers": 2, "max_workers": 4},
          "custom_tags": {k: v for k, v in cluster["customTags"].items()}, "data_security_mode": "SINGLE_USER",
          "autotermination_minutes": 0, "node_type_id": "g5.xlarge"}
    outcome = evaluate(definition, ui)
    assert not outcome.allowed and "node_type_id" in [v.path for v in outcome.violations]
    # the policy pins prod's own inference pool, which the plan makes first
    (pool,) = [r for r in plan["resources"] if r["type"] == "databricks:index/instancePool:InstancePool"]
    assert definition["instance_pool_id"] == {"type": "fixed", "value": pool["id"]}
