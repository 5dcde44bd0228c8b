"""The CrossGuard wrapping, in process: build_policies() and each policy's validate (no server is started)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER
from dbx_ai_infra.policies.pack import build_policies
from dbx_ai_infra.policies.registry import ALL_RULES, RULES_BY_NAME, evaluate_resource

POLICIES_DIR = Path(__file__).resolve().parent.parent / "policies"
BOUNDS = "databricks-cluster-configure-worker-bounds"

BAD_CLUSTER = {"numWorkers": 100.0, "autoscale": {"minWorkers": 9.0, "maxWorkers": 8.0},
               "sparkVersion": "17.3.x-scala2.13", "nodeTypeId": "g5.2xlarge",
               "azureAttributes": {"availability": "SPOT_AZURE"}, "autoterminationMinutes": 0.0,
               "customTags": {"workload_type": "inference"},
               "sparkEnvVars": {"HF_TOKEN": "hf_plain", "HF_HOME": "/dbfs/hf"}}


def args_for(rtype: str, props: dict, config: dict | None = None) -> ResourceValidationArgs:
    opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])
    return ResourceValidationArgs(rtype, unknown_checking_proxy(props), "urn:test", "test", opts, None, config)


def collect(policy: ResourceValidationPolicy, args: ResourceValidationArgs) -> list[tuple[str, str | None]]:
    reported: list[tuple[str, str | None]] = []
    policy.validate(args, lambda message, urn=None: reported.append((message, urn)))
    return reported


def resource_policies(config=None) -> list:
    return [p for p in build_policies(config) if isinstance(p, ResourceValidationPolicy)]


def test_one_policy_per_rule_with_metadata() -> None:
    everything = build_policies()
    assert [p.name for p in everything] == [r.name for r in ALL_RULES] + ["databricks-stack-budget"]
    assert isinstance(everything[-1], StackValidationPolicy)
    for policy, rule in zip(everything, [*ALL_RULES, RULES_BY_NAME["databricks-stack-budget"]], strict=True):
        # a rule judged with its plan, or a stack rule: a stack validation, with the same metadata
        assert isinstance(policy, ResourceValidationPolicy if rule.scope == "resource" else StackValidationPolicy)
        assert (policy.description, policy.enforcement_level, policy.severity, policy.remediation_steps) == \
            (rule.description, EnforcementLevel(rule.enforcement), Severity(rule.severity), rule.remediation)
    policies = resource_policies()
    for policy, rule in zip(policies, [r for r in ALL_RULES if r.scope == "resource"], strict=True):
        assert isinstance(policy, ResourceValidationPolicy)
        assert policy.description == rule.description
        assert policy.enforcement_level == EnforcementLevel(rule.enforcement)
        assert policy.severity == Severity(rule.severity)
        assert policy.remediation_steps == rule.remediation
        if rule.thresholds:
            props = policy.config_schema.properties
            assert {k: v["default"] for k, v in props.items()} == {
                k: list(v) if isinstance(v, tuple) else v for k, v in rule.thresholds.items()}
        else:
            assert policy.config_schema is None


def test_config_changes_levels_and_defaults() -> None:
    policies = {p.name: p for p in build_policies({BOUNDS: {"enforcementLevel": "disabled", "max_workers_cap": 8}})}
    assert policies[BOUNDS].enforcement_level == EnforcementLevel.DISABLED
    assert policies[BOUNDS].config_schema.properties["max_workers_cap"]["default"] == 8


def test_validate_matches_evaluate_resource() -> None:
    expected = evaluate_resource(CLUSTER, BAD_CLUSTER, urn="urn:test", name="test")
    got = []
    for policy in resource_policies():
        got += [(policy.name, message, urn) for message, urn in collect(policy, args_for(CLUSTER, BAD_CLUSTER))]
    assert got == [(v.policy, v.message, "urn:test") for v in expected]
    assert len({v.policy for v in expected}) >= 6


def test_validate_uses_runtime_config() -> None:
    (policy,) = [p for p in build_policies() if p.name == BOUNDS]
    props = {"numWorkers": 100.0, "customTags": {"workload": "x", "cost_center": "y"}}
    assert collect(policy, args_for(CLUSTER, props))
    assert collect(policy, args_for(CLUSTER, props, {"max_workers_cap": 128.0})) == []
    with pytest.raises(ValueError, match="max_workers_cap"):
        collect(policy, args_for(CLUSTER, props, {"max_workers_cap": "lots"}))


def test_validate_ignores_other_types_and_judges_known_fields_beside_unknown_ones() -> None:
    for policy in resource_policies():
        assert collect(policy, args_for("databricks:index/notebook:Notebook", BAD_CLUSTER)) == []
    (policy,) = [p for p in build_policies() if p.name == BOUNDS]
    props = {"instancePoolId": UNKNOWN_STRING_VALUE, "numWorkers": 100.0,
             "customTags": {"workload": "x", "cost_center": UNKNOWN_STRING_VALUE}}
    assert collect(policy, args_for(CLUSTER, props))  # 100 workers is over the cap, whatever the pool id is
    assert collect(policy, args_for(CLUSTER, {**props, "numWorkers": 2.0})) == []


def test_pack_project_files() -> None:
    project = yaml.safe_load((POLICIES_DIR / "PulumiPolicy.yaml").read_text())
    assert project["runtime"]["name"] == "python"
    assert project["runtime"]["options"]["virtualenv"]
    requirements = (POLICIES_DIR / "requirements.txt").read_text().split()
    assert {"pulumi-policy==1.21.0", "pulumi==3.272.0", "PyYAML==6.0.3"} <= set(requirements)
    assert not any(r.startswith("pulumi-databricks") for r in requirements)



def test_the_pack_entry_point_serves_every_policy_the_pack_builds(monkeypatch) -> None:
    """`pulumi preview --policy-pack policies` runs policies/__main__.py, which must construct one PolicyPack of the
    pack's name with every policy `build_policies` makes (the real constructor serves gRPC and blocks, so a recorder
    stands in for it; the gRPC test serves the real one)."""
    import runpy

    import pulumi_policy

    from dbx_ai_infra.policies.pack import PACK_NAME, build_policies

    made: list[dict] = []
    monkeypatch.setattr(pulumi_policy, "PolicyPack", lambda **kwargs: made.append(kwargs))
    runpy.run_path(str(POLICIES_DIR / "__main__.py"), run_name="__main__")
    (pack,) = made
    assert pack["name"] == PACK_NAME and pack["description"]
    assert [p.name for p in pack["policies"]] == [p.name for p in build_policies()] and pack["policies"]


def test_the_budget_runs_as_a_stack_validation_policy_priced_with_the_shipped_book(plan_of) -> None:
    """Under `pulumi preview` the budget's limits come in the pack config; the stack is priced with the shipped price
    book and the usage assumptions given there."""
    from dbx_ai_infra.policies.pack import budget_violations

    plan = plan_of("prod")
    resources = [{"urn": r["urn"], "id": r["id"], "type": r["type"], "name": r["name"], "inputs": r["inputs"]}
                 for r in plan["resources"]]
    assert budget_violations(resources, "prod", {}) == []  # no limit set: nothing to judge
    assert budget_violations(resources, "prod", {"monthly_expected_max": 10 ** 6}) == []
    (message,) = budget_violations(resources, "prod", {"monthly_expected_max": 1000})
    assert "over budget.monthly_expected_max $1,000.00" in message and "prod-training-job" in message
    # the usage assumptions move the month: fewer training hours, a smaller bill
    lean = budget_violations(resources, "prod", {"monthly_expected_max": 1000,
                                                 "usage": {"training_job_hours_per_month": 1}})
    assert lean and lean[0] != message
    # the stack's region prices it there (issue 43): eu-west-1's g5 nodes and serving cost more than us-east-1's
    # (dev: every node type it uses has an eu-west-1 price; prod's g5.xlarge has none in ap-southeast-1, issue 53)
    dev = [{"urn": r["urn"], "id": r["id"], "type": r["type"], "name": r["name"], "inputs": r["inputs"]}
           for r in plan_of("dev")["resources"]]
    (us,) = budget_violations(dev, "dev", {"monthly_expected_max": 100})
    (eu,) = budget_violations(dev, "dev", {"monthly_expected_max": 100, "region": "eu-west-1"})

    def month(text: str) -> float:
        found = re.match(r"the stack costs \$([\d,]+\.\d\d) a month", text)
        assert found, text
        return float(found.group(1).replace(",", ""))

    assert month(eu) > month(us)
    # a node type with no price in the region: the budget cannot be verified, naming what is unpriced (issue 53)
    unpriced = budget_violations(resources, "prod", {"monthly_expected_max": 10 ** 6, "region": "ap-southeast-1"})
    assert any("cannot be verified" in m and "prod-inference-cluster" in m for m in unpriced), unpriced
    # a region the pack cannot price at fails the budget closed, saying why
    (wrong,) = budget_violations(resources, "prod", {"monthly_expected_max": 10 ** 6, "region": "westeurope"})
    assert "cannot be judged" in wrong and "'westeurope' is not an AWS region name" in wrong
    (policy,) = [p for p in build_policies() if p.name == "databricks-stack-budget"]
    assert isinstance(policy, StackValidationPolicy)


def test_the_pack_reads_a_usage_section_keyed_by_workload_as_the_offline_engine_does(plan_of) -> None:
    """The budget policy's ``usage`` is the stack's usage section: a workload's own figures (by its dbx_workload tag),
    a role's entry the default of that role's workloads, the same assumptions the offline preview prices by."""
    import yaml

    from dbx_ai_infra.dbxtypes.stack_files import STACKS_DIR
    from dbx_ai_infra.policies.pack import pack_assumptions
    from dbx_ai_infra.stackspec import load_stack

    plan = plan_of("estate")
    resources = [{"urn": r["urn"], "id": r["id"], "type": r["type"], "name": r["name"], "inputs": r["inputs"]}
                 for r in plan["resources"]]
    usage = yaml.safe_load((STACKS_DIR / "Pulumi.estate.yaml").read_text())["config"]["dbx-ai-infra:usage"]
    got = pack_assumptions(usage, resources, "aws")
    assert got["inference_hours_per_month.embed"] == 300 and got["training_job_hours_per_month.llama-ft"] == 120
    offline = load_stack("estate").spec.usage_assumptions()
    assert got == {k: v for k, v in offline.items() if k in got}
    by_role = pack_assumptions({"inference": {"inference_burst_hours_per_month": 10},
                                "embed": {"inference_burst_hours_per_month": 20}}, resources, "aws")
    assert by_role["inference_burst_hours_per_month.chat"] == 10
    assert by_role["inference_burst_hours_per_month.embed"] == 20
    assert "inference_burst_hours_per_month.llama-ft" not in by_role
