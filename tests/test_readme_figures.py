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


def _readme_sessions() -> list[list[tuple[str, list[str]]]]:
    """The README's terminal sessions: each ```sh block whose first line is `$ python -m stackplan ...`, as its
    commands, each with the lines shown under it ("..." marks lines left out)."""
    sessions = []
    for block in re.findall(r"```sh\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), re.S):
        if not block.startswith("$ python -m stackplan "):
            continue
        runs: list[tuple[str, list[str]]] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                runs.append((line.removeprefix("$ "), []))
            else:
                runs[-1][1].append(line)
        sessions.append(runs)
    return sessions


SESSIONS = _readme_sessions()


def _run(command: str, tmp_path: Path, capsys) -> list[str]:
    """Run one README command in tmp_path as a user would in the checkout (paths the checkout has read from it,
    what the command writes goes under tmp_path) and return the lines it printed, paths as the README shows them."""
    from dbx_ai_infra.cli.cli import main

    argv, _, pipe = command.removeprefix("python -m stackplan ").partition(" | ")
    args = [str(REPO / a) if (REPO / a).exists() and "/" in a else a for a in argv.split()]
    capsys.readouterr()
    assert main(args) in (0, 1), command
    out, err = capsys.readouterr()
    shown = out.splitlines()
    if pipe:
        assert re.fullmatch(r"head -\d+", pipe), f"README pipes {pipe!r}: teach this test what it does"
        shown = shown[:int(pipe.split("-")[1])]
    return [line.replace(f"{REPO}/", "").rstrip() for line in err.splitlines() + shown]


def _same(shown: str, printed: str) -> bool:
    """A shown line is the printed line; a table row, a printed row with the same cells (column widths vary)."""
    if shown.startswith("│"):
        return printed.startswith("│") and _cells(shown) == _cells(printed)
    return shown.rstrip() == printed


def _excerpt_problem(shown: list[str], printed: list[str]) -> str | None:
    """Why ``shown`` is not an excerpt of ``printed``: its runs of lines between "..." markers must be printed as
    they stand, one after another and in that order; without a marker at an end, the output starts (ends) there."""
    runs, at = [], 0
    for line in shown:
        if line == "...":
            runs.append(None)
        elif runs and runs[-1] is not None:
            runs[-1].append(line)
        else:
            runs.append([line])
    for i, run in enumerate(runs):
        if run is None:
            continue
        fits = [k for k in range(at, len(printed) - len(run) + 1)
                if all(_same(a, b) for a, b in zip(run, printed[k:k + len(run)], strict=True))]
        anchored = i == 0  # no "..." before it: the output starts with it
        if not fits or (anchored and fits[0] != at):
            return f"these lines are not printed {'first, ' if anchored else ''}as shown: {run}"
        at = fits[0] + len(run)
    if runs and runs[-1] is not None and at != len(printed):
        return "the excerpt has no '...' at its end, but the command prints more"
    return None


@pytest.mark.parametrize("session", SESSIONS, ids=[runs[-1][0] for runs in SESSIONS])
def test_every_readme_terminal_session_shows_what_the_command_prints(session, tmp_path, monkeypatch, capsys):
    """Each figure the README shows from a command (a cost, a saving, a count) is what the command prints today:
    the lines under a `$ python -m stackplan` line are the command's output, where "..." stands for lines left out
    (issue 56 item 8: $7.82/h and $1,242.36 stayed behind when the program printed $7.85 and $1,249.08)."""
    monkeypatch.chdir(tmp_path)
    assert len(SESSIONS) >= 6
    for command, shown in session:
        printed = _run(command, tmp_path, capsys)
        problem = shown and _excerpt_problem(shown, printed)
        assert not problem, "\n".join([f"README's `{command}`: {problem}; it prints:", *printed])
