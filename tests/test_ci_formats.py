"""`check --format junit|github` and `--soft-fail`: findings in the shapes CI systems read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.policies.registry import RULES_BY_NAME

CLUSTERS = [
    {"cluster_name": "ok-ish", "spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.xlarge",
     "num_workers": 2, "autotermination_minutes": 30, "custom_tags": {"workload": "w", "cost_center": "c"}},
    {"cluster_name": "no-tags", "spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.xlarge",
     "num_workers": 2},
]


@pytest.fixture
def clusters(tmp_path):
    path = tmp_path / "clusters.json"
    path.write_text(json.dumps(CLUSTERS))
    return path


def _placed(name: str) -> str:
    """A cluster of CLUSTERS as CI formats name it: its place in the JSON list, then its name."""
    return f"[{[c['cluster_name'] for c in CLUSTERS].index(name)}] {name}"


def _findings(capsys, path) -> list[dict]:
    assert main(["check", "--cluster-json", str(path), "--json"]) == 1
    return json.loads(capsys.readouterr().out)["violations"]


def test_junit_lists_every_rule_and_fails_exactly_the_mandatory_findings(capsys, clusters, tmp_path):
    findings = _findings(capsys, clusters)
    out = tmp_path / "report.xml"
    assert main(["check", "--cluster-json", str(clusters), "--format", "junit", "--out", str(out)]) == 1
    xml = JUnitXml.fromfile(str(out))
    suites = {suite.name: suite for suite in xml}
    assert set(suites) == set(RULES_BY_NAME)  # every rule that ran is a test suite
    failed = sorted((case.classname, case.name) for suite in xml for case in suite
                    if any(isinstance(r, Failure) for r in case.result))
    expected = sorted((f["policy"], _placed(f["resource_name"])) for f in findings if f["enforcement"] == "mandatory")
    assert failed == expected and expected
    assert sum(suite.failures for suite in xml) == len(expected)


def test_junit_leaves_out_disabled_rules(capsys, clusters, tmp_path):
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"databricks-resource-require-tags": "disabled"}))
    main(["check", "--cluster-json", str(clusters), "--format", "junit", "--policy-config", str(config)])
    names = {suite.name for suite in JUnitXml.fromstring(capsys.readouterr().out.split("\n", 1)[1])}
    assert "databricks-resource-require-tags" not in names and "databricks-api-conformance" in names


def test_github_annotates_the_input_file_with_escaped_messages(capsys, clusters):
    findings = _findings(capsys, clusters)
    assert main(["check", "--cluster-json", str(clusters), "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(findings)
    for line, finding in zip(lines, findings, strict=True):
        level = "error" if finding["enforcement"] == "mandatory" else "warning"
        props, message = line[2:].split("::", 1)
        assert props.startswith(f"{level} file=") and f"title={finding['policy']}" in props
        assert "%3A" not in message and "\n" not in message
        assert message.startswith(f"{_placed(finding['resource_name'])}: ")  # "[1] no-tags": its place in the list
    # the file path is a property: its ':' and ',' are escaped so the command parses
    odd = clusters.with_name("a,b:c.json")
    odd.write_text(clusters.read_text())
    main(["check", "--cluster-json", str(odd), "--format", "github"])
    assert "a%2Cb%3Ac.json" in capsys.readouterr().out


def test_soft_fail_exits_0_but_still_reports(capsys, clusters):
    assert main(["check", "--cluster-json", str(clusters), "--soft-fail"]) == 0
    assert "mandatory" in capsys.readouterr().out
    bad = clusters.with_name("bad.json")
    bad.write_text("{")
    assert main(["check", "--cluster-json", str(bad), "--soft-fail"]) == 2  # invalid input is still invalid


def test_a_stack_annotates_its_stack_file(capsys):
    assert main(["check", "--stack", "azure-prod", "--format", "github"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("::warning file=stacks/Pulumi.azure-prod.yaml,") for line in lines)


def test_ci_formats_refuse_what_they_cannot_carry(capsys, clusters, tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"autotermination_minutes": {"type": "fixed", "value": 30}}))
    out = tmp_path / "report.xml"
    code = main(["check", "--cluster-json", str(clusters), "--cluster-policy", str(policy), "--format", "junit",
                 "--out", str(out)])
    assert code == 2 and "--cluster-policy" in capsys.readouterr().err and not out.exists()


def _section_line(stack_file, key: str) -> int:
    """The line of ``key`` in a stack file, found by reading its text (independent of the YAML parser)."""
    for number, line in enumerate(stack_file.read_text().splitlines(), start=1):
        if line.strip().startswith(f"{key}:"):
            return number
    raise AssertionError(f"{key} not in {stack_file}")


def _field_line(stack_file, section: str, field: str) -> int:
    """The line of ``field`` inside ``section`` of a stack file, read from its text (a 4-space indented key)."""
    lines = stack_file.read_text().splitlines()
    start = _section_line(stack_file, section)
    for number, line in enumerate(lines[start:], start=start + 1):
        if line.startswith(f"    {field}:"):
            return number
        if line.startswith("  ") and not line.startswith("    ") and line.strip():
            break
    raise AssertionError(f"{section}.{field} not in {stack_file}")


def test_each_finding_points_at_the_stack_field_behind_it(capsys, tmp_path):
    from pathlib import Path

    config = tmp_path / "policy.json"  # advisory, so the spec does not refuse the stack first
    config.write_text(json.dumps({"databricks-cluster-configure-worker-bounds":
                                  {"enforcementLevel": "advisory", "max_workers_cap": 1}}))
    assert main(["check", "--stack", "prod", "--policy-config", str(config), "--format", "github"]) == 0
    commands = capsys.readouterr().out.splitlines()
    prod = Path(__file__).resolve().parent.parent / "stacks" / "Pulumi.prod.yaml"
    # the worker-bounds rule is decided by num_workers (training) and min_workers (inference), both set in prod
    expected = {"training": _field_line(prod, "dbx-ai-infra:training", "num_workers"),
                "inference": _field_line(prod, "dbx-ai-infra:inference", "min_workers")}
    assert len(set(expected.values())) == 2
    seen = set()
    for command in commands:
        resource = command.split("::", 2)[2].split(":", 1)[0]
        section = "training" if "-training-" in resource else "inference"
        assert f",line={expected[section]}," in command
        seen.add(section)
    assert seen == {"training", "inference"}

    out = tmp_path / "report.xml"
    main(["check", "--stack", "prod", "--policy-config", str(config), "--format", "junit", "--out", str(out)])
    # the inference cluster's finding and the training job's (its job cluster: prod makes no training cluster)
    cases = [case for suite in JUnitXml.fromfile(str(out)) for case in suite
             if case.name.endswith(("-cluster", "-training-job"))]
    assert {case._elem.get("line") for case in cases} == {str(v) for v in expected.values()}


def test_a_finding_points_at_its_field_else_the_top_level_setting_else_its_section(tmp_path):
    from dbx_ai_infra.dbxtypes.plan import Plan, Violation
    from dbx_ai_infra.reports.located import violation_lines

    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text("config:\n  dbx-ai-infra:tags:\n    workload: w\n  dbx-ai-infra:inference:\n"
                     "    max_workers: 4\n    spot_above_base: true\n")
    urn = "urn:pulumi:s::dbx-ai-infra::dbx-ai-infra:compute:InferenceCluster$databricks:index/cluster:Cluster::s-i"

    def line(policy: str) -> int:
        v = Violation(policy=policy, enforcement="mandatory", urn=urn, resource_name="s-i", message="m")
        plan = Plan(stack="s", project="p", cloud="aws", stack_file=str(stack), resources=[])
        return violation_lines(plan, [v])[(policy, urn)]

    assert line("databricks-cluster-disallow-all-spot-inference") == 6   # inference.spot_above_base
    assert line("databricks-resource-require-tags") == 2                # the stack's tags
    assert line("databricks-api-conformance") == 4                      # no field: the inference section
    assert line("databricks-cluster-require-autotermination") == 4      # its field is not set: the section


def test_bare_keys_point_at_their_line_too(capsys, tmp_path):
    from dbx_ai_infra.dbxtypes.stack_files import section_lines

    stack = tmp_path / "Pulumi.bare.yaml"
    stack.write_text("# a comment\nconfig:\n  cloud: aws\n\n  training:\n    num_workers: 2\n")
    assert section_lines(stack) == {"": 2, "cloud": 3, "training": 5, "training.num_workers": 6}


def test_a_urn_names_the_section_of_its_component():
    from dbx_ai_infra.dbxtypes.vocabulary import section_of_urn

    base = "urn:pulumi:prod::dbx-ai-infra::"
    assert section_of_urn(base + "dbx-ai-infra:compute:InferenceCluster$databricks:index/cluster:Cluster::x") \
        == "inference"
    assert section_of_urn(base + "dbx-ai-infra:storage:UnityCatalogStorage$databricks:index/schema:Schema::s") \
        == "unity_catalog"
    assert section_of_urn(base + "databricks:index/cluster:Cluster::loose") is None
    assert section_of_urn("not a urn") is None


def test_junit_file_attributes_hold_one_path_each(capsys):
    """`check --all --format junit` put four paths joined by commas in the file attribute of a passing case."""
    import xml.etree.ElementTree as ET

    from dbx_ai_infra.cli.cli import main
    from dbx_ai_infra.dbxtypes.stack_files import available_stacks

    assert main(["check", "--all", "--format", "junit"]) in (0, 1)
    root = ET.fromstring(capsys.readouterr().out.encode())
    files = {case.get("file") for case in root.iter("testcase")}
    assert files and all(f and "," not in f and Path(f).is_file() for f in files), files
    assert len(files) == len(available_stacks())  # each stack file is named, on its own
