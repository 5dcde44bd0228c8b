"""Pull-request integration: SARIF, accepted exceptions, many stacks in one run, the before/after chart."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from junitparser import JUnitXml

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.stack_files import available_stacks
from dbx_ai_infra.policies.registry import RULES_BY_NAME

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())
INTERCONNECT = "databricks-cluster-prefer-interconnect-for-multi-node-training"


def _valid_sarif(log: dict) -> dict:
    errors = sorted(jsonschema.Draft4Validator(SARIF_SCHEMA).iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return log


def _azure_with_exceptions(tmp_path: Path, *, expires: str | None, resource: str = "az-training-job",
                           rule: str = INTERCONNECT) -> Path:
    """azure-prod, asking for the all-purpose training cluster beside its job (two advisory interconnect findings,
    the cluster's and the job's), with an exception on one of them."""
    stack = tmp_path / "Pulumi.az.yaml"
    text = (ROOT / "stacks" / "Pulumi.azure-prod.yaml").read_text().replace(
        "  dbx-ai-infra:inference:\n", "    all_purpose_cluster: true\n  dbx-ai-infra:inference:\n", 1)
    assert "all_purpose_cluster: true" in text
    text += (f"  dbx-ai-infra:exceptions:\n    - rule: {rule}\n      resource: {resource}\n"
             f"      reason: \"ND A100 v4 quota refused in westeurope (TICKET-42)\"\n")
    if expires:
        text += f"      expires: {expires}\n"
    stack.write_text(text)
    return stack


@pytest.fixture
def interconnect_mandatory(tmp_path) -> Path:
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({INTERCONNECT: "mandatory"}))
    return config


# --------------------------------------------------------------------------------------------------------------------
# SARIF
# --------------------------------------------------------------------------------------------------------------------

def test_sarif_of_every_shipped_stack_is_valid_and_points_at_lines(capsys):
    for stack in available_stacks():
        assert main(["check", "--stack", stack, "--format", "sarif"]) == 0
        log = _valid_sarif(json.loads(capsys.readouterr().out))
        run = log["runs"][0]
        assert {r["id"] for r in run["tool"]["driver"]["rules"]} == set(RULES_BY_NAME)  # the stack rules too
        for result in run["results"]:
            location = result["locations"][0]["physicalLocation"]
            assert location["artifactLocation"]["uri"] == f"stacks/Pulumi.{stack}.yaml"
            assert location["region"]["startLine"] > 1
            assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    # azure-prod is the stack with a finding (its training job's): it points at its training gpu_family
    main(["check", "--stack", "azure-prod", "--format", "sarif"])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    lines = (ROOT / "stacks" / "Pulumi.azure-prod.yaml").read_text().splitlines()
    assert len(results) == 1
    for result in results:
        line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
        assert lines[line - 1].strip().startswith("gpu_family:")
        assert result["level"] == "warning"


def test_sarif_marks_an_accepted_exception_as_suppressed_and_an_expired_one_as_an_error(
        capsys, tmp_path, interconnect_mandatory):
    stack = _azure_with_exceptions(tmp_path, expires="2999-12-31")
    assert main(["check", "--stack", str(stack), "--policy-config", str(interconnect_mandatory),
                 "--format", "sarif"]) == 1  # the cluster's finding is not excepted: it still fails
    results = _valid_sarif(json.loads(capsys.readouterr().out))["runs"][0]["results"]
    by_resource = {r["locations"][0]["logicalLocations"][0]["name"]: r for r in results}
    assert by_resource["az-training-cluster"]["level"] == "error"
    assert "suppressions" not in by_resource["az-training-cluster"]
    job = by_resource["az-training-job"]
    assert job["level"] == "note"
    assert job["suppressions"] == [{"kind": "inSource", "status": "accepted",
                                    "justification": "ND A100 v4 quota refused in westeurope (TICKET-42)"}]
    assert job["partialFingerprints"] != by_resource["az-training-cluster"]["partialFingerprints"]


def test_sarif_of_a_cluster_json_names_the_file_and_the_cluster(capsys, tmp_path):
    clusters = tmp_path / "clusters.json"
    clusters.write_text(json.dumps([{"cluster_name": "no-tags", "spark_version": "17.3.x-gpu-ml-scala2.13",
                                     "node_type_id": "g5.xlarge", "num_workers": 2}]))
    assert main(["check", "--cluster-json", str(clusters), "--format", "sarif"]) == 1
    results = _valid_sarif(json.loads(capsys.readouterr().out))["runs"][0]["results"]
    assert results
    for result in results:
        location = result["locations"][0]
        assert "region" not in location["physicalLocation"]
        assert "no-tags" in location["logicalLocations"][0]["name"]


def test_preview_takes_the_ci_formats_too(capsys, tmp_path):
    out = tmp_path / "preview.sarif"
    assert main(["preview", "--stack", "azure-prod", "--format", "sarif", "--out", str(out)]) == 0
    assert len(_valid_sarif(json.loads(out.read_text()))["runs"][0]["results"]) == 1
    assert main(["preview", "--stack", "azure-prod", "--format", "github"]) == 0
    assert capsys.readouterr().out.count("::warning file=stacks/Pulumi.azure-prod.yaml,line=") == 1


# --------------------------------------------------------------------------------------------------------------------
# Accepted exceptions
# --------------------------------------------------------------------------------------------------------------------

def test_a_live_exception_reports_the_finding_with_its_reason_and_fails_nothing(capsys, tmp_path,
                                                                                interconnect_mandatory):
    stack = _azure_with_exceptions(tmp_path, expires="2999-12-31")
    text = stack.read_text().replace("    - rule:", "    - rule: " + INTERCONNECT + "\n      resource: "
                                     "az-training-cluster\n      reason: quota\n    - rule:", 1)
    stack.write_text(text)
    assert main(["check", "--stack", str(stack), "--policy-config", str(interconnect_mandatory), "--json"]) == 0
    violations = json.loads(capsys.readouterr().out)["violations"]
    assert len(violations) == 2
    assert {v["exception"]["reason"] for v in violations} == {"quota",
                                                               "ND A100 v4 quota refused in westeurope (TICKET-42)"}
    assert all(v["exception"]["expired"] is False for v in violations)
    assert main(["check", "--stack", str(stack), "--policy-config", str(interconnect_mandatory)]) == 0
    table = capsys.readouterr().out
    assert "0 mandatory, 0 advisory, 2 excepted" in table
    assert "excepted until 2999-12-31" in " ".join(table.split())


def test_an_expired_exception_fails_like_the_violation_it_hid(capsys, tmp_path, interconnect_mandatory):
    stack = _azure_with_exceptions(tmp_path, expires="2020-01-31")
    assert main(["check", "--stack", str(stack), "--policy-config", str(interconnect_mandatory), "--format",
                 "junit", "--out", str(tmp_path / "r.xml")]) == 1
    cases = {case.name: case for suite in JUnitXml.fromfile(str(tmp_path / "r.xml")) for case in suite}
    job = cases["az-training-job"]
    assert job.result and "exception expired after 2020-01-31" in job.result[0].message
    # the same exception with no end date holds
    stack = _azure_with_exceptions(tmp_path, expires=None, resource="az-training-job")
    main(["check", "--stack", str(stack), "--policy-config", str(interconnect_mandatory), "--json"])
    job_finding = [v for v in json.loads(capsys.readouterr().out)["violations"] if v["resource_name"] ==
                   "az-training-job"]
    assert job_finding[0]["exception"] == {"reason": "ND A100 v4 quota refused in westeurope (TICKET-42)",
                                           "expires": None, "expired": False}


@pytest.mark.parametrize(("rule", "resource", "field", "hint"), [
    ("databricks-cluster-prefer-interconnect-for-multinode-training", "az-training-job", "exceptions[0].rule",
     INTERCONNECT),
    (INTERCONNECT, "az-training-jobs", "exceptions[0].resource", "az-training-job"),
])
def test_an_exception_naming_nothing_real_is_invalid_input(capsys, tmp_path, rule, resource, field, hint):
    stack = _azure_with_exceptions(tmp_path, expires=None, rule=rule, resource=resource)
    assert main(["check", "--stack", str(stack)]) == 2
    err = capsys.readouterr().err
    assert f"dbx-ai-infra:{field}" in err and f"did you mean '{hint}'" in err


def test_an_exception_that_matches_no_finding_is_noted(capsys, tmp_path):
    stack = _azure_with_exceptions(tmp_path, expires=None, rule="databricks-resource-require-tags")
    assert main(["check", "--stack", str(stack), "--json"]) == 0
    assert "matches no finding; remove it" in capsys.readouterr().err


def test_an_exception_with_a_bad_date_is_refused_with_its_field(capsys, tmp_path):
    stack = _azure_with_exceptions(tmp_path, expires="next-week")
    assert main(["check", "--stack", str(stack)]) == 2
    assert "dbx-ai-infra:exceptions[0].expires" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------------------------
# Many stacks, one run
# --------------------------------------------------------------------------------------------------------------------

def _broken_stack(tmp_path: Path) -> Path:
    broken = tmp_path / "Pulumi.broken.yaml"
    broken.write_text((ROOT / "stacks" / "Pulumi.dev.yaml").read_text().replace("dbx-ai-infra:cloud: aws",
                                                                              "dbx-ai-infra:cloud: awz"))
    return broken


def test_check_all_reports_every_stack_and_exits_with_the_worst_code(capsys, tmp_path, interconnect_mandatory):
    assert main(["check", "--all", "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)["stacks"]
    assert [d["stack"] for d in docs] == available_stacks()
    assert main(["check", "--all", "--policy-config", str(interconnect_mandatory), "--format", "github"]) == 1
    assert capsys.readouterr().out.count("::error file=stacks/Pulumi.azure-prod.yaml") == 1
    broken = _broken_stack(tmp_path)
    assert main(["check", "--stack", "dev", "--stack", str(broken), "--stack", "azure-prod", "--format",
                 "sarif"]) == 2
    log = _valid_sarif(json.loads(capsys.readouterr().out))
    run = log["runs"][0]
    assert len(run["results"]) == 1  # azure-prod's finding is still reported
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert len(notes) == 1 and "dbx-ai-infra:cloud" in notes[0]["message"]["text"]
    assert main(["check", "--stack", "dev", "--stack", str(broken), "--format", "junit", "--out",
                 str(tmp_path / "r.xml")]) == 2
    suites = {s.name: s for s in JUnitXml.fromfile(str(tmp_path / "r.xml"))}
    assert suites["stackplan"].errors == 1


def test_soft_fail_turns_violations_into_success_but_never_invalid_input(capsys, tmp_path, interconnect_mandatory):
    assert main(["check", "--all", "--policy-config", str(interconnect_mandatory), "--soft-fail"]) == 0
    assert main(["check", "--stack", "dev", "--stack", str(_broken_stack(tmp_path)), "--soft-fail"]) == 2
    assert "Checked stack dev" in capsys.readouterr().out


def _base_plans(tmp_path: Path, stacks: list[str]) -> Path:
    base = tmp_path / "base"
    base.mkdir()
    for stack in stacks:
        assert main(["preview", "--stack", stack, "--json", "--out", str(base / f"{stack}.json")]) == 0
    return base


def test_combined_cost_report_puts_changed_stacks_first_and_folds_the_rest(capsys, tmp_path):
    base = _base_plans(tmp_path, ["dev", "prod", "gcp-dev"])
    changed = tmp_path / "head" / "Pulumi.prod.yaml"
    changed.parent.mkdir()
    changed.write_text((ROOT / "stacks" / "Pulumi.prod.yaml").read_text().replace("min_workers: 2",
                                                                                  "min_workers: 3"))
    broken = _broken_stack(tmp_path)
    out = tmp_path / "report.md"
    code = main(["cost", "--stack", "dev", "--stack", str(changed), "--stack", "gcp-dev", "--stack", "azure-prod",
                 "--stack", str(broken), "--against", str(base), "--format", "markdown", "--out", str(out)])
    assert code == 2  # the broken stack; the others are still in the report
    text = out.read_text()
    summary = [line for line in text.splitlines() if line.startswith("| ") and line.endswith(" |")][:6]
    order = [row.split("|")[1].strip() for row in summary[1:]]
    assert order[0].endswith("Pulumi.broken.yaml")
    assert order[1:3] == ["azure-prod", "prod"]  # new (no base plan), then changed
    assert set(order[3:]) == {"dev", "gcp-dev"}
    assert "| prod | aws |" in text and "+$263.41" in summary[3]
    assert "no base plan: new" in summary[2]
    folded = text.split("<details><summary>2 unchanged stacks: dev, gcp-dev</summary>", 1)
    assert len(folded) == 2 and "## Cost review: stack dev" in folded[1]
    assert "## Cost review: stack prod" in folded[0]
    assert "dbx-ai-infra:cloud" in text.split("## Cost review")[0]
    assert text.count("<summary>Assumptions</summary>") == 1
    assert text.count("<summary>Price sources</summary>") == 1
    assert "730 h/month (prod" in text or "h/month (" in text  # assumptions that differ name their stacks


def test_one_base_for_several_stacks_is_refused(capsys, tmp_path):
    base = _base_plans(tmp_path, ["dev"])
    assert main(["cost", "--stack", "dev", "--stack", "prod", "--against", str(base / "dev.json"),
                 "--format", "json"]) == 2
    docs = json.loads(capsys.readouterr().out)["stacks"]
    assert all("a directory of base plans" in d["error"] for d in docs)


def test_a_single_stack_takes_a_directory_of_base_plans(capsys, tmp_path):
    base = _base_plans(tmp_path, ["dev"])
    assert main(["cost", "--stack", "dev", "--against", str(base), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["diff"]["counts"]["unchanged"] > 0
    assert main(["cost", "--stack", "prod", "--against", str(base), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["diff"] is None  # no prod.json there: a new stack


def _run_in_pty(args: list[str], cwd: Path, out_file: Path) -> tuple[str, str]:
    """Run the CLI with stderr on a pseudo-terminal and stdout to a file (no pipe to fill while we read)."""
    leader, follower = pty.openpty()
    with out_file.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "stackplan", *args], cwd=cwd, stdout=out,
                                stderr=follower, env={**os.environ, "COLUMNS": "100"})
        os.close(follower)
        err = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            err += chunk
        proc.wait(timeout=300)
    os.close(leader)
    return out_file.read_text(), err.decode(errors="replace")


def test_a_progress_bar_shows_on_a_terminal_and_never_in_piped_output(tmp_path):
    two = ["--stack", "dev", "--stack", "gcp-dev"]  # a bar needs two stacks or more; the smallest two
    out, err = _run_in_pty(["check", *two, "--json"], ROOT, tmp_path / "out.json")
    assert "/2" in err  # the bar's "done/total" column
    assert "\x1b" not in out and len(json.loads(out)["stacks"]) == 2
    piped = subprocess.run([sys.executable, "-m", "stackplan", "check", *two, "--json"], cwd=ROOT,
                           capture_output=True, text=True, check=False)
    # no bar: what stderr holds is the stacks' notes alone (dev's endpoint comes after its model's registration)
    assert piped.returncode == 0 and all(line.startswith("note: ") for line in piped.stderr.splitlines())
    assert "\x1b" not in piped.stderr and "/2" not in piped.stderr


# --------------------------------------------------------------------------------------------------------------------
# The HTML before/after chart
# --------------------------------------------------------------------------------------------------------------------

def test_html_cost_diff_has_a_before_after_chart_by_workload(tmp_path):
    base = _base_plans(tmp_path, ["prod"])
    changed = tmp_path / "head" / "Pulumi.prod.yaml"
    changed.parent.mkdir()
    changed.write_text((ROOT / "stacks" / "Pulumi.prod.yaml").read_text().replace("min_workers: 2",
                                                                                  "min_workers: 3"))
    out = tmp_path / "r.html"
    assert main(["cost", "--stack", str(changed), "--against", str(base / "prod.json"), "--format", "html",
                 "--out", str(out)]) == 0
    svg = out.read_text().split('<svg role="img" class="before-after"', 1)[1].split("</svg>", 1)[0]
    root = ET.fromstring('<svg xmlns="http://www.w3.org/2000/svg"' + svg + "</svg>")
    rects = {(r.get("data-workload"), r.get("data-side")): float(r.get("width"))
             for r in root.iter("{http://www.w3.org/2000/svg}rect")}
    assert set(rects) == {(w, side) for w in ("training", "inference", "serving") for side in ("base", "head")}
    assert rects[("training", "base")] == rects[("training", "head")]  # training did not change
    assert rects[("inference", "head")] > rects[("inference", "base")]  # one more on-demand worker
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "after: $2,946.98/month" in texts
