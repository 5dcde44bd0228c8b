"""Audit baselines (issue 28, part 3): `check --write-baseline FILE` records today's findings; `check --baseline FILE`
fails only on new ones, marks the rest baselined and lists the ones that are gone as fixed."""

from __future__ import annotations

import json

from stackplan.cli import main

SPOT_INFERENCE = {"cluster_id": "0101-spot", "cluster_name": "chat-serving", "spark_version": "15.4.x-gpu-ml-scala2.12",
                  "node_type_id": "g5.xlarge", "autoscale": {"min_workers": 2, "max_workers": 4},
                  "aws_attributes": {"availability": "SPOT", "first_on_demand": 0},
                  "custom_tags": {"workload": "genai", "cost_center": "ai", "workload_type": "inference"},
                  "autotermination_minutes": 30}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def export(tmp_path, *clusters, name="clusters.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"clusters": list(clusters)}))
    return path


def test_a_baselined_export_passes_and_only_a_new_finding_fails(tmp_path, capsys):
    first = export(tmp_path, SPOT_INFERENCE)
    baseline = tmp_path / "baseline.json"
    code, _, err = run(capsys, "check", "--cluster-json", str(first), "--write-baseline", str(baseline))
    assert code == 1 and f"wrote {baseline}" in err  # writing a baseline does not hide today's findings
    code, out, err = run(capsys, "check", "--cluster-json", str(first), "--baseline", str(baseline), "--json")
    assert code == 0 and "0 new" in err
    assert {v["baseline"] for v in json.loads(out)["violations"]} == {"unchanged"}
    # the same objects listed in another order, in another file: the same fingerprints
    other = dict(SPOT_INFERENCE, cluster_id="0202-new", cluster_name="embed-serving")
    both = export(tmp_path, other, SPOT_INFERENCE, name="later.json")
    code, out, err = run(capsys, "check", "--cluster-json", str(both), "--baseline", str(baseline), "--json")
    assert code == 1
    states = {(v["resource_name"], v["baseline"]) for v in json.loads(out)["violations"]}
    assert ("embed-serving", "new") in states and ("chat-serving", "unchanged") in states
    assert ("chat-serving", "new") not in states


def test_a_finding_that_is_gone_is_listed_as_fixed_and_sarif_says_unchanged_or_new(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    run(capsys, "check", "--cluster-json", str(export(tmp_path, SPOT_INFERENCE)), "--write-baseline", str(baseline))
    fixed = dict(SPOT_INFERENCE, aws_attributes={"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 3})
    code, out, err = run(capsys, "check", "--cluster-json", str(export(tmp_path, fixed, name="f.json")),
                         "--baseline", str(baseline), "--format", "sarif")
    assert code == 0 and "fixed since: databricks-cluster-disallow-all-spot-inference on chat-serving" in err
    new = dict(SPOT_INFERENCE, cluster_id="0303", cluster_name="other")
    code, out, _ = run(capsys, "check", "--cluster-json", str(export(tmp_path, SPOT_INFERENCE, new, name="g.json")),
                       "--baseline", str(baseline), "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert {r["baselineState"] for r in results} == {"new", "unchanged"}


def test_stacks_take_a_baseline_too_and_the_table_says_baselined(tmp_path, capsys):
    baseline = tmp_path / "b.json"
    assert run(capsys, "check", "--stack", "azure-prod", "--write-baseline", str(baseline))[0] == 0
    code, out, _ = run(capsys, "check", "--stack", "azure-prod", "--baseline", str(baseline))
    assert code == 0 and "│ baselined │" in out


def test_a_baseline_that_is_not_one_is_invalid_input(tmp_path, capsys):
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({"version": 9, "findings": []}))
    code, _, err = run(capsys, "check", "--stack", "dev", "--baseline", str(bad))
    assert code == 2 and "is not a baseline of version 1" in err
    code, _, err = run(capsys, "check", "--stack", "dev", "--write-baseline", str(tmp_path))
    assert code == 2 and "--write-baseline: is a directory" in err


def test_github_annotations_and_junit_fail_only_on_new_findings(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    first = export(tmp_path, SPOT_INFERENCE)
    run(capsys, "check", "--cluster-json", str(first), "--write-baseline", str(baseline))
    code, out, _ = run(capsys, "check", "--cluster-json", str(first), "--baseline", str(baseline), "--format", "github")
    assert code == 0 and out.startswith("::notice ") and "::error" not in out
    code, out, _ = run(capsys, "check", "--cluster-json", str(first), "--baseline", str(baseline), "--format", "junit")
    assert code == 0 and "<failure" not in out
