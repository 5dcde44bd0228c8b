"""Issue 56, item 3: a workspace's audit (`stackplan audit`) and its drift against a stack (`stackplan drift`) are
commands of their own, owning their arguments; ``check --cluster-json|--workspace`` (with ``--stack``: drift) stays
their documented alias: the same stdout and exit code, and one note on stderr that names the command."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from dbx_ai_infra.cli import cli
from dbx_ai_infra.engine import exits

REPO = Path(__file__).resolve().parent.parent
EXPORT = str(REPO / "examples" / "workspace-export")


@pytest.mark.parametrize("extra", [[], ["--json"], ["--format", "sarif"], ["--format", "junit"]])
def test_audit_of_an_export_is_what_its_check_alias_prints(capsys, extra):
    code, out, err = run_cli(capsys, "audit", "--cluster-json", EXPORT, *extra)
    alias_code, alias_out, alias_err = run_cli(capsys, "check", "--cluster-json", EXPORT, *extra)
    assert (code, out) == (alias_code, alias_out)
    assert code == exits.EXIT_VIOLATIONS and out.strip()  # the example export has mandatory findings
    assert "stackplan audit" not in err
    assert "note: `check --cluster-json` is `stackplan audit --cluster-json`" in alias_err.splitlines()
    assert "stackplan audit" not in alias_out


def test_audit_with_a_cluster_policy_and_soft_fail_matches_the_alias(capsys, tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text('{"autotermination_minutes": {"type": "range", "maxValue": 60}}')
    argv = ["--cluster-json", EXPORT, "--cluster-policy", str(policy), "--soft-fail", "--json"]
    code, out, _ = run_cli(capsys, "audit", *argv)
    assert (code, out) == run_cli(capsys, "check", *argv)[:2]
    assert code == exits.EXIT_OK and '"cluster_policy"' in out


def test_drift_is_what_its_check_alias_prints(capsys):
    argv = ["--stack", "prod", "--cluster-json", EXPORT, "--json"]
    code, out, err = run_cli(capsys, "drift", *argv)
    alias_code, alias_out, alias_err = run_cli(capsys, "check", *argv)
    assert (code, out) == (alias_code, alias_out)
    assert code == exits.EXIT_OK and '"drift' in out
    assert "stackplan drift" not in err
    assert ("note: `check --stack STACK --cluster-json` is `stackplan drift --stack STACK --cluster-json`"
            in alias_err.splitlines())


@pytest.mark.parametrize(("argv", "message"), [
    (["audit"], "no workspace to read. Fix: pass --cluster-json FILE|DIR (an export) or --workspace (a live read)."),
    (["audit", "--workspace", "--cluster-json", EXPORT],
     "--cluster-json and --workspace are two sources of clusters. Fix: pass one of them."),
    (["audit", "--cluster-json", EXPORT, "--profile", "prod"],
     "--profile and --save-export go with --workspace. Fix: add --workspace."),
    (["audit", "--cluster-json", EXPORT, "--cluster-policy", "p.json", "--format", "sarif"],
     "--format sarif does not carry --cluster-policy results yet. Fix: use --format table or --json for the "
     "cluster-policy evaluation."),
    (["drift", "--stack", "prod"],
     "no workspace to read. Fix: pass --cluster-json FILE|DIR (an export) or --workspace (a live read)."),
    (["drift", "--stack", "prod", "--stack", "dev", "--cluster-json", EXPORT],
     "drift compares one stack with a workspace. Fix: pass one --stack with --workspace or --cluster-json."),
    (["drift", "--stack", "prod", "--cluster-json", EXPORT, "--save-export", "x"],
     "--profile and --save-export go with --workspace. Fix: add --workspace."),
])
def test_a_usage_error_is_exit_2_with_its_message_and_no_output(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == exits.EXIT_INVALID
    assert out == ""
    assert err.splitlines() == [f"error: {message}"]


@pytest.mark.parametrize("argv", [
    ["audit", "--cluster-json", EXPORT, "--format", "markdown"],  # an audit has no page
    ["audit", "--cluster-json", EXPORT, "--stack", "prod"],  # a stack is drift's
    ["drift", "--cluster-json", EXPORT],  # drift needs its stack
    ["drift", "--stack", "prod", "--cluster-json", EXPORT, "--baseline", "b.json"],  # drift fails nothing
])
def test_arguments_a_command_does_not_own_are_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == exits.EXIT_INVALID
    out, err = capsys.readouterr()
    assert out == "" and "error:" in err


def test_the_check_alias_keeps_its_own_usage_messages(capsys):
    """The alias's usage errors are check's, as documented (no note: nothing ran)."""
    code, out, err = run_cli(capsys, "check", "--stack", "prod", "--stack", "dev", "--cluster-json", EXPORT)
    assert code == exits.EXIT_INVALID and out == ""
    assert err.splitlines() == ["error: drift compares one stack with a workspace. Fix: pass one --stack with "
                                "--workspace or --cluster-json."]
