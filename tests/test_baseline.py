"""Audit baselines (issue 28, part 3): `check --write-baseline FILE` records today's findings; `check --baseline FILE`
fails only on new ones, marks the rest baselined and lists the ones that are gone as fixed."""

from __future__ import annotations

import json

from conftest import run_cli

SPOT_INFERENCE = {"cluster_id": "0101-spot", "cluster_name": "chat-serving", "spark_version": "17.3.x-gpu-ml-scala2.13",
                  "node_type_id": "g5.xlarge", "autoscale": {"min_workers": 2, "max_workers": 4},
                  "aws_attributes": {"availability": "SPOT", "first_on_demand": 0},
                  "custom_tags": {"workload": "genai", "cost_center": "ai", "workload_type": "inference"},
                  "autotermination_minutes": 30}


def export(tmp_path, *clusters, name="clusters.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"clusters": list(clusters)}))
    return path


def test_a_baselined_export_passes_and_only_a_new_finding_fails(tmp_path, capsys):
    first = export(tmp_path, SPOT_INFERENCE)
    baseline = tmp_path / "baseline.json"
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(first), "--write-baseline", str(baseline))
    assert code == 1 and f"wrote {baseline}" in err  # writing a baseline does not hide today's findings
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(first), "--baseline", str(baseline), "--json")
    assert code == 0 and "0 new" in err
    assert {v["baseline"] for v in json.loads(out)["violations"]} == {"unchanged"}
    # the same objects listed in another order, in another file: the same fingerprints
    other = dict(SPOT_INFERENCE, cluster_id="0202-new", cluster_name="embed-serving")
    both = export(tmp_path, other, SPOT_INFERENCE, name="later.json")
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(both), "--baseline", str(baseline), "--json")
    assert code == 1
    states = {(v["resource_name"], v["baseline"]) for v in json.loads(out)["violations"]}
    assert ("embed-serving", "new") in states and ("chat-serving", "unchanged") in states
    assert ("chat-serving", "new") not in states


def test_a_finding_that_is_gone_is_listed_as_fixed_and_sarif_says_unchanged_or_new(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    run_cli(capsys, "check", "--cluster-json", str(export(tmp_path, SPOT_INFERENCE)), "--write-baseline", str(baseline))
    fixed = dict(SPOT_INFERENCE, aws_attributes={"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 3})
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(export(tmp_path, fixed, name="f.json")),
                         "--baseline", str(baseline), "--format", "sarif")
    assert code == 0 and "fixed since: databricks-cluster-disallow-all-spot-inference on chat-serving" in err
    new = dict(SPOT_INFERENCE, cluster_id="0303", cluster_name="other")
    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(export(tmp_path, SPOT_INFERENCE, new, name="g.json")),
                       "--baseline", str(baseline), "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert {r["baselineState"] for r in results} == {"new", "unchanged"}


def test_stacks_take_a_baseline_too_and_the_table_says_baselined(tmp_path, capsys):
    baseline = tmp_path / "b.json"
    assert run_cli(capsys, "check", "--stack", "azure-prod", "--write-baseline", str(baseline))[0] == 0
    code, out, _ = run_cli(capsys, "check", "--stack", "azure-prod", "--baseline", str(baseline))
    assert code == 0 and "│ baselined │" in out


def test_a_baseline_that_is_not_one_is_invalid_input(tmp_path, capsys):
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({"version": 9, "findings": []}))
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--baseline", str(bad))
    assert code == 2 and "is not a baseline of version 2" in err
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--write-baseline", str(tmp_path))
    assert code == 2 and "--write-baseline: is a directory" in err


def test_github_annotations_and_junit_fail_only_on_new_findings(tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    first = export(tmp_path, SPOT_INFERENCE)
    run_cli(capsys, "check", "--cluster-json", str(first), "--write-baseline", str(baseline))
    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(first), "--baseline", str(baseline), "--format", "github")
    assert code == 0 and out.startswith("::notice ") and "::error" not in out
    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(first), "--baseline", str(baseline), "--format", "junit")
    assert code == 0 and "<failure" not in out


# --- issue 44, item 1: a baseline never hides a new, worse finding --------------------------------------------------

def _fallback(**aws):
    return dict(SPOT_INFERENCE, aws_attributes={"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 1, **aws})


def test_a_new_worse_finding_of_the_same_rule_on_the_same_cluster_is_new(tmp_path, capsys):
    """v1: the base is short of on-demand nodes (one finding); v2: the same cluster all-spot (that finding, and one
    more of the same rule). Before, both matched the one baselined fingerprint: exit 0, "0 new, 2 baselined". One
    finding per rule per resource (issue 51, item 7): v2's two messages are one finding, which is not the baselined
    one: new, and the baselined one fixed."""
    baseline = tmp_path / "b.json"
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(export(tmp_path, _fallback(), name="v1.json")),
                       "--write-baseline", str(baseline))
    assert code == 1 and f"wrote {baseline}: 1 finding(s)" in err
    assert len(json.loads(baseline.read_text())["findings"]) == 1
    v2 = export(tmp_path, SPOT_INFERENCE, name="v2.json")
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(v2), "--baseline", str(baseline), "--json")
    states = sorted(v["baseline"] for v in json.loads(out)["violations"])
    assert code == 1 and states == ["new"] and "1 new, 0 baselined, 1 fixed" in err


def test_a_figure_that_moves_keeps_the_finding_baselined(tmp_path, capsys):
    baseline = tmp_path / "b.json"
    run_cli(capsys, "check", "--cluster-json", str(export(tmp_path, _fallback(), name="v1.json")), "--write-baseline",
        str(baseline))
    bigger = dict(_fallback(), autoscale={"min_workers": 3, "max_workers": 6})  # "needs 4" instead of "needs 3"
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(export(tmp_path, bigger, name="v2.json")), "--baseline",
                       str(baseline))
    assert code == 0 and "0 new, 1 baselined, 0 fixed" in err


def test_sarif_fingerprints_are_unique_per_result(tmp_path, capsys):
    twice = [dict(SPOT_INFERENCE, cluster_id=None, cluster_name="same"), dict(SPOT_INFERENCE, cluster_id=None,
                                                                               cluster_name="same")]
    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(export(tmp_path, *twice)), "--format", "sarif")
    prints = [next(iter(r["partialFingerprints"].values())) for r in json.loads(out)["runs"][0]["results"]]
    assert len(prints) >= 2 and len(set(prints)) == len(prints)


def test_a_baseline_of_another_stack_says_so_and_lists_nothing_as_fixed(tmp_path, capsys):
    baseline = tmp_path / "b.json"
    run_cli(capsys, "check", "--stack", "azure-prod", "--write-baseline", str(baseline))
    assert json.loads(baseline.read_text())["sources"] == ["azure-prod"]
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--baseline", str(baseline))
    assert code == 0 and "was written for azure-prod, not for dev" in err
    assert "fixed since" not in err and "0 fixed" in err


def test_a_version_1_baseline_is_refused_with_the_fix(tmp_path, capsys):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"version": 1, "written": "2026-12-01", "findings": []}))
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--baseline", str(old))
    assert code == 2 and "version 1" in err and "write it again" in err and "Traceback" not in err
