"""The documentation's example outputs and figures come from the program: each test computes one and fails when the docs
says something else (its "33 resources", the PR comment's "$935.20", stayed behind when the program moved on)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from conftest import BASE_CONFIG, documentation

from dbx_ai_infra.engine.pipeline import build_plan
from dbx_ai_infra.reports.summary import money

REPO = Path(__file__).resolve().parent.parent
README = documentation()  # the README and the docs site, where the worked examples live


@pytest.fixture(scope="module")
def prod():
    return build_plan("prod", with_cost=True)


def _entry(plan, name):
    (found,) = [e for urn, e in plan.cost.resources.items() if urn.endswith(f"::{name}")]
    return found


def test_the_resource_count_of_prod(prod):
    assert f"Checked stack prod (stacks/Pulumi.prod.yaml): {len(prod.resources)} resources." in README


def test_the_worked_example_of_the_cost_model(prod):
    training, inference = _entry(prod, "prod-training-job"), _entry(prod, "prod-inference-cluster")
    pool = _entry(prod, "prod-inference-pool-pool")
    assert f"At {training.hours_per_month:g} job hours a month that is **{money(training.monthly.expected)}**" in README
    assert f"= {money(training.all_on_demand_monthly_expected)}, so spot" in README
    assert f"saves {money(training.saving_monthly_expected)} a month" in README
    assert f"**{money(inference.monthly.expected)}** expected" in README
    assert f"1.006 x 730 = {money(pool.monthly.expected)}" in README


def test_the_serving_prices_and_the_cluster_or_endpoint_comparison(prod):
    chat = _entry(prod, "prod-serving-chat")
    assert f"**{money(chat.monthly.expected)}/month**" in README and f"16 concurrency: {money(chat.monthly.max)})" in README
    dev = build_plan("dev", with_cost=True)
    assert f"**{money(_entry(dev, 'dev-serving-chat-dev').monthly.expected)}/month**" in README
    advice = next(a for a in prod.advice if a.id == "cluster-vs-endpoint")
    endpoint, cluster = re.findall(r"\$[\d,]+\.\d\d", advice.message)[:2]
    assert f"({endpoint} against the\ncluster's {cluster} a month)" in README


def test_the_cheaper_single_gpu_advice_line(write_stack):
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:gpu_family"] = "t4"
    for section in ("dbx-ai-infra:training", "dbx-ai-infra:dev"):
        config.pop(section)
    config["dbx-ai-infra:inference"] = {"model": {"params_billions": 7, "precision": "fp16"}}  # 2 to 10 workers
    plan = build_plan(str(write_stack(config, name="t4")), with_cost=True)
    advice = next(a for a in plan.advice if a.id == "cheaper-single-gpu")
    assert f"Advice (cheaper-single-gpu): {advice.resource_name}: {advice.message}" in README


RUNNER_PLANS = "/home/runner/work/_temp/plans"


def _pr_comment(tmp_path: Path) -> list[str]:
    """The head of the comment the workflow posts for a pull request that raises prod's inference base from 2 to 3
    workers: `cost --all --against PLANS --format markdown`, the plans written by `preview --json` on the base."""
    from conftest import SHIPPED

    from dbx_ai_infra.cli.cli import main

    plans, head = tmp_path / "plans", tmp_path / "head"
    plans.mkdir()
    head.mkdir()
    for stack in SHIPPED:  # the shipped stacks alone: a user's own stack file is not in the README's example
        assert main(["preview", "--stack", stack, "--json", "--out", str(plans / f"{stack}.json")]) in (0, 1)
        text = (REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text()
        if stack == "prod":
            text = text.replace("  dbx-ai-infra:inference:\n    min_workers: 2\n",
                                "  dbx-ai-infra:inference:\n    min_workers: 3\n")
        (head / f"Pulumi.{stack}.yaml").write_text(text)
    out = tmp_path / "report.md"
    argv = [a for s in SHIPPED for a in ("--stack", str(head / f"Pulumi.{s}.yaml"))]
    assert main(["cost", *argv, "--against", str(plans), "--format", "markdown", "--out", str(out)]) == 0
    lines = out.read_text().replace(str(plans), RUNNER_PLANS).splitlines()
    return lines[:lines.index("## Cost review: stack prod") + 1]


def test_the_pull_request_comment_in_the_readme_is_what_the_workflow_posts(tmp_path, capsys):
    expected = _pr_comment(tmp_path)
    capsys.readouterr()
    block = README[README.index("   ```markdown\n   ## Stack review"):]
    shown = [line.removeprefix("   ") for line in block.splitlines()[1:]]
    shown = shown[:shown.index("## Cost review: stack prod") + 1]
    assert shown == expected, "\n".join(["README's PR comment is stale; the program writes:", *expected])


def test_the_job_compute_advice_figures(tmp_path):
    text = (REPO / "stacks" / "Pulumi.prod.yaml").read_text()
    asked = text.replace("  dbx-ai-infra:inference:\n", "    all_purpose_cluster: true\n  dbx-ai-infra:inference:\n", 1)
    assert asked != text
    (tmp_path / "Pulumi.prod.yaml").write_text(asked)
    plan = build_plan(str(tmp_path / "Pulumi.prod.yaml"), with_cost=True)
    advice = next(a for a in plan.advice if a.id == "training-on-job-compute")
    current, other = re.findall(r"\$[\d,]+\.\d\d", advice.message)[0], re.findall(r"would cost (\$[\d,]+\.\d\d)",
                                                                                  advice.message)[0]
    assert f"prod with `training.all_purpose_cluster: true`: {current} -> {other} a month" in README


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("│").split("│")]


def test_the_readme_cost_diff_rows_are_what_the_program_prints(capsys):
    """The README's `cost --stack prod --against dev` excerpt: each row it shows is a row the program prints today
    (issue 43: figures in the front door are held to the program like the docs' worked examples)."""
    from dbx_ai_infra.cli.cli import main

    block = README[README.index("$ python -m stackplan cost --stack prod --against dev"):]
    shown = [_cells(line) for line in block[:block.index("```")].splitlines() if line.startswith("│")]
    assert len(shown) >= 3
    assert main(["cost", "--stack", "prod", "--against", "dev"]) == 0
    printed = {tuple(c[1:4]): c for c in map(_cells, capsys.readouterr().out.splitlines()) if len(c) == 6}
    for row in shown:
        got = printed.get(tuple(row[1:4]))
        assert got is not None and got[0].startswith(row[0]) and got[4:] == row[4:], (row, got)
