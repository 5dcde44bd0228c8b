"""The format registry (`dbx_ai_infra.reports.formats`) and the one pipeline (`dbx_ai_infra.engine.pipeline`): every command offers the
registry's formats for its report kinds; preview, check and cost render the same findings; a format module is
imported only when used; a stack's spec is validated once per plan."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

import dbx_ai_infra.stackspec.load
from dbx_ai_infra.cli.cli import main, parser
from dbx_ai_infra.engine.pipeline import Options, build
from dbx_ai_infra.reports import formats


def _format_choices(command: str) -> list[str]:
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    (action,) = [a for a in sub.choices[command]._actions if "--format" in a.option_strings]
    return list(action.choices)


@pytest.mark.parametrize(("command", "kinds"), [("preview", ("preview",)), ("check", ("check", "audit", "drift")),
                                                ("cost", ("cost",)), ("advise", ("advise",))])
def test_format_choices_come_from_the_registry(command, kinds):
    assert _format_choices(command) == formats.choices(*kinds)


def test_preview_check_and_cost_offer_the_same_finding_formats_and_pages():
    for command in ("preview", "check", "cost"):
        assert {"sarif", "junit", "github", "markdown", "html"} <= set(_format_choices(command)), command


def test_every_registered_format_has_a_renderer_module_and_none_is_imported_up_front():
    code = ("import sys, dbx_ai_infra.cli.cli, dbx_ai_infra.reports.formats as f; "
            "print(sorted(m for m in sys.modules if m.startswith('dbx_ai_infra.reports.formats.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
    import importlib

    for fmt in formats.FORMATS:
        assert callable(importlib.import_module(f"dbx_ai_infra.reports.formats.{fmt.module}").render), fmt.name


@pytest.mark.parametrize("fmt", ["sarif", "junit", "github"])
def test_cost_and_preview_report_the_findings_check_reports(fmt, capsys):
    outs = {}
    for command in ("check", "preview", "cost"):
        main([command, "--stack", "azure-prod", "--format", fmt])
        outs[command] = capsys.readouterr().out
    if fmt == "sarif":
        results = {c: [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
                       for r in json.loads(o)["runs"][0]["results"]] for c, o in outs.items()}
        assert results["check"] and results["check"] == results["preview"] == results["cost"]
    elif fmt == "github":
        assert outs["check"] and outs["check"] == outs["preview"] == outs["cost"]
    else:
        assert 'name="stackplan check azure-prod"' in outs["check"] and 'name="stackplan cost azure-prod"' in outs["cost"]
        assert outs["check"].count("<testcase") == outs["cost"].count("<testcase") > 0


@pytest.mark.parametrize("command", ["preview", "check"])
def test_preview_and_check_write_markdown_and_html_with_costs_and_findings(command, tmp_path):
    md, page = tmp_path / "r.md", tmp_path / "r.html"
    code = main([command, "--stack", "prod", "--format", "markdown", "--out", str(md)])
    assert main([command, "--stack", "prod", "--format", "html", "--out", str(page)]) == code
    title = {"preview": "Stack preview", "check": "Policy check"}[command]
    text = md.read_text()
    assert text.startswith(f"## {title}: stack prod") and "/month expected" in text and "### Policy violations" in text
    assert f"<h1>{title}: stack prod</h1>" in page.read_text() and "<svg" in page.read_text()


def test_several_stacks_in_markdown_name_the_command(capsys):
    main(["check", "--stack", "dev", "--stack", "prod", "--format", "markdown"])
    assert capsys.readouterr().out.startswith("## Policy check: 2 stacks")


def test_a_page_format_for_a_workspace_audit_is_refused_before_any_work(tmp_path, capsys):
    export = tmp_path / "clusters.json"
    export.write_text("[]")
    out = tmp_path / "audit.md"
    assert main(["check", "--cluster-json", str(export), "--format", "markdown", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--format markdown is for preview, check, cost, advise reports, not a workspace audit" in err
    assert "Fix: pass one of table, json, sarif, junit, github." in err and not out.exists()


def test_rendering_a_kind_a_format_does_not_take_is_an_error():
    from dbx_ai_infra.reports.reportdoc import AdviceReport

    with pytest.raises(ValueError, match="format sarif does not render a advise report"):
        formats.render("sarif", AdviceReport({}))


def test_a_plan_validates_its_spec_once(monkeypatch):
    calls = []
    real = dbx_ai_infra.stackspec.load.spec_from_config

    def counting(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(dbx_ai_infra.stackspec.load, "spec_from_config", counting)
    built = build("prod", Options(cost=True))
    assert len(calls) == 1 and built.plan.cost is not None and built.loaded.spec.cloud == built.plan.cloud


def test_each_advise_finding_id_is_written_in_one_python_module_outside_the_tests():
    """One fact, one home: a finding's id is a string of its own module's code and of no other (its constants, as
    Python reads them: not the words of a comment)."""
    import ast
    from pathlib import Path

    from conftest import project_sources

    from dbx_ai_infra.advise.findings import FINDINGS

    repo = Path(__file__).resolve().parent.parent
    strings = {p: {n.value for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))) if isinstance(n, ast.Constant)}
               for p in project_sources("tests")}
    for spec in FINDINGS:
        holders = [str(p.relative_to(repo)) for p, constants in strings.items() if spec.id in constants]
        assert holders == [f"dbx_ai_infra/advise/findings/{spec.build.__module__.rsplit('.', 1)[1]}.py"], spec.id


def test_the_cloud_word_type_and_the_cloud_profiles_agree():
    from typing import get_args

    from dbx_ai_infra.dbxtypes.clouds import PROFILES, cloud_of_node_id
    from dbx_ai_infra.dbxtypes.vocabulary import ATTRIBUTES_BLOCK, CLOUDS, DEFAULT_AVAILABILITY, Cloud

    assert get_args(Cloud) == CLOUDS == tuple(p.name for p in PROFILES)
    assert ATTRIBUTES_BLOCK["gcp"] == "gcp_attributes" and DEFAULT_AVAILABILITY["aws"] == "SPOT_WITH_FALLBACK"
    # the clouds' node id schemes do not overlap: each id belongs to at most one
    for node_id, cloud in [("g5.xlarge", "aws"), ("Standard_NC4as_T4_v3", "azure"), ("a2-highgpu-1g", "gcp"),
                           ("u-6tb1.112xlarge", "aws"), ("n2-custom-4-16384", "gcp"), ("weird", None)]:
        assert cloud_of_node_id(node_id) == cloud, node_id
        assert sum(p.owns_node_id(node_id) for p in PROFILES) == (cloud is not None)


def test_every_type_the_program_creates_has_a_resource_kind_module_of_its_own():
    from dbx_ai_infra.dbxtypes.vocabulary import PROGRAM_RESOURCE_TYPES
    from dbx_ai_infra.pricing.kinds import KINDS

    assert sorted(k.token for k in KINDS) == sorted(PROGRAM_RESOURCE_TYPES)
    modules = [k.facts.__module__ for k in KINDS]
    assert len(set(modules)) == len(modules), "one module per resource type"
