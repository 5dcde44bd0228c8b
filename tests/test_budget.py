"""`dbx-ai-infra:budget` and the stack-level policy `databricks-stack-budget`: a pull request fails on the budget."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import BASE_CONFIG, run_cli

from dbx_ai_infra.policies.rules.stack_budget import NAME, over_budget, over_increase


def with_budget(write_stack, name="test", **budget):
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:budget"] = budget
    return write_stack(config, name=name)


# --- the rule's two functions, passing and failing -----------------------------------------------------------------

def test_a_stack_within_its_monthly_limits_passes_and_one_over_them_is_named_with_its_biggest_costs():
    costs = [("a", 100.0), ("b", 700.0), ("c", 300.0), ("d", 50.0)]
    assert over_budget(1150, 2000, costs, {"monthly_expected_max": 1200, "monthly_max_max": 2000}) == []
    (message,) = over_budget(1150, 2000, costs, {"monthly_expected_max": 1000})
    assert "costs $1,150.00 a month expected, over budget.monthly_expected_max $1,000.00 (by $150.00)" in message
    assert "the biggest: b $700.00, c $300.00, a $100.00. Fix:" in message
    (full,) = over_budget(1150, 2500, costs, {"monthly_max_max": 2000})
    assert "$2,500.00 a month at full size, over budget.monthly_max_max" in full


def test_a_change_within_its_increase_limits_passes_and_one_over_them_fails():
    changes = [("x", 400.0), ("y", -50.0)]
    assert over_increase(1000, 1040, changes, {"increase_max": 50, "increase_max_percent": 5}) == []
    dollars, percent = over_increase(1000, 1350, changes, {"increase_max": 300, "increase_max_percent": 10})
    assert "adds $350.00 a month ($1,000.00 -> $1,350.00), over budget.increase_max $300.00" in dollars
    assert "adds 35.0% a month" in percent and "budget.increase_max_percent 10%" in percent
    assert over_increase(0, 10, changes, {"increase_max_percent": 5})[0].startswith("the change adds from nothing")
    assert over_increase(1000, 900, changes, {"increase_max": 0, "increase_max_percent": 0}) == []


# --- the commands ------------------------------------------------------------------------------------------------

def test_check_fails_a_stack_over_its_budget_on_the_stack_itself(write_stack, capsys):
    code, out, _ = run_cli(capsys, "check", "--stack", str(with_budget(write_stack, monthly_expected_max=100)), "--json")
    assert code == 1
    (finding,) = [v for v in json.loads(out)["violations"] if v["policy"] == NAME]
    assert finding["enforcement"] == "mandatory" and finding["resource_name"] == "test"
    assert finding["urn"] == "urn:pulumi:test::dbx-ai-infra::pulumi:pulumi:Stack::dbx-ai-infra-test"
    code, out, _ = run_cli(capsys, "check", "--stack", str(with_budget(write_stack, monthly_expected_max=10**6)), "--json")
    assert code == 0 and not [v for v in json.loads(out)["violations"] if v["policy"] == NAME]


def test_the_budget_takes_its_level_from_the_policy_config_and_an_exception_by_stack_name(write_stack, capsys,
                                                                                         tmp_path):
    stack = with_budget(write_stack, monthly_expected_max=100)
    config = tmp_path / "pc.json"
    config.write_text(json.dumps({NAME: "advisory"}))
    assert run_cli(capsys, "check", "--stack", str(stack), "--policy-config", str(config))[0] == 0
    excepted = copy.deepcopy(BASE_CONFIG)
    excepted["dbx-ai-infra:budget"] = {"monthly_expected_max": 100}
    excepted["dbx-ai-infra:exceptions"] = [{"rule": NAME, "resource": "test", "reason": "FIN-12 approved"}]
    code, out, _ = run_cli(capsys, "check", "--stack", str(write_stack(excepted)), "--json")
    assert code == 0 and any(v["policy"] == NAME and v["exception"] for v in json.loads(out)["violations"])


def test_cost_against_fails_a_change_over_the_increase_limits_and_only_with_a_budget(write_stack, capsys, tmp_path):
    base = tmp_path / "base.json"
    assert run_cli(capsys, "preview", "--stack", str(with_budget(write_stack, increase_max=10)), "--json", "--out",
               str(base))[0] in (0, 1)
    bigger = copy.deepcopy(BASE_CONFIG)
    bigger["dbx-ai-infra:inference"]["min_workers"] = 4
    plain = write_stack(bigger, name="test")
    assert run_cli(capsys, "cost", "--stack", str(plain), "--against", str(base))[0] == 0  # no budget: cost exits 0
    bigger["dbx-ai-infra:budget"] = {"increase_max": 10}
    code, out, _ = run_cli(capsys, "cost", "--stack", str(write_stack(bigger, name="test")), "--against", str(base),
                       "--format", "json")
    assert code == 1
    (finding,) = [v for v in json.loads(out)["violations"] if v["policy"] == NAME]
    assert "over budget.increase_max $10.00" in finding["message"] and "test-inference-cluster" in finding["message"]
    bigger["dbx-ai-infra:budget"] = {"increase_max": 10**6}
    assert run_cli(capsys, "cost", "--stack", str(write_stack(bigger, name="test")), "--against", str(base))[0] == 0


def test_a_budget_without_a_limit_is_invalid_input(write_stack, capsys):
    code, _, err = run_cli(capsys, "preview", "--stack", str(with_budget(write_stack)))
    assert code == 2 and "dbx-ai-infra:budget" in err and "sets no limit" in err


@pytest.mark.parametrize("field", ["monthly_expected_max", "increase_max_percent"])
def test_a_negative_limit_is_invalid_input(write_stack, capsys, field):
    code, _, err = run_cli(capsys, "preview", "--stack", str(with_budget(write_stack, **{field: -1})))
    assert code == 2 and f"dbx-ai-infra:budget.{field}" in err
