"""A fourth hostile pass (issue 54): team rules that escape, interrupted writes, and answers about the wrong thing.

The team-rule cases run the real ``python -m stackplan`` in a subprocess, as a user's gate runs it: what a rule does
to a process (``posix._exit``, ``os.execv``, a write to file descriptor 1, a hang, a signal) is only seen there."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_TF = REPO / "examples" / "terraform" / "code"

RULE = '''
import os, posix, signal, sys, time

from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.rule import Rule


def check(view, config):
{body}


RULE = Rule(name="acme-broken", description="a rule that breaks", enforcement="mandatory",
            resource_types=(CLUSTER, JOB), check=check, remediation="none")
'''


def _rules(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "broken.py").write_text(RULE.format(body=body))
    return folder


def _stackplan(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stackplan", *argv], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _cluster_json(tmp_path: Path) -> Path:
    export = tmp_path / "clusters.json"
    export.write_text(json.dumps({"clusters": [{"cluster_name": "gpu", "node_type_id": "g5.xlarge",
                                                "num_workers": 1, "spark_version": "15.4.x-gpu-ml-scala2.12"}]}))
    return export


# --- 1. a team rule never ends the gate, nor writes into its report ------------------------------------------------

ESCAPES = {
    "posix._exit": ("    posix._exit(0)", "ended the process it runs in (exit code 0"),
    "os.execv": ("    os.execv('/bin/true', ['/bin/true'])", "ended the process it runs in (exit code 0"),
    "a signal to itself": ("    os.kill(os.getpid(), signal.SIGKILL)", "(signal SIGKILL)"),
    "a write to fd 1": ("    os.write(1, b'{\"stack\": \"forged\"}')\n    return []",
                        "wrote to standard output (file descriptor 1)"),
    "a hang": ("    time.sleep(600)", "did not answer within 1 s"),
    "a BaseException of its own": ("    class Stop(BaseException):\n        pass\n    raise Stop('no')",
                                   "raised Stop"),
    "a KeyboardInterrupt raised": ("    raise KeyboardInterrupt", "raised KeyboardInterrupt"),
}


@pytest.mark.parametrize("case", list(ESCAPES))
@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_a_rule_that_escapes_its_check_is_exit_2_naming_it_and_nothing_is_written(tmp_path, case, fmt):
    body, said = ESCAPES[case]
    folder = _rules(tmp_path, body)
    done = _stackplan("check", "--stack", "dev", "--rules", str(folder), "--format", fmt, "--rule-timeout", "1")
    assert done.returncode == 2, (case, done.returncode, done.stdout[:200], done.stderr)
    assert done.stdout == ""  # no report: the gate did not pass, and nothing of the rule's reached stdout
    assert said in done.stderr and "RULE acme-broken" in done.stderr and str(folder / "broken.py") in done.stderr
    assert "(on dev-" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_rule_that_escapes_while_judging_an_export_names_the_cluster(tmp_path):
    folder = _rules(tmp_path, "    posix._exit(0)")
    done = _stackplan("check", "--cluster-json", str(_cluster_json(tmp_path)), "--rules", str(folder), "--json")
    assert done.returncode == 2 and done.stdout == "" and "(on gpu)" in done.stderr, done.stderr


def test_what_a_rule_prints_is_shown_as_its_own_and_the_report_is_whole(tmp_path):
    folder = _rules(tmp_path, "    print('judging', view.resource_type)\n    return []")
    done = _stackplan("check", "--stack", "dev", "--rules", str(folder), "--format", "sarif")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runs"]  # the report alone on stdout
    assert f"rule acme-broken ({folder / 'broken.py'}): judging databricks:index/cluster:Cluster" in done.stderr


def test_a_module_that_ends_its_process_while_loading_is_exit_2_naming_it(tmp_path):
    folder = _rules(tmp_path, "    return []")
    (folder / "broken.py").write_text("import posix\nposix._exit(3)\n")
    done = _stackplan("check", "--stack", "dev", "--rules", str(folder))
    assert done.returncode == 2 and f"{folder / 'broken.py'}: does not load: it ended the process" in done.stderr
    assert "exit code 3" in done.stderr


def test_a_typed_setting_of_a_team_rule_is_still_checked_by_its_model(tmp_path):
    """The rule's `Thresholds` model lives in the rule's process: the policy config is checked there."""
    config = tmp_path / "pc.json"
    config.write_text(json.dumps({"acme-gpu-require-owner-tag": {"tag": ""}}))
    done = _stackplan("check", "--stack", "dev", "--rules", str(REPO / "examples" / "rules"), "--policy-config",
                      str(config))
    assert done.returncode == 2 and "acme-gpu-require-owner-tag.tag" in done.stderr
    assert "at least 1 character" in done.stderr


def test_many_resources_go_to_the_rules_process_in_one_batch(tmp_path):
    """One process per run and one message for many resources, not a round trip per call (bench: team rules)."""
    from dbx_ai_infra.policies.evaluate import evaluate_export
    from dbx_ai_infra.policies.items import ExportItem
    from dbx_ai_infra.policies.registry import forget_team_rules, load_team_rules, use_team_rules
    from dbx_ai_infra.policies.team_process import TeamProcess

    folder = _rules(tmp_path, "    return [f'seen {view.props.get(\"cluster_name\")}. Fix: none.']")
    sent: list[int] = []
    original = TeamProcess._send

    def counting(self, op, body):
        sent.append(len(body) if op == "check" else 0)
        return original(self, op, body)

    items = [ExportItem(resource_type="databricks:index/cluster:Cluster", name=f"c{i}", urn=f"c{i}", label="", source="x",
                        props={"cluster_name": f"c{i}", "node_type_id": "i3.xlarge", "num_workers": 1})
             for i in range(50)]
    try:
        TeamProcess._send = counting  # type: ignore[method-assign]
        use_team_rules(load_team_rules(str(folder)))
        found = [v for v in evaluate_export(items) if v.policy == "acme-broken"]
    finally:
        TeamProcess._send = original  # type: ignore[method-assign]
        forget_team_rules()
    assert [v.message for v in found] == [f"seen c{i}. Fix: none." for i in range(50)]
    assert sent == [50]


# --- 5. Ctrl-C while a team rule runs ---------------------------------------------------------------------------------

def _interrupted_while_a_rule_runs(tmp_path: Path, *argv: str) -> tuple[int, str, str]:
    """``python -m stackplan ARGV --rules DIR`` with a rule that says when it runs and then takes minutes; a real
    SIGINT to the real process once the rule runs."""
    marker = tmp_path / "rule-runs"
    folder = _rules(tmp_path, f"    open({str(marker)!r}, 'w').close()\n    time.sleep(300)\n    return []")
    proc = subprocess.Popen([sys.executable, "-m", "stackplan", *argv, "--rules", str(folder), "--rule-timeout",
                             "600"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)  # the rule would take 300 s: ended by the signal, not by the rule
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


@pytest.mark.parametrize("mode", ["cluster-json", "stack", "terraform"])
def test_ctrl_c_while_a_team_rule_runs_is_exit_130_one_line_nothing_written(tmp_path, mode):
    out = tmp_path / "report.sarif"
    given = {"cluster-json": ["--cluster-json", str(_cluster_json(tmp_path))], "stack": ["--stack", "dev"],
             "terraform": ["--terraform", str(EXAMPLE_TF)]}[mode]
    code, stdout, err = _interrupted_while_a_rule_runs(tmp_path, "check", *given, "--format", "sarif", "--out",
                                                       str(out))
    assert code == 130 and err == "interrupted: nothing was written.\n" and stdout == "", (code, err)
    assert not out.exists() and not list(tmp_path.glob(".report.sarif.*"))
    time.sleep(0.5)
    assert not _live_workers(tmp_path)  # the rules' process ended with the run


def _live_workers(tmp_path: Path) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if "team_worker" in cmdline and str(tmp_path) in cmdline:
                found.append(pid)
    return found


# --- 2. a budget's increase limits against an empty base ---------------------------------------------------------------

@pytest.mark.parametrize("limit", [{"increase_max": 10}, {"increase_max_percent": 5}])
def test_a_new_stack_against_a_directory_of_base_plans_is_judged_as_all_increase(write_stack, capsys, tmp_path,
                                                                                  limit):
    """A first pull request: the directory of base plans (`preview --json` on the base branch) has no plan of the
    new stack. The whole stack is the increase: judged, never skipped."""
    import copy

    from conftest import BASE_CONFIG

    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:budget"] = limit
    stack = write_stack(config, name="fresh")
    bases = tmp_path / "bases"
    bases.mkdir()
    code, out, err = run_cli(capsys, "cost", "--stack", str(stack), "--against", str(bases), "--json")
    assert code == 1, err
    (finding,) = [v for v in json.loads(out)["violations"] if v["policy"] == "databricks-stack-budget"]
    assert "($0.00 -> $" in finding["message"] and "fresh-inference-cluster" in finding["message"]
    assert f"{bases / 'fresh.json'} does not exist: stack fresh is new; its budget's increase limits judge all" in err
    assert json.loads(out)["diff"] is None  # the report still shows a new stack
    # held: a stack with its base plan there is compared with it, and within its limit passes
    config["dbx-ai-infra:budget"] = {"increase_max": 10}
    assert run_cli(capsys, "preview", "--stack", str(stack), "--json", "--out", str(bases / "fresh.json"))[0] in (0, 1)
    assert run_cli(capsys, "cost", "--stack", str(write_stack(config, name="fresh")), "--against", str(bases))[0] == 0


# --- 3. strings where numbers belong --------------------------------------------------------------------------------

STACK_NUMBERS = [
    ("dbx-ai-infra:training", "num_workers"), ("dbx-ai-infra:inference", "min_workers"),
    ("dbx-ai-infra:inference", "max_workers"), ("dbx-ai-infra:workloads.nb", "autotermination_minutes"),
    ("dbx-ai-infra:workloads.extra", "num_workers"), ("dbx-ai-infra:workloads.serve", "min_workers"),
    ("dbx-ai-infra:instance_pools.inference", "max_capacity"), ("dbx-ai-infra:usage", "inference_hours_per_month"),
    ("dbx-ai-infra:serving.endpoints.chat", "active_hours_per_month"),
]


@pytest.mark.parametrize(("section", "field"), STACK_NUMBERS)
@pytest.mark.parametrize("value", ["many", "3", True])
def test_a_string_where_a_number_belongs_in_a_stack_is_refused_in_every_kind(write_stack, capsys, section, field,
                                                                              value):
    """Held (the spec is strict): in every workload kind and in `workloads:`, never priced."""
    import yaml

    doc = yaml.safe_load((REPO / "stacks" / "Pulumi.prod.yaml").read_text())
    config = doc["config"]
    config["dbx-ai-infra:workloads"] = {
        "extra": {"role": "training", "num_workers": 2,
                  "model": {"params_billions": 7, "precision": "bf16", "method": "lora"}},
        "serve": {"role": "inference", "min_workers": 1, "max_workers": 3,
                      "model": {"params_billions": 7, "precision": "fp16"}},
        "nb": {"role": "dev"}}
    key, *inner = section.split(".")
    target = config.setdefault(key, {})
    for part in inner:
        target = target.setdefault(part, {})
    target[field] = value
    code, out, err = run_cli(capsys, "cost", "--stack", str(write_stack(config, name="strings")), "--json")
    assert code == 2 and out == "" and "Traceback" not in err
    for name in ("extra.training", "serve.inference", "nb.dev"):
        err = err.replace(f".{name}.", f".{name.split('.')[0]}.")
    assert f"{section}.{field}" in err
    assert "Fix:" in err


TF_STRINGS = {
    "cluster": ('resource "databricks_cluster" "c" {{\n  cluster_name = "c"\n  spark_version = '
                '"15.4.x-gpu-ml-scala2.12"\n  node_type_id = "g5.xlarge"\n  autotermination_minutes = 30\n'
                '  autoscale {{\n    min_workers = {v}\n    max_workers = 4\n  }}\n}}\n',
                "databricks_cluster.c.autoscale"),
    "job cluster": ('resource "databricks_job" "j" {{\n  name = "j"\n  job_cluster {{\n    job_cluster_key = "k"\n'
                    '    new_cluster {{\n      spark_version = "15.4.x-gpu-ml-scala2.12"\n'
                    '      node_type_id = "g5.xlarge"\n      num_workers = {v}\n    }}\n  }}\n}}\n',
                    "databricks_job.j.job_cluster"),
    "pool": ('resource "databricks_instance_pool" "p" {{\n  instance_pool_name = "p"\n  node_type_id = "g5.xlarge"\n'
             '  min_idle_instances = {v}\n  idle_instance_autotermination_minutes = 10\n}}\n',
             "databricks_instance_pool.p.min_idle_instances"),
}


@pytest.mark.parametrize("kind", list(TF_STRINGS))
def test_a_word_where_terraform_takes_a_number_is_exit_2_and_a_quoted_number_is_the_number(capsys, tmp_path, kind):
    text, where = TF_STRINGS[kind]
    module = tmp_path / "tf"
    module.mkdir()
    (module / "main.tf").write_text(text.format(v='"many"'))
    code, out, err = run_cli(capsys, "cost", "--terraform", str(module), "--json")
    assert code == 2 and out == "" and where in err and "'many', where a number belongs" in err, err
    assert "Fix: write a number" in err
    (module / "main.tf").write_text(text.format(v='"3"'))  # terraform converts a quoted number
    code, quoted, err = run_cli(capsys, "cost", "--terraform", str(module), "--json")
    (module / "main.tf").write_text(text.format(v="3"))
    assert code == 0, err
    assert json.loads(quoted)["cost"]["total"] == json.loads(run_cli(capsys, "cost", "--terraform", str(module),
                                                                   "--json")[1])["cost"]["total"]


def test_a_word_where_the_clusters_api_has_a_number_is_exit_2(capsys, tmp_path):
    export = tmp_path / "c.json"
    export.write_text(json.dumps({"clusters": [{"cluster_name": "gpu", "node_type_id": "g5.xlarge",
                                                "autoscale": {"min_workers": "many", "max_workers": 4},
                                                "spark_version": "15.4.x-gpu-ml-scala2.12"}]}))
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(export), "--json")
    assert code == 2 and out == "" and f"{export}: clusters[0].autoscale.min_workers: is 'many'" in err


# --- 4. two files, one resource ----------------------------------------------------------------------------------------

def _export(folder: Path, name: str, workers: int = 2) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(json.dumps({"clusters": [{
        "cluster_id": "0101-abc", "cluster_name": "gpu", "node_type_id": "g5.xlarge", "num_workers": workers,
        "spark_version": "15.4.x-gpu-ml-scala2.12", "autotermination_minutes": 30,
        "custom_tags": {"workload": "a", "cost_center": "b"}}]}))


def test_one_cluster_in_two_export_files_is_counted_once_with_a_note(capsys, tmp_path):
    """A workspace export split in files (or pages) that lists one cluster (its cluster_id) twice: one cluster."""
    folder = tmp_path / "export"
    _export(folder, "a.json")
    _export(folder, "b.json")
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(folder), "--json")
    assert code == 0 and json.loads(out)["checked"]["clusters"] == 1 and json.loads(out)["checked"]["gpu_clusters"] == 1
    assert "1 object(s) listed twice in the export, read once: cluster_id 0101-abc" in err
    assert str(folder / "a.json") in err and str(folder / "b.json") in err


def test_one_cluster_id_with_two_different_records_is_exit_2_naming_both(capsys, tmp_path):
    folder = tmp_path / "export"
    _export(folder, "a.json")
    _export(folder, "b.json", workers=8)
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(folder), "--json")
    assert code == 2 and out == "" and f"{folder / 'b.json'}: clusters[0]: lists cluster_id 0101-abc again" in err
    assert str(folder / "a.json") in err and "Fix:" in err


def test_a_repeat_inside_one_streamed_file_is_compared_with_the_first_record_wherever_it_is(capsys, tmp_path):
    """The first record's settings are read again only when its id repeats (issue 53, item 5): a repeat in the same
    file, written with other spacing and key order, is the same object; with another value it is exit 2, whichever
    position the first record had."""
    def cluster(cid: str, workers: int) -> dict:
        return {"cluster_id": cid, "cluster_name": cid, "node_type_id": "g5.xlarge", "num_workers": workers,
                "spark_version": "15.4.x-gpu-ml-scala2.12", "autotermination_minutes": 30,
                "custom_tags": {"workload": "a", "cost_center": "b"}}
    first = [cluster("0101-a", 2), cluster("0101-b", 3), cluster("0101-c", 4)]
    again = dict(reversed(list(cluster("0101-b", 3).items())))
    export = tmp_path / "clusters.json"
    export.write_text(json.dumps({"clusters": first}) + "\n" + json.dumps({"clusters": [again]}, indent=3))
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(export), "--json")
    assert code == 0 and json.loads(out)["checked"]["clusters"] == 3
    assert "1 object(s) listed twice in the export, read once: cluster_id 0101-b" in err
    # the streamed reading itself (a refusal there would fall back to reading the file whole, which agrees)
    from dbx_ai_infra.sources.audit import _Once
    from dbx_ai_infra.sources.exports import stream_export_file

    stream = stream_export_file(export)
    once = _Once([stream])
    assert [once.new(item, (0, i)) for i, item in enumerate(stream)] == [True, True, True, False]
    export.write_text(json.dumps({"clusters": first}) + "\n" + json.dumps({"clusters": [cluster("0101-b", 9)]}))
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(export), "--json")
    assert code == 2 and out == "" and "lists cluster_id 0101-b again, with other settings than" in err


def test_one_resource_declared_in_two_tf_files_is_refused_as_terraform_does(capsys, tmp_path):
    """Held (Terraform refuses "Duplicate resource ... configuration"): never counted twice in a total."""
    module = tmp_path / "tf"
    module.mkdir()
    text = TF_STRINGS["cluster"][0].format(v="2")
    (module / "a.tf").write_text(text)
    (module / "b.tf").write_text(text)
    code, out, err = run_cli(capsys, "cost", "--terraform", str(module), "--json")
    assert code == 2 and out == "" and "declared twice" in err


# --- 6. sample-usage interrupted part-way ----------------------------------------------------------------------------

def test_sample_usage_interrupted_once_files_are_being_written_leaves_nothing(tmp_path):
    """A real SIGINT to the real process once its first export file exists (where it writes): nothing left behind,
    as the one line says."""
    parent = tmp_path / "out"
    parent.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "stackplan", "sample-usage", "--stack", "prod", "--out",
                             str(parent / "exports"), "--days", "30"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline and \
                not any(p.is_file() for p in parent.rglob("*")):
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it wrote a file"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130 and err == "interrupted: nothing was written.\n" and out == "", err
    assert list(parent.rglob("*")) == []


def test_sample_usage_writes_its_directory_in_one_move_and_leaves_nothing_beside_it(capsys, tmp_path):
    out = tmp_path / "exports"
    code, _, _ = run_cli(capsys, "sample-usage", "--stack", "dev", "--out", str(out), "--days", "1")
    assert code == 0 and (out / "clusters.csv").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["exports"]  # no staging directory left beside it
    (out / "notes.txt").write_text("mine")  # held: an existing directory is refused, nothing in it touched
    code, _, err = run_cli(capsys, "sample-usage", "--stack", "dev", "--out", str(out), "--days", "1")
    assert code == 2 and "--out" in err and (out / "notes.txt").read_text() == "mine"


# --- 7. a report inside the directory read ---------------------------------------------------------------------------

@pytest.mark.parametrize(("out", "refused"), [("x.sarif", False), ("report.json", False), ("x.tf", True),
                                              ("x.tf.json", True), ("more.auto.tfvars", True)])
def test_a_report_in_the_terraform_directory_is_refused_only_where_terraform_reads(capsys, tmp_path, monkeypatch,
                                                                                  out, refused):
    module = tmp_path / "tf"
    module.mkdir()
    (module / "main.tf").write_text(TF_STRINGS["cluster"][0].format(v="2"))
    monkeypatch.chdir(module)
    code, _, err = run_cli(capsys, "check", "--terraform", ".", "--format", "sarif", "--out", out)
    if refused:
        assert code == 2 and "a directory this run reads" in err and not (module / out).exists()
    else:
        assert code in (0, 1) and json.loads((module / out).read_text())["runs"], err


def test_a_report_in_an_export_directory_is_refused_only_as_json(capsys, tmp_path):
    folder = tmp_path / "export"
    _export(folder, "a.json")
    assert run_cli(capsys, "check", "--cluster-json", str(folder), "--out", str(folder / "report.json"))[0] == 2
    assert run_cli(capsys, "check", "--cluster-json", str(folder), "--format", "sarif", "--out",
                str(folder / "report.sarif"))[0] == 0


# --- 8. cost --terraform names what it priced, and the table says what the figures are -------------------------------

def test_cost_terraform_names_the_module_and_the_base_as_given(capsys, tmp_path, monkeypatch):
    module = tmp_path / "tf"
    module.mkdir()
    (module / "main.tf").write_text(TF_STRINGS["cluster"][0].format(v="2"))
    (tmp_path / "base-checkout").mkdir()
    monkeypatch.chdir(module)
    code, out, _ = run_cli(capsys, "cost", "--terraform", ".")
    assert code == 0 and out.startswith("Terraform module . (aws) - 1 resources") and "Stack  (" not in out
    code, out, _ = run_cli(capsys, "cost", "--terraform", ".", "--against", "../base-checkout")
    assert "Cost change: base-checkout -> ." in out and "None" not in out
    code, out, _ = run_cli(capsys, "cost", "--terraform", ".", "--json")
    assert json.loads(out)["stack"] == "."


@pytest.mark.parametrize("region", ["ca-west-1", "eu-wst-1"])
def test_the_table_says_which_region_the_figures_are_of(capsys, tmp_path, region):
    """Issue 53: a known region without a VM price leaves the node unpriced, named (never us-east-1's price); a
    region typo is exit 2 naming the nearest regions."""
    module = tmp_path / "tf"
    module.mkdir()
    (module / "main.tf").write_text(TF_STRINGS["cluster"][0].format(v="2").replace(
        "  autoscale", '  custom_tags = { workload_type = "inference" }\n  autoscale'))
    code, out, err = run_cli(capsys, "cost", "--terraform", str(module), "--region", region)
    if region == "eu-wst-1":
        assert code == 2 and "eu-west-1" in err, err
        return
    assert "Prices: AWS ca-west-1 prices" in out.replace("\n", " "), out
    doc = json.loads(run_cli(capsys, "cost", "--terraform", str(module), "--region", region, "--json")[1])
    unpriced = [e for e in doc["cost"]["resources"].values() if e.get("unpriced")]
    assert unpriced and all("ca-west-1" in e["unpriced"] for e in unpriced)


# --- 9. a serving-only input -------------------------------------------------------------------------------------------

SERVING_ONLY = '''resource "databricks_model_serving" "chat" {{
  name = "chat"
  config {{
    served_entities {{
      entity_name           = "ai.models.chat"
      entity_version        = "3"
      workload_type         = "{workload}"
      workload_size         = "Small"
      scale_to_zero_enabled = false
    }}
  }}
}}
'''


@pytest.mark.parametrize(("workload", "region", "cloud"), [("MULTIGPU_MEDIUM", None, "aws"),
                                                           ("GPU_MEDIUM", "us-east-1", "aws"),
                                                           ("GPU_MEDIUM", "europe-west1", "gcp")])
def test_a_module_that_only_serves_is_priced_on_the_cloud_its_endpoints_say(capsys, tmp_path, workload, region,
                                                                            cloud):
    module = tmp_path / "serving"
    module.mkdir()
    (module / "main.tf").write_text(SERVING_ONLY.format(workload=workload))
    code, out, err = run_cli(capsys, "cost", "--terraform", str(module), "--json", *(["--region", region] if region
                                                                                  else []))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["cost"]["cloud"] == cloud and doc["cost"]["total"]["complete"] is True
    assert doc["cost"]["total"]["monthly"]["expected"] > 0


def test_a_serving_only_module_whose_cloud_cannot_be_known_says_what_it_priced(capsys, tmp_path):
    """GPU_MEDIUM is an A10G on AWS and an L4 on GCP: without --region the cost says which cloud it priced."""
    module = tmp_path / "serving"
    module.mkdir()
    (module / "main.tf").write_text(SERVING_ONLY.format(workload="GPU_MEDIUM"))
    code, out, err = run_cli(capsys, "cost", "--terraform", str(module), "--json")
    assert code == 0 and "names node types of no cloud" not in err
    assert any("AWS" in n for n in json.loads(out)["cost"]["notes"] if "cloud" in n)


# --- 10. a Parquet file damaged in its middle ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def parquet_exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A day of prod's telemetry in Parquet, as `sample-usage --file-format parquet` writes it."""
    from dbx_ai_infra.advise.telemetry import write_exports
    from dbx_ai_infra.engine.pipeline import build_plan

    root = tmp_path_factory.mktemp("parquet") / "clean"
    write_exports(root, build_plan("prod", with_policies=False, with_cost=True), days=1, fmt="parquet")
    return root


@pytest.mark.parametrize("name", ["gpu_timeline", "requests"])
@pytest.mark.parametrize("where", [0.3, 0.5, 0.7])
def test_a_parquet_file_with_bytes_cut_from_its_middle_is_exit_2_naming_it(capsys, parquet_exports, tmp_path, where,
                                                                           name):
    """The earlier test wrote garbage between two PAR1 marks: its footer could not be read, which the reader's first
    look catches. A file cut in its middle keeps a readable footer and fails only when a query scans its data,
    as a plain DuckDB error ("don't know what type", a Thrift "Invalid data"). requests is first read through a view
    of the analysis (stack_requests) that the failing statements name instead of it: an internal error, exit 3,
    before the inputs a statement reads were found through its views."""
    import shutil

    usage = tmp_path / "usage"
    shutil.copytree(parquet_exports, usage)
    guilty = usage / f"{name}.parquet"
    data = guilty.read_bytes()
    at = int(len(data) * where)
    guilty.write_bytes(data[:at] + data[at + 100:])
    code, out, err = run_cli(capsys, "advise", "--stack", "prod", "--usage", str(usage), "--json")
    assert code == 2 and out == "" and f"{guilty}: cannot be read: the file is damaged" in err, err
    assert "unexpected" not in err and "Traceback" not in err and f"Fix: export {name} again" in err


# --- 12. binary garbage at the end of a CSV file ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def csv_exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from dbx_ai_infra.advise.telemetry import write_exports
    from dbx_ai_infra.engine.pipeline import build_plan

    root = tmp_path_factory.mktemp("csv") / "clean"
    # 3 days: more request rows than the CSV reader's first look samples (20,480), so the garbage below comes after
    # it (prod's inference cluster runs 210 hours a month since issue 52, a day's rows alone no longer do)
    write_exports(root, build_plan("prod", with_policies=False, with_cost=True), days=3)
    return root


@pytest.mark.parametrize("garbage", ["every byte", "random bytes"])
def test_binary_garbage_after_good_rows_is_named_by_file_and_line_in_our_words(capsys, csv_exports, tmp_path,
                                                                                garbage):
    """The earlier test replaced the whole file with garbage, which the reader's first look (its sniffing) refuses.
    Garbage after good rows passes that look and fails when the query scans that far, with the CSV reader's own
    advice ("Possible fixes: ... strict mode")."""
    import random
    import shutil

    usage = tmp_path / "usage"
    shutil.copytree(csv_exports, usage)
    rows = len((usage / "requests.csv").read_bytes().splitlines())
    tail = bytes(range(256)) * 4 if garbage == "every byte" else bytes(random.Random(1).randrange(256)
                                                                       for _ in range(3000))
    with (usage / "requests.csv").open("ab") as handle:
        handle.write(tail)
    code, out, err = run_cli(capsys, "advise", "--stack", "prod", "--usage", str(usage), "--json")
    assert code == 2 and out == "" and f"{usage / 'requests.csv'}: line {rows + 1}" in err, err
    for engine_words in ("Possible fixes", "strict_mode", "state machine", "RFC 4180", "Original Line", "Traceback"):
        assert engine_words not in err


# --- 13. a usage key of another role -------------------------------------------------------------------------------

def _usage_stack(write_stack, usage: dict) -> Path:
    import yaml

    doc = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    doc["config"]["dbx-ai-infra:workloads"] = {"nb": {"role": "dev"}}
    doc["config"]["dbx-ai-infra:usage"] = usage
    return write_stack(doc["config"], name="usage13")


def test_a_serving_usage_key_under_a_workload_says_whose_it_is(write_stack, capsys):
    """The issue's case: the key, under a dev workload (`workloads:`), was "not a known key ... did you mean" itself,
    listed as allowed: the list was the stack's usage keys, not the workload's."""
    code, _, err = run_cli(capsys, "cost", "--stack", str(_usage_stack(
        write_stack, {"nb": {"serving_active_hours_per_month": 10}})))
    assert code == 2 and "usage.nb.serving_active_hours_per_month" in err
    assert "belongs to Model Serving endpoints, not to a workload" in err
    assert "dbx-ai-infra:usage.serving_active_hours_per_month" in err and "did you mean" not in err


def test_a_usage_key_of_another_role_names_the_role(write_stack, capsys):
    code, _, err = run_cli(capsys, "cost", "--stack", str(_usage_stack(write_stack,
                                                                     {"dev": {"training_hours_per_month": 10}})))
    assert code == 2 and "usage.dev.training_hours_per_month does not apply to dev" in err
    assert "it is a training workload's" in err and "Fix: remove it, or move it under a training workload's" in err


def test_a_misspelt_workload_usage_key_lists_the_workloads_keys(write_stack, capsys):
    code, _, err = run_cli(capsys, "cost", "--stack", str(_usage_stack(write_stack,
                                                                     {"nb": {"dev_hours_per_workday": 4}})))
    assert code == 2 and "did you mean 'dev_hours_per_working_day'" in err
    allowed = err.split("allowed keys here: ", 1)[1]
    assert "serving_active_hours_per_month" not in allowed and "working_days_per_month" not in allowed


def test_sample_usage_of_a_stack_with_no_cluster_writes_empty_cluster_tables_not_a_crash(capsys, tmp_path):
    """The shipped serverless stack (a serverless GPU job, a provisioned-throughput endpoint) has no cluster to
    simulate: sample-usage wrote `VALUES ()`, a DuckDB syntax error, and exited 3. Its cluster tables are now empty
    (headers, no rows), as is an --only that names no cluster."""
    out = tmp_path / "usage"
    code, stdout, err = run_cli(capsys, "sample-usage", "--stack", "serverless", "--out", str(out), "--days", "1")
    assert code == 0 and "internal error" not in err, err
    assert json.loads(stdout[: stdout.rindex("}") + 1])["runs"] == 0
    nodes = (out / "node_timeline.csv").read_text().splitlines()
    assert len(nodes) == 1 and "cluster_id" in nodes[0]  # the header, no row
    code, _, err = run_cli(capsys, "sample-usage", "--stack", "dev", "--out", str(tmp_path / "none"), "--days", "1",
                           "--only", "no-such-workload")
    assert code == 0 and "internal error" not in err, err
