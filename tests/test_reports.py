"""Markdown and HTML cost reports (dbx_ai_infra/reports/pages.py, templates/report.*.j2)."""

from __future__ import annotations

import copy
import functools
import os
import re
from pathlib import Path
from typing import Any

import jinja2
import pytest

from dbx_ai_infra import pricing
from dbx_ai_infra.gpucatalog import Catalog, NodeType
from dbx_ai_infra.pricing import diff_costs, load_prices
from dbx_ai_infra.reports import pages as reports
from dbx_ai_infra.reports.pages import money, render_html, render_markdown, render_template, report_context


def price_plan(plan: Any, book: Any) -> dict[str, Any]:
    """The cost object as the plan JSON carries it."""
    return pricing.price_plan(plan, book).to_json()


STACKS = ["dev", "prod", "azure-prod", "gcp-dev"]
GOLDEN = Path(__file__).parent / "golden"
INJECTED = {"policy": "require-tags", "enforcement": "mandatory", "urn": "urn:x", "resource_name": "some-cluster",
            "message": "cluster is missing tag cost_center | injected for the report test"}


@functools.cache
def _shipped(stack: str) -> dict[str, Any]:
    from dbx_ai_infra.engine.pipeline import build_plan

    plan = build_plan(stack, with_policies=False).to_json()
    plan["cost"] = price_plan(plan, load_prices())
    return plan


def shipped(stack: str) -> dict[str, Any]:
    return copy.deepcopy(_shipped(stack))


def _priced_names(plan: dict[str, Any]) -> list[str]:
    return [e["name"] for e in plan["cost"]["resources"].values()]


# --- every shipped stack --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("stack", STACKS)
def test_markdown_report_of_every_shipped_stack(stack):
    plan = shipped(stack)
    plan["violations"] = [INJECTED]
    text = render_markdown(plan)
    assert f"stack {stack}" in text and f"`{stack}`" in text
    for name in _priced_names(plan):
        assert f"| {name} |" in text
    clusters = [r["name"] for r in plan["resources"] if r["type"] == "databricks:index/cluster:Cluster"]
    assert clusters and all(c in text for c in clusters)
    total = money(plan["cost"]["total"]["monthly"]["expected"])
    assert f"{total}/month expected" in text
    assert "1 mandatory, 0 advisory" in text
    # the injected message, with its pipe escaped for the table
    assert "cluster is missing tag cost_center \\| injected for the report test" in text
    assert "{{" not in text and "{%" not in text
    assert "Price sources" in text and "lakemeter_dbu_prices" in text
    assert "inference_hours_per_month" in text  # assumptions used
    assert "Every cost item is priced." in text


@pytest.mark.parametrize("stack", STACKS)
def test_html_report_of_every_shipped_stack(stack):
    plan = shipped(stack)
    plan["violations"] = [INJECTED]
    html = render_html(plan)
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert f"stack {stack}" in html
    for name in _priced_names(plan):
        assert f"<td>{name}</td>" in html
    assert money(plan["cost"]["total"]["monthly"]["expected"]) in html
    # autoescaped, not Markdown-escaped
    assert "cluster is missing tag cost_center | injected for the report test" in html
    assert "{{" not in html and "{%" not in html
    # an inline SVG with one bar per workload
    assert html.count("<svg") == 1
    bars = re.findall(r'<rect class="bar" data-workload="([^"]+)"', html)
    assert bars == list(plan["cost"]["by_workload"])
    for role in plan["cost"]["by_workload"]:
        assert f"{role}: {money(plan['cost']['by_workload'][role])}/month" in html
    # standalone: nothing fetched from the network
    for needle in ("<script", "<link", "src=", "@import", "url(", "http://", "https://"):
        assert needle not in html


def test_chart_text_is_never_clipped():
    plan = shipped("prod")
    plan["cost"]["by_workload"] = {"training": 1_234_567.89, "a-very-long-workload-name": 14_408.10}
    chart = report_context(plan, markdown=False)["chart"]
    for bar in chart["bars"]:
        # the value starts at value_x; at about 7.5 units a character it must end inside the SVG
        assert float(bar["value_x"]) + 7.5 * len(bar["value_text"]) <= chart["width"]
        # the label is right-aligned at label_x and must start at or after 0
        assert bar["label_x"] - 7.5 * len(bar["label"]) >= 0


def _base_and_head(stack: str = "prod") -> tuple[dict[str, Any], dict[str, Any]]:
    head = shipped(stack)
    base = copy.deepcopy(head)
    base["resources"] = [r for r in base["resources"] if not r["name"].endswith("training-job")]
    for r in base["resources"]:
        if r["name"].endswith("inference-cluster"):
            r["inputs"]["autoscale"]["maxWorkers"] = 4
    base["stack"] = "prod-base"
    base["cost"] = price_plan(base, load_prices())
    return base, head


def test_diff_rows_appear_in_both_reports():
    base, head = _base_and_head()
    diff = diff_costs(base, head)
    delta = diff["total"]["delta"]["monthly_expected"]
    assert delta > 0
    md, html = render_markdown(head, diff), render_html(head, diff)
    job = next(e for e in head["cost"]["resources"].values() if e["name"] == "prod-training-job")
    added = f"+{money(job['monthly']['expected'])}"
    for text in (md, html):
        assert "Cost change vs base" in text and "prod-base" in text
        assert f"+{money(delta)}/month vs base prod-base" in text
        assert "1 added, 0 removed, 1 changed, 2 unchanged" in text  # unchanged: the pool and the endpoint
        assert added in text
    assert re.search(r"\| prod-training-job \| Job \| added \| - \| \$[\d,.]+ \| \+\$[\d,.]+ \|", md)
    # the row says what changed, in words: maxWorkers 4 -> 10 is nodes (driver included) 3-5 -> 3-11
    assert "| prod-inference-cluster | Cluster | changed: nodes 3-5 -&gt; 3-11 |" in md  # GitHub renders "->"
    assert "<td>changed: nodes 3-5 -&gt; 3-11</td>" in html
    assert "<td>prod-training-job</td><td>Job</td><td>added</td>" in html


def test_reports_without_diff_have_no_diff_section():
    plan = shipped("dev")
    assert "Cost change" not in render_markdown(plan)
    assert "Cost change" not in render_html(plan)


def test_violations_absent_or_empty():
    plan = shipped("gcp-dev")
    plan.pop("violations", None)
    assert "Policies were not evaluated" in render_markdown(plan)
    plan["violations"] = []
    assert "No policy violations." in render_markdown(plan)
    assert "No policy violations." in render_html(plan)


def test_plan_without_cost_still_renders():
    plan = shipped("dev")
    del plan["cost"]
    for text in (render_markdown(plan), render_html(plan)):
        assert "costs were not computed" in text
        assert "{{" not in text


def test_unpriced_items_are_listed_not_zero():
    plan = shipped("dev")
    for r in plan["resources"]:
        if r["name"] == "dev-dev-cluster":
            r["inputs"]["nodeTypeId"] = r["inputs"]["driverNodeTypeId"] = "zz9.mystery"
    plan["cost"] = price_plan(plan, load_prices())
    md, html = render_markdown(plan), render_html(plan)
    assert "Left out of every total" in md and "zz9.mystery" in md
    assert re.search(r"\| dev-dev-cluster \|.*\| unpriced \| unpriced \| unpriced \| unpriced \|", md)
    assert '<tr class="unpriced"><td>dev-dev-cluster</td>' in html


def test_markdown_cells_are_escaped_and_html_is_autoescaped():
    plan = shipped("dev")
    plan["violations"] = [{**INJECTED, "message": "a <b>bold</b> | claim\nover two lines"}]
    md, html = render_markdown(plan), render_html(plan)
    assert "a &lt;b&gt;bold&lt;/b&gt; \\| claim over two lines" in md
    assert "a &lt;b&gt;bold&lt;/b&gt; | claim" in html and "<b>bold</b>" not in html


def test_a_missing_template_variable_raises():
    plan = shipped("dev")
    cases = (("report.md.j2", True, ("total", "stack", "violations_summary", "sources")),
             ("report.html.j2", False, ("total", "stack", "violations_summary", "chart")))
    for name, markdown, keys in cases:
        context = report_context(plan, markdown=markdown)
        render_template(name, context)  # complete: fine
        for key in keys:
            broken = {k: v for k, v in context.items() if k != key}
            with pytest.raises(jinja2.UndefinedError):
                render_template(name, broken)
        # a missing attribute of a row raises too
        rows = [{k: v for k, v in r.items() if k != "monthly_expected"} for r in context["resources"]]
        with pytest.raises(jinja2.UndefinedError):
            render_template(name, {**context, "resources": rows})


def test_one_strict_environment_for_both_templates():
    env = reports.environment()
    assert env is reports.environment()
    assert env.undefined is jinja2.StrictUndefined
    assert env.get_template("report.html.j2").render is not None
    # HTML is autoescaped, Markdown is not
    assert env.autoescape("report.html.j2") is True and env.autoescape("report.md.j2") is False


def test_templates_hold_no_computation():
    paths = list(reports.TEMPLATES_DIR.glob("*.j2"))
    assert len(paths) >= 6  # the reports, the combined reports, and the parts they include
    for path in paths:
        text = path.read_text()
        statements = re.findall(r"{%-?\s*(\w+)", text)
        assert set(statements) <= {"if", "else", "elif", "endif", "for", "endfor", "include"}, path.name
        for expr in re.findall(r"{{(.*?)}}", text):
            assert re.fullmatch(r"\s*[\w.]+\s*", expr), (path.name, expr)  # plain substitutions, no filters


def test_money_rounds_to_cents_when_rendering():
    assert money(1234.5649) == "$1,234.56"
    assert money(1.005) == "$1.01"
    assert money(0) == "$0.00"
    assert money(None) == "unpriced"
    assert reports.signed_money(-2.5) == "-$2.50" and reports.signed_money(2.5) == "+$2.50"
    assert reports.signed_money(1e-12) == "$0.00"


# --- golden files (a small hand-made plan with frozen prices) ----------------------------------------------------

def _frozen_catalog() -> Catalog:
    def node(node_type_id: str, price: float, dbu: float) -> NodeType:
        return NodeType(cloud="aws", node_type_id=node_type_id, family="a10g", gpu="NVIDIA A10G", gpu_count=1,
                        gpu_memory_gb=24, vcpus=4, memory_gb=16, usd_per_hour_on_demand=price, dbu_per_hour=dbu,
                        price_region="us-east-1", price_date="2026-07-20", dbu_date="2026-04-10",
                        sources=("karpenter_aws_price", "dbx_instance_xlsx"))

    return Catalog([node("g5.xlarge", 1.0, 1.5), node("g5.12xlarge", 6.0, 8.0)],
                   {"karpenter_aws_price": "AWS prices", "dbx_instance_xlsx": "DBU sheet"})


def _golden_plans() -> tuple[dict[str, Any], dict[str, Any]]:
    def res(rtype: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return {"urn": f"urn:pulumi:golden::dbx-ai-infra::{rtype}::{name}", "id": f"{name}-id", "type": rtype,
                "name": name, "parent": None, "inputs": inputs}

    tags = {"workload_type": "training"}
    train = res("databricks:index/cluster:Cluster", "golden-training-cluster",
                {"nodeTypeId": "g5.12xlarge", "numWorkers": 2, "customTags": tags,
                 "awsAttributes": {"availability": "SPOT_WITH_FALLBACK", "firstOnDemand": 1}})
    serve = res("databricks:index/cluster:Cluster", "golden-inference-cluster",
                {"instancePoolId": "golden-pool-id", "autoscale": {"minWorkers": 1, "maxWorkers": 5},
                 "customTags": {"workload_type": "inference"}})
    pool = res("databricks:index/instancePool:InstancePool", "golden-pool",
               {"nodeTypeId": "g5.xlarge", "minIdleInstances": 1, "maxCapacity": 8,
                "awsAttributes": {"availability": "ON_DEMAND"}, "customTags": {"workload_type": "inference"}})
    dev = res("databricks:index/cluster:Cluster", "golden-dev-cluster",
              {"nodeTypeId": "cpu.unknown", "numWorkers": 0, "customTags": {"workload_type": "interactive"},
               "awsAttributes": {"availability": "ON_DEMAND"}})
    head = {"stack": "golden", "project": "dbx-ai-infra", "stack_file": "stacks/Pulumi.golden.yaml", "cloud": "aws",
            "resources": [train, pool, serve, dev], "outputs": {},
            "assumptions": {"training_hours_per_month": 40, "training_job_hours_per_month": 80,
                            "inference_hours_per_month": 730, "inference_burst_hours_per_month": 120,
                            "inference_burst_avg_extra_workers": None, "dev_hours_per_working_day": 6,
                            "working_days_per_month": 21, "pool_idle_hours_per_month": 730},
            "violations": [{"policy": "disallow-all-spot-inference", "enforcement": "advisory",
                            "urn": serve["urn"], "resource_name": "golden-inference-cluster",
                            "message": "golden advisory message"}]}
    base = copy.deepcopy(head)
    base["stack"] = "golden-base"
    base["resources"][0]["inputs"]["numWorkers"] = 1
    base["resources"] = base["resources"][:3]
    book = load_prices({"spot_factor": {"aws": 0.4}}, catalog=_frozen_catalog())  # frozen: no per-type spot rows
    head["cost"] = price_plan(head, book)
    base["cost"] = price_plan(base, book)
    return base, head


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_golden_report(fmt):
    base, head = _golden_plans()
    diff = diff_costs(base, head)
    text = render_markdown(head, diff) if fmt == "md" else render_html(head, diff)
    path = GOLDEN / f"report_small.{fmt}"
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), "golden file missing: run with UPDATE_GOLDEN=1 once and review it"
    assert text == path.read_text(encoding="utf-8")


def test_golden_figures_are_the_hand_computed_ones():
    """The frozen prices make the golden report checkable by hand."""
    _, head = _golden_plans()
    cost = head["cost"]
    by_name = {e["name"]: e for e in cost["resources"].values()}
    # training: driver 6 + 8 x 0.55 = 10.4; 2 spot workers 6 x 0.4 + 4.4 = 6.8 each -> 24.0 $/h x 40 h
    assert by_name["golden-training-cluster"]["monthly"]["expected"] == pytest.approx(24.0 * 40)
    # inference on the pool: node 1 + 1.5 x 0.55 = 1.825; base 2 nodes x 730; burst 2 extra x 120
    assert by_name["golden-inference-cluster"]["monthly"]["expected"] == pytest.approx(
        2 * 1.825 * 730 + 2 * 1.825 * 120)
    # pool: 1 idle x 1.0 x 730 (VM only)
    assert by_name["golden-pool"]["monthly"]["expected"] == pytest.approx(730.0)
    assert by_name["golden-dev-cluster"]["unpriced"]
    assert cost["total"]["monthly"]["expected"] == pytest.approx(960 + 3102.5 + 730)


def test_a_changed_row_says_what_changed_in_words():
    from dbx_ai_infra.pricing.diff import describe_changes

    base = {"nodes": {"min": 3, "max": 3}, "node_type_id": "g5.xlarge", "availability": "SPOT_WITH_FALLBACK",
            "first_on_demand": 1, "hourly": 3.0}
    head = {**base, "nodes": {"min": 5, "max": 5}, "node_type_id": "g5.2xlarge", "first_on_demand": None,
            "hourly": 9.0}
    assert describe_changes(base, head) == ["nodes 3 -> 5", "node g5.xlarge -> g5.2xlarge", "on-demand nodes 1 -> none"]
    assert describe_changes(base, dict(base)) == []  # prices alone are the delta columns' business


# --- tables that keep what matters at any width (issue 27, item 11) -------------------------------------------------

@functools.cache
def _full(stack: str) -> Any:
    from dbx_ai_infra.engine.pipeline import build_plan

    return build_plan(stack, with_cost=True)


@pytest.mark.parametrize("width", [80, 120, 200])
@pytest.mark.parametrize("stack", ["prod", "azure-prod"])
def test_names_and_money_are_never_cut_and_no_line_is_wider_than_the_terminal(monkeypatch, stack, width):
    """At 80 columns names were cut (`dev-uc-grants-...`), policy names broke mid-word, and at 200 the sizing and
    advice lines ran past the edge."""
    from dbx_ai_infra.reports import render
    from dbx_ai_infra.reports.summary import money

    monkeypatch.setattr(render, "_width", width)
    monkeypatch.setattr(render, "_terminal", True)
    plan = _full(stack)
    assert plan.cost is not None
    text = render.plan_table(plan)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    for r in plan.resources:
        assert any(r.name in line for line in lines), (width, r.name)
    for entry in (plan.cost.resources if plan.cost else {}).values():
        assert any(money(entry.monthly.expected) in line for line in lines), (width, entry.monthly.expected)
    for v in plan.violations or []:
        assert any(v.policy in line for line in lines), (width, v.policy)


@pytest.mark.parametrize("width", [80, 160])
def test_policy_names_stay_whole_in_the_violations_table(monkeypatch, width):
    from dbx_ai_infra.reports import render

    monkeypatch.setattr(render, "_width", width)
    plan = _full("azure-prod")
    assert plan.violations
    lines = render.violations_table(plan.violations).splitlines()
    assert max(len(line) for line in lines) <= width
    for v in plan.violations:
        assert any(v.policy in line for line in lines) and any(v.resource_name in line for line in lines)


def test_an_html_table_wider_than_the_page_scrolls_inside_it(tmp_path, capsys):
    """The cost report's resources table ran off the page at 1300 and 800 px, with no horizontal scroll (looked at
    in headless Chromium at both widths); long ids in its detail cells may break, amounts may not."""
    from dbx_ai_infra.cli.cli import main

    out = tmp_path / "r.html"
    assert main(["cost", "--stack", "azure-prod", "--format", "html", "--out", str(out)]) == 0
    html = out.read_text()
    style = html[html.index("<style>"):html.index("</style>")]
    table_rule = re.search(r"\btable \{([^}]*)\}", style).group(1)
    assert "overflow-x: auto" in table_rule and "display: block" in table_rule
    assert 'class="detail">Standard_NV36ads_A10_v5' in html and "td.detail { overflow-wrap: anywhere" in style
