"""The command-line contract: commands, --json shapes, exit codes 0 / 1 / 2, and files written atomically."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import STACKS, run_cli

from dbx_ai_infra.cli.cli import main

REPO = Path(__file__).resolve().parent.parent

API_EXAMPLE = {"cluster_name": "inference-gpu-cluster", "spark_version": "14.3.x-gpu-ml-scala2.12",
               "node_type_id": "g5.2xlarge", "driver_node_type_id": "g5.2xlarge", "num_workers": 2,
               "autoscale": {"min_workers": 2, "max_workers": 10},
               "azure_attributes": {"availability": "SPOT_WITH_FALLBACK_AZURE", "spot_bid_max_price": -1},
               "custom_tags": {"workload": "inference", "cost_center": "ai-team"}}


@pytest.mark.parametrize("stack", STACKS)
def test_every_stack_passes_check(stack, capsys):
    """Every stack file under stacks/: the shipped ones, and one a user adds (README: adding a stack)."""
    code, out, err = run_cli(capsys, "check", "--stack", stack, "--json")
    plan = json.loads(out)
    assert code == 0, err
    assert [v for v in plan["violations"] if v["enforcement"] == "mandatory"] == []
    assert plan["stack"] == stack and plan["resources"]


def test_preview_json_is_the_plan(capsys, tmp_path):
    out_file = tmp_path / "plan.json"
    code, out, _ = run_cli(capsys, "preview", "--stack", "dev", "--json", "--out", str(out_file))
    assert code == 0 and out == ""
    plan = json.loads(out_file.read_text())
    assert set(plan) >= {"stack", "resources", "violations", "outputs", "assumptions"}
    for r in plan["resources"]:
        assert set(r) >= {"urn", "type", "name", "parent", "inputs"}
        assert r["urn"].startswith("urn:pulumi:dev::dbx-ai-infra::")
    assert not list(tmp_path.glob(".plan.json.*"))  # no temporary file left behind


def test_preview_table_lists_resources_and_policies(capsys):
    code, out, _ = run_cli(capsys, "preview", "--stack", "dev")
    assert code == 0
    assert "Stack dev (aws)" in out and "dev-inference-cluster" in out and "g5.xlarge" in out
    assert "Policies: no violations." in out


def test_the_api_example_is_rejected(tmp_path, capsys):
    f = tmp_path / "cluster.json"
    f.write_text(json.dumps(API_EXAMPLE))
    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(f), "--json")
    assert code == 1
    policies = {v["policy"] for v in json.loads(out)["violations"]}
    assert {"databricks-cluster-require-matching-cloud-attributes",
            "databricks-cluster-configure-worker-bounds"} <= policies


@pytest.mark.parametrize("shape", ["object", "list", "clusters"])
def test_cluster_json_shapes(shape, tmp_path, capsys):
    good = {**API_EXAMPLE, "cluster_name": "ok"}
    del good["num_workers"], good["azure_attributes"]
    good.update(aws_attributes={"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 3},
                autotermination_minutes=20)
    doc = {"object": good, "list": [good, API_EXAMPLE], "clusters": {"clusters": [good, API_EXAMPLE]}}[shape]
    f = tmp_path / "c.json"
    f.write_text(json.dumps(doc))
    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(f), "--json")
    names = {v["resource_name"] for v in json.loads(out)["violations"] if v["enforcement"] == "mandatory"}
    assert "ok" not in names
    assert code == (0 if shape == "object" else 1)


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON at line 1, column 2"),
    ('"a string"', "expected a Databricks object or a list of them, got str"),
    ('[{"foo": 1}]', "does not look like a Databricks cluster"),
    ('{"clusters": 3}', "clusters: must be a list"),
])
def test_bad_cluster_json_exits_2(text, message, tmp_path, capsys):
    f = tmp_path / "c.json"
    f.write_text(text)
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(f))
    assert code == 2 and message in err and str(f) in err and out == ""


def test_policy_config_changes_thresholds_and_levels(tmp_path, capsys):
    cap = tmp_path / "cap.json"
    cap.write_text(json.dumps({"databricks-cluster-configure-worker-bounds": {"max_workers_cap": 4}}))
    # A mandatory cap bounds the spec too: prod's inference max_workers 10 is invalid input under a cap of 4.
    code, _, err = run_cli(capsys, "check", "--stack", "prod", "--policy-config", str(cap), "--json")
    assert code == 2 and "dbx-ai-infra:inference.max_workers" in err and "max_workers_cap" in err
    relaxed = tmp_path / "relaxed.json"
    relaxed.write_text(json.dumps({"databricks-cluster-configure-worker-bounds":
                                   {"max_workers_cap": 4, "enforcementLevel": "advisory"}}))
    code, out, _ = run_cli(capsys, "check", "--stack", "prod", "--policy-config", str(relaxed), "--json")
    assert code == 0  # an advisory cap does not bound the spec; the rule still reports
    (v,) = [v for v in json.loads(out)["violations"] if v["policy"] == "databricks-cluster-configure-worker-bounds"]
    assert v["resource_name"] == "prod-inference-cluster" and "4" in v["message"] and v["enforcement"] == "advisory"
    typo = tmp_path / "typo.json"
    typo.write_text(json.dumps({"no-such-policy": {"enforcementLevel": "advisory"}}))
    code, _, err = run_cli(capsys, "check", "--stack", "prod", "--policy-config", str(typo))
    assert code == 2 and "no-such-policy" in err


def test_a_raised_cap_moves_the_spec_and_the_rules_together(tmp_path, capsys):
    import yaml
    from conftest import config_for

    stack = tmp_path / "Pulumi.big.yaml"
    stack.write_text(yaml.safe_dump({"config": config_for(training={
        "num_workers": 65, "model": {"params_billions": 1}})}))
    code, _, err = run_cli(capsys, "check", "--stack", str(stack))
    assert code == 2 and "dbx-ai-infra:training.num_workers" in err and "at most 64" in err
    raised = tmp_path / "raised.json"
    raised.write_text(json.dumps({"databricks-cluster-configure-worker-bounds": {"max_workers_cap": 128}}))
    code, out, err = run_cli(capsys, "check", "--stack", str(stack), "--policy-config", str(raised), "--json")
    assert code == 0, err
    assert not [v for v in json.loads(out)["violations"] if v["policy"] == "databricks-cluster-configure-worker-bounds"]


def test_export_policies_and_evaluate_one_against_exported_clusters(tmp_path, capsys):
    out_dir = tmp_path / "policies"
    code, _, err = run_cli(capsys, "export-policies", "--stack", "prod", "--out", str(out_dir))
    assert code == 0
    files = sorted(p.name for p in out_dir.iterdir())
    assert files == ["prod-policy-inference.json", "prod-policy-training.json"]
    definition = json.loads((out_dir / "prod-policy-inference.json").read_text())
    # the pool decides availability, zone and spot: a cluster naming them with the pool is refused by the API
    for leaf in ("availability", "zone_id", "first_on_demand", "spot_bid_price_percent"):
        assert definition[f"aws_attributes.{leaf}"] == {"type": "forbidden", "hidden": True}
    # the pool's id is not known offline: the file marks it (and says so), naming the pool
    marker = "<id of instance pool prod-inference-pool: known after pulumi up>"
    assert definition["instance_pool_id"] == definition["driver_instance_pool_id"] == {"type": "fixed", "value": marker}
    assert "pins driver_instance_pool_id, instance_pool_id" in err

    clusters = tmp_path / "clusters.json"
    clusters.write_text(json.dumps({"clusters": [API_EXAMPLE]}))
    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(clusters), "--cluster-policy",
                       str(out_dir / "prod-policy-inference.json"), "--json")
    assert code == 1
    (result,) = json.loads(out)["cluster_policy"]
    assert result["cluster"] == "inference-gpu-cluster" and not result["allowed"]
    paths = {v["path"] for v in result["violations"]}
    assert {"azure_attributes.availability", "custom_tags.workload"} <= paths

    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(clusters), "--cluster-policy",
                       str(out_dir / "prod-policy-inference.json"))
    assert "Cluster policy: inference-gpu-cluster: refused" in out and "azure_attributes.availability" in out


def test_cluster_policy_needs_cluster_json_and_a_valid_definition(tmp_path, capsys):
    assert run_cli(capsys, "check", "--stack", "dev", "--cluster-policy", "x.json")[0] == 2
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"node_type_id": {"type": "maybe"}}))
    clusters = tmp_path / "c.json"
    clusters.write_text(json.dumps(API_EXAMPLE))
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(clusters), "--cluster-policy", str(bad))
    assert code == 2 and "node_type_id" in err


def test_export_policies_refuses_a_file_as_out(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    code, _, err = run_cli(capsys, "export-policies", "--stack", "dev", "--out", str(f))
    assert code == 2 and "not a directory" in err


def test_out_into_a_missing_directory_is_invalid_input(tmp_path, capsys):
    code, _, err = run_cli(capsys, "preview", "--stack", "dev", "--json", "--out", str(tmp_path / "no" / "plan.json"))
    assert code == 2 and "does not exist" in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["preview"])
    assert info.value.code == 2
    capsys.readouterr()


def _on_a_terminal(command: list[str], **env: str) -> tuple[int, str]:
    """Run ``command`` with its stdout on a pseudo-terminal; its exit code and what the terminal received."""
    import os
    import pty
    import subprocess

    leader, follower = pty.openpty()
    proc = subprocess.Popen(command, cwd=REPO, env={**os.environ, **env}, stdout=follower,
                            stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the run is over
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    return proc.returncode, b"".join(chunks).decode()


def test_tables_fit_the_terminal_in_colour_and_keep_the_file_width_elsewhere(tmp_path):
    import re
    import subprocess
    import sys

    # A GPU training cluster on 4 low-bandwidth nodes: one advisory finding with the longest policy id. An export
    # needs no Pulumi program, so the three processes below start in well under a second each.
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps({
        "cluster_name": "train", "spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.12xlarge",
        "num_workers": 4, "autotermination_minutes": 60, "data_security_mode": "SINGLE_USER",
        "single_user_name": "ml@example.com", "aws_attributes": {"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 1},
        "custom_tags": {"workload": "genai", "cost_center": "ai", "workload_type": "training"},
        "spark_env_vars": {"CHECKPOINT_DIR": "/Volumes/ai/ml/checkpoints/train"}}))
    command = [sys.executable, "-m", "stackplan", "check", "--cluster-json", str(cluster)]
    code, coloured = _on_a_terminal(command, COLUMNS="100")
    assert code == 0 and "\x1b[" in coloured  # colour on a terminal
    lines = re.sub(r"\x1b\[[0-9;]*m", "", coloured).splitlines()
    assert any("advisory" in line for line in lines)
    table = [line for line in lines if line[:1] in "┏┃┡│└"]  # the line naming the (long) tmp path wraps as text
    assert table and max(len(line) for line in table) <= 100
    assert any("databricks-cluster-prefer-" in line for line in lines)  # policy ids fold, not cut

    code, plain = _on_a_terminal(command, COLUMNS="100", NO_COLOR="1")
    assert code == 0 and "\x1b[" not in plain and "advisory" in plain

    to_file = tmp_path / "check.txt"
    subprocess.run([*command, "--out", str(to_file)], cwd=REPO, check=True)
    text = to_file.read_text()
    assert "\x1b[" not in text and max(len(line) for line in text.splitlines()) > 100  # files: stable width


def test_version_is_the_projects(capsys):
    import tomllib

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    version = tomllib.loads(pyproject.read_text())["project"]["version"]
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.split() == ["python", "-m", "stackplan", version]


@pytest.mark.parametrize("command", ["preview", "check", "cost", "export-policies"])
def test_every_subcommand_help_shows_an_example_and_the_exit_codes(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert f"python -m stackplan {command} --stack" in text.split("examples:")[1]
    codes = text.split("exit codes:")[1]
    assert all(f"  {code} " in codes for code in ("0", "1", "2", "130"))


def test_check_names_what_it_checked(capsys, tmp_path):
    assert main(["check", "--stack", "dev"]) == 0
    assert capsys.readouterr().out.startswith("Checked stack dev (stacks/Pulumi.dev.yaml): ")
    clusters = tmp_path / "clusters.json"
    clusters.write_text(json.dumps([{"cluster_name": "a"}, {"cluster_name": "b"}]))
    main(["check", "--cluster-json", str(clusters)])
    assert capsys.readouterr().out.startswith(f"Checked {clusters}: 2 clusters (0 GPU).")


def test_table_cells_are_shown_as_written_not_as_markup():
    from dbx_ai_infra.dbxtypes.plan import Violation
    from dbx_ai_infra.reports.render import violations_table

    v = Violation(policy="p", enforcement="mandatory", urn="urn:x", resource_name="[bold]name",
                  message="set spark.master=local[*] and keep [red]this[/red] text")
    text = violations_table([v])
    assert "[bold]name" in text and "[red]this[/red]" in text and "local[*]" in text


@pytest.mark.parametrize("command", ["preview", "check"])
def test_a_stacks_preview_or_check_does_not_import_the_terraform_reader(command, tmp_path):
    """Issue 53, item 5: the Terraform reader (HCL, its evaluator and functions) was about 40 ms of every stack's
    start, imported by `cost --against`'s bases; ``cost`` is its own module now, and only it and ``--terraform``
    load them."""
    code = ("import sys; from dbx_ai_infra.cli.cli import main; "
            f"code = main(['{command}', '--stack', 'dev', '--json', '--out', {str(tmp_path / 'o.json')!r}]); "
            "print(code, sorted(m for m in sys.modules if m.startswith(tuple('dbx_ai_infra.sources.' + n for n in "
            "('hcl', 'tfload', 'tfeval', 'tfscope', 'tffunctions', 'tfexpand', 'tf_providers')))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split()[:1] == ["0"] and done.stdout.strip().endswith("[]"), done.stdout + done.stderr
    cost = code.replace(f"'{command}', '--stack', 'dev'", "'cost', '--stack', 'dev', '--against', 'dev'")
    done = subprocess.run([sys.executable, "-c", cost], capture_output=True, text=True, check=True)
    assert "dbx_ai_infra.sources.hcl" in done.stdout  # the probe sees them where they are used
