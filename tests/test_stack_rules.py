"""Stack rules (issue 56, item 4): one rule kind (`Rule.scope` ``"stack"``, a `stack_check` over a `StackView`),
judged by `evaluate_stack` wherever a stack is judged: ``preview`` and ``check`` (the pipeline), ``cost`` (its exit
gate is the rules about cost) and the CrossGuard pack (a stack validation, `tests/test_policy_pack_grpc.py` over
gRPC); the policy config sets their level, or disables them, as it does a resource rule's."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import config_for, run_cli
from pulumi_policy import EnforcementLevel, StackValidationPolicy

from dbx_ai_infra.policies.pack import build_policies
from dbx_ai_infra.policies.registry import RULES_BY_NAME, evaluate_resource, evaluate_stack, stack_rules
from dbx_ai_infra.policies.rule import Rule, StackView

BUDGET = "databricks-stack-budget"
REGISTERED = "databricks-serving-require-registered-model"
ENDPOINT = {"entity": "ai.models.chat", "entity_version": "1", "model": {"params_billions": 7, "precision": "fp16"},
            "rate_limit_per_user_per_minute": 30}


def stack(write_stack, name: str = "test", *, budget: float, registered: bool) -> str:
    """A stack that creates catalog ``ai`` and serves a model of it: its budget and whether it declares the model
    version registered decide both stack rules."""
    return str(write_stack(config_for("aws", budget={"monthly_expected_max": budget}, unity_catalog={"catalog": "ai"},
                                      serving={"endpoints": {"chat": {**ENDPOINT, "model_registered": registered}}}),
                           name=name))


def stack_findings_of(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {name: [v for v in doc["violations"] if v["policy"] == name] for name in (BUDGET, REGISTERED)}


def policy_config(tmp_path, doc: dict[str, Any]) -> str:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("command", ["preview", "check"])
def test_preview_and_check_judge_every_stack_rule_failing_and_passing(write_stack, capsys, command):
    code, out, _ = run_cli(capsys, command, "--stack", stack(write_stack, budget=100, registered=False), "--json")
    found = stack_findings_of(json.loads(out))
    assert code == 1
    (over,) = found[BUDGET]
    assert over["resource_name"] == "test" and over["enforcement"] == "mandatory"  # on the stack itself
    assert "over budget.monthly_expected_max $100.00" in over["message"]
    (unregistered,) = found[REGISTERED]
    assert unregistered["resource_name"] == "test-serving-chat"  # on the endpoint its finding names
    code, out, err = run_cli(capsys, command, "--stack", stack(write_stack, "ok", budget=10 ** 6, registered=True),
                         "--json")
    assert code == 0 and stack_findings_of(json.loads(out)) == {BUDGET: [], REGISTERED: []}
    assert "ai.models.chat version 1 must be registered in catalog ai before" in err  # the rule's note


@pytest.mark.parametrize("setting", [{BUDGET: "disabled", REGISTERED: {"enforcementLevel": "disabled"}},
                                     {"all": "disabled"}])
def test_the_policy_config_disables_stack_rules_as_it_does_resource_rules(write_stack, capsys, tmp_path, setting):
    bad = stack(write_stack, budget=100, registered=False)
    code, out, err = run_cli(capsys, "check", "--stack", bad, "--json", "--policy-config", policy_config(tmp_path, setting))
    assert code == 0 and stack_findings_of(json.loads(out)) == {BUDGET: [], REGISTERED: []}
    assert "must be registered" not in err
    code, _, _ = run_cli(capsys, "cost", "--stack", bad, "--policy-config", policy_config(tmp_path, setting))
    assert code == 0


def test_an_advisory_stack_rule_is_reported_and_fails_nothing(write_stack, capsys, tmp_path):
    bad = stack(write_stack, budget=100, registered=False)
    config = policy_config(tmp_path, {BUDGET: "advisory", REGISTERED: "advisory"})
    code, out, _ = run_cli(capsys, "check", "--stack", bad, "--json", "--policy-config", config)
    found = stack_findings_of(json.loads(out))
    assert code == 0 and [v["enforcement"] for v in found[BUDGET] + found[REGISTERED]] == ["advisory", "advisory"]


def test_cost_fails_on_the_rules_about_cost_alone(write_stack, capsys):
    """``cost``'s exit gate is the stack rules that judge cost (the budget); the registered-model finding is in its
    report but is check's to fail on."""
    code, out, _ = run_cli(capsys, "cost", "--stack", stack(write_stack, budget=100, registered=True), "--format", "json")
    assert code == 1 and stack_findings_of(json.loads(out))[BUDGET]
    code, out, _ = run_cli(capsys, "cost", "--stack", stack(write_stack, "unreg", budget=10 ** 6, registered=False),
                       "--format", "json")
    found = stack_findings_of(json.loads(out))
    assert code == 0 and found[REGISTERED] and not found[BUDGET]


def test_the_pack_judges_each_stack_rule_it_can_see_as_a_stack_validation(plan_of):
    """The budget is a stack validation of the pack, its limits in the pack config, failing and passing; the
    registered-model rule reads the stack file's declarations, which the pack never sees, so it is not one of the
    pack's policies (rather than one that always passes); a disabled stack rule is listed disabled."""
    policies = {p.name: p for p in build_policies()}
    assert REGISTERED not in policies
    budget = policies[BUDGET]
    assert isinstance(budget, StackValidationPolicy) and budget.enforcement_level == EnforcementLevel.MANDATORY
    resources = [SimpleNamespace(urn=r["urn"], resource_type=r["type"], name=r["name"], props=dict(r["inputs"]),
                                 property_dependencies={}) for r in plan_of("dev")["resources"]]

    def reported(config: dict[str, Any]) -> list[tuple[str, str | None]]:
        out: list[tuple[str, str | None]] = []
        budget.validate(SimpleNamespace(resources=resources, get_config=lambda: config),
                        lambda message, urn=None: out.append((message, urn)))
        return out

    (over,) = reported({"monthly_expected_max": 100})
    assert "over budget.monthly_expected_max $100.00" in over[0] and over[1] is None  # on the stack
    assert reported({"monthly_expected_max": 10 ** 6}) == []
    assert reported({}) == []  # no limit in the pack config: nothing to judge
    assert build_policies({BUDGET: "disabled"})[-1].enforcement_level == EnforcementLevel.DISABLED


def test_a_stack_rule_judges_no_resource_and_a_resource_rule_no_stack(plan_of):
    """One rule list, two kinds: `evaluate_resource` never runs a stack rule, `evaluate_stack` never a resource
    rule; a stack rule must say so (``scope`` ``"stack"`` with its `stack_check`, no resource types)."""
    from dbx_ai_infra.dbxtypes.plan import Plan

    plan = Plan.from_json(plan_of("prod"), "prod")
    plan.budget = {"monthly_expected_max": 1}
    names = {rule.name for rule in stack_rules()}
    assert names == {BUDGET, REGISTERED} and all(RULES_BY_NAME[name].scope == "stack" for name in names)
    for resource in plan.resources:
        found = evaluate_resource(resource.type, resource.inputs, urn=resource.urn, name=resource.name)
        assert not {v.policy for v in found} & names
    violations, _ = evaluate_stack(StackView(plan))
    assert {v.policy for v in violations} <= names
    with pytest.raises(ValueError, match="has a stack_check"):
        Rule(name="x", description="d", enforcement="mandatory", remediation="r", scope="stack")
    with pytest.raises(ValueError, match="has a check"):  # a resource rule still needs its check
        Rule(name="x", description="d", enforcement="mandatory", remediation="r",
             resource_types=("databricks:index/cluster:Cluster",))
    with pytest.raises(ValueError, match="judges no resource"):
        Rule(name="x", description="d", enforcement="mandatory", remediation="r", scope="stack",
             resource_types=("databricks:index/cluster:Cluster",), stack_check=lambda stack, config: [])
