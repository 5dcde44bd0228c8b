"""`cost` and the priced preview: diffs against a stack or a saved plan, price overrides, report formats,
and the pull-request workflow that runs them."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml
from conftest import BASE_CONFIG, run_cli

from dbx_ai_infra.cli.cli import parser

REPO = Path(__file__).resolve().parent.parent


def cost_json(capsys, *argv):
    code, out, err = run_cli(capsys, "cost", *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_preview_json_carries_costs(capsys):
    code, out, _ = run_cli(capsys, "preview", "--stack", "prod", "--json")
    cost = json.loads(out)["cost"]
    assert code == 0 and cost["currency"] == "USD"
    total = cost["total"]["monthly"]
    assert 0 < total["min"] <= total["expected"] <= total["max"]
    clusters = [r for r in cost["resources"].values() if r["type"].endswith("cluster:Cluster")]
    assert {c["name"] for c in clusters} == {"prod-inference-cluster"}  # training runs on its job's compute
    jobs = [r for r in cost["resources"].values() if r["type"].endswith("job:Job")]
    assert [j["name"] for j in jobs] == ["prod-training-job"] and jobs[0]["monthly"]["expected"] > 0
    assert cost["sources"] and cost["unpriced"] == []


def test_a_stack_against_itself_changes_nothing(capsys):
    doc = cost_json(capsys, "--stack", "prod", "--against", "prod")
    assert doc["diff"]["total"]["delta"]["monthly_expected"] == 0
    assert {r["status"] for r in doc["diff"]["rows"]} == {"unchanged"}


def test_another_stack_is_paired_by_name_without_the_stack_prefix(capsys):
    diff = cost_json(capsys, "--stack", "prod", "--against", "dev")["diff"]
    assert diff["matched_by"] == "name"
    status = {r["name"]: r["status"] for r in diff["rows"]}
    # dev-inference-cluster and prod-inference-cluster are the same workload: one changed row, not added + removed
    assert status["prod-inference-cluster"] == "changed" and "dev-inference-cluster" not in status
    assert status["dev-dev-cluster"] == "removed"  # prod has no dev cluster
    assert status["prod-training-job"] == "added" and "prod-training-cluster" not in status  # a job alone
    # the endpoints have names of their own (chat, chat-dev), so they do not pair: the ModelServing resource, its
    # component and its permissions come and go
    assert status["prod-serving-chat"] == "added" and status["dev-serving-chat-dev"] == "removed"
    assert diff["counts"] == {"added": 3, "removed": 2, "changed": 1, "unchanged": 0}
    (row,) = [r for r in diff["rows"] if r["name"] == "prod-inference-cluster"]
    assert row["base"]["monthly_expected"] > 0 and row["head"]["monthly_expected"] > 0
    assert "nodes" in row["changes"] and row["delta"]["monthly_expected"] == pytest.approx(
        row["head"]["monthly_expected"] - row["base"]["monthly_expected"])


def test_match_key_strips_only_the_own_stack_prefix():
    from dbx_ai_infra.pricing.diff import match_key

    urn = "urn:pulumi:prod::dbx-ai-infra::dbx-ai-infra:compute:InferenceCluster$databricks:index/cluster:Cluster::"
    assert match_key(urn + "prod-inference-cluster", "prod-inference-cluster", "prod") == \
        match_key(urn.replace(":prod::", ":dev::") + "dev-inference-cluster", "dev-inference-cluster", "dev")
    assert match_key(urn + "prod-x", "prod-x", "dev") != match_key(urn + "dev-x", "dev-x", "dev")


def test_against_a_saved_plan_equals_against_the_stack(capsys, tmp_path):
    saved = tmp_path / "base.json"
    assert run_cli(capsys, "preview", "--stack", "dev", "--json", "--out", str(saved))[0] == 0
    by_file = cost_json(capsys, "--stack", "prod", "--against", str(saved))["diff"]
    by_name = cost_json(capsys, "--stack", "prod", "--against", "dev")["diff"]
    assert by_file == by_name
    # a saved plan without costs is priced on the spot
    plan = json.loads(saved.read_text())
    del plan["cost"]
    saved.write_text(json.dumps(plan))
    assert cost_json(capsys, "--stack", "prod", "--against", str(saved))["diff"] == by_name


def test_adding_a_worker_adds_one_node(write_stack, capsys):
    def training_month(workers):
        config = {**BASE_CONFIG, "dbx-ai-infra:training": {"num_workers": workers, "spot": False,
                                                           "model": {"params_billions": 1}}}
        doc = cost_json(capsys, "--stack", str(write_stack(config, name=f"w{workers}")))
        (entry,) = [r for r in doc["cost"]["resources"].values() if r["name"] == f"w{workers}-training-cluster"]
        return entry
    two, three = training_month(2), training_month(3)
    assert three["hourly"] - two["hourly"] == pytest.approx(two["hourly"] / 3)  # 3 nodes -> 4 nodes, all on-demand


def test_price_overrides_from_a_file_and_from_the_stack(write_stack, tmp_path, capsys):
    base = cost_json(capsys, "--stack", "dev")["cost"]["total"]["monthly"]["expected"]
    cheap = tmp_path / "prices.yaml"
    cheap.write_text("usd_per_dbu:\n  aws:\n    all_purpose: 0.0\n")
    by_file = cost_json(capsys, "--stack", "dev", "--prices", str(cheap))["cost"]["total"]["monthly"]["expected"]
    config = {**yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())["config"],
              "dbx-ai-infra:pricing": {"usd_per_dbu": {"aws": {"all_purpose": 0.0}}}}
    by_stack = cost_json(capsys, "--stack", str(write_stack(config, name="dev")))["cost"]["total"]["monthly"]["expected"]
    assert by_file == pytest.approx(by_stack) and by_file < base
    # the command line wins over the stack
    dearer = tmp_path / "dearer.yaml"
    dearer.write_text("usd_per_dbu:\n  aws:\n    all_purpose: 0.55\n")
    both = cost_json(capsys, "--stack", str(write_stack(config, name="dev")), "--prices", str(dearer))
    assert both["cost"]["total"]["monthly"]["expected"] == pytest.approx(base)


@pytest.mark.parametrize("argv, message", [
    (["--prices", "missing.yaml"], "missing.yaml"),
    (["--against", "missing.json"], "plan file not found"),
])
def test_bad_cost_inputs_exit_2(argv, message, capsys):
    code, out, err = run_cli(capsys, "cost", "--stack", "dev", *argv)
    assert code == 2 and message in err and out == ""


def test_bad_price_file_and_bad_plan_file(tmp_path, capsys):
    bad = tmp_path / "p.yaml"
    bad.write_text("spot_factors: {aws: 0.3}\n")
    code, _, err = run_cli(capsys, "cost", "--stack", "dev", "--prices", str(bad))
    assert code == 2 and "spot_factors" in err and "Fix:" in err
    plan = tmp_path / "plan.json"
    plan.write_text('{"stack": "x"}')
    code, _, err = run_cli(capsys, "cost", "--stack", "dev", "--against", str(plan))
    assert code == 2 and "resources: Field required" in err


def test_markdown_and_html_reports(capsys, tmp_path):
    code, md, _ = run_cli(capsys, "cost", "--stack", "prod", "--against", "dev", "--format", "markdown")
    assert code == 0
    assert "## Cost review: stack prod" in md and "| prod-training-job |" in md and "vs base dev" in md
    out = tmp_path / "report.html"
    assert run_cli(capsys, "cost", "--stack", "prod", "--format", "html", "--out", str(out))[0] == 0
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "prod-inference-cluster" in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")


def test_the_pull_request_workflow_is_valid_and_uses_real_commands():
    doc = yaml.safe_load((REPO / ".github" / "workflows" / "preview.yml").read_text())
    triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in triggers
    steps = doc["jobs"]["offline"]["steps"]
    scripts = "\n".join(s.get("run", "") for s in steps).replace('"${against[@]}"', '--against "$base"')
    scripts = scripts.replace("\\\n", " ")  # continued lines are one command
    calls = re.findall(r"python -m stackplan ([^\n|;&>]+)", scripts)
    assert {c.split()[0] for c in calls} >= {"check", "cost", "preview"}
    for call in calls:
        argv = [a if not a.startswith(("$", '"$')) else "placeholder" for a in shlex.split(call.replace("||", ""))]
        argv = [a for a in argv if a != "true" and not a.isdigit()]  # `2>` redirections leave their digit
        parser().parse_args(argv)  # every flag the workflow uses exists
    assert any("--against" in c for c in calls) and any("--format markdown" in c for c in calls)
    assert any(s.get("uses", "").startswith("actions/github-script") for s in steps)
    pulumi_job = doc["jobs"]["pulumi"]
    pulumi = [s for s in pulumi_job["steps"] if s.get("uses", "").startswith("pulumi/actions@")]
    assert pulumi and pulumi[0]["with"]["command"] == "preview" and pulumi[0]["with"]["policyPacks"] == "policies"
    # without credentials the job is skipped as a whole (visibly), not green with every step skipped
    assert pulumi_job["if"] == "needs.credentials.outputs.configured == 'true'"
    assert "fromJSON(needs.offline.outputs.stacks)" in str(pulumi_job["strategy"]["matrix"]["stack"])


def test_the_pull_request_workflow_is_hardened():
    text = (REPO / ".github" / "workflows" / "preview.yml").read_text()
    doc = yaml.safe_load(text)
    paths = doc.get("on", doc.get(True))["pull_request"]["paths"]
    for needed in ("stackplan/**", "Makefile", "Pulumi.yaml", "dbx_ai_infra/**", ".github/workflows/preview.yml"):
        assert needed in paths
    assert doc["permissions"] == {"contents": "read"}  # write access only in the jobs that comment
    for name, job in doc["jobs"].items():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), f"{name}: an expression spliced into a shell script"
            if step.get("uses", "").startswith("actions/checkout"):
                assert step["with"]["persist-credentials"] is False
    comment = next(s for s in doc["jobs"]["offline"]["steps"] if s.get("name") == "Comment on the pull request")
    assert "head.repo.full_name == github.repository" in comment["if"] and "hashFiles('report.md')" in comment["if"]
    assert "if (!text.trim())" in comment["with"]["script"]  # an empty report never replaces the last comment


def test_the_pull_request_workflow_pins_actions_uploads_sarif_and_comments_the_combined_report():
    doc = yaml.safe_load((REPO / ".github" / "workflows" / "preview.yml").read_text())
    for job in doc["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:  # a tag can move; a commit SHA cannot
                assert re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
    steps = doc["jobs"]["offline"]["steps"]
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "stackplan.sarif"
    assert "head.repo.full_name == github.repository" in upload["if"]  # forks get a read-only token
    assert doc["jobs"]["offline"]["permissions"]["security-events"] == "write"
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "check --all --format sarif --soft-fail --out stackplan.sarif" in runs
    assert "cost --all --against \"$RUNNER_TEMP/plans\" --format markdown" in runs.replace("\\\n", "")


def _zizmor(*paths: Path) -> list[dict]:
    import subprocess
    import sys

    zizmor = Path(sys.executable).parent / "zizmor"
    done = subprocess.run([str(zizmor), "--offline", "--format", "json", *map(str, paths)], capture_output=True,
                          text=True, check=False)
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)


def test_zizmor_finds_nothing_in_the_workflows_and_would_catch_an_unpinned_action(tmp_path):
    assert _zizmor(REPO / ".github" / "workflows") == []
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("on: pull_request\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - uses: actions/checkout@v4\n        with:\n          persist-credentials: false\n")
    assert {f["ident"] for f in _zizmor(bad)} >= {"unpinned-uses"}


def test_a_price_override_typo_reads_the_same_from_the_stack_and_from_prices(write_stack, tmp_path, capsys):
    config = dict(BASE_CONFIG)
    config["dbx-ai-infra:pricing"] = {"node_types": {"g5.xlarge": {"usd_per_hour": 1.0}}}
    code, _, from_stack = run_cli(capsys, "cost", "--stack", str(write_stack(config)))
    prices = tmp_path / "prices.yaml"
    prices.write_text("node_types:\n  g5.xlarge:\n    usd_per_hour: 1.0\n")
    code2, _, from_file = run_cli(capsys, "cost", "--stack", "dev", "--prices", str(prices))
    assert code == code2 == 2
    problem = "node_types['g5.xlarge'].usd_per_hour: is not a known key. Fix: remove it or correct its spelling"
    assert f"dbx-ai-infra:pricing.{problem}" in from_stack and f"{prices}: {problem}" in from_file
    assert from_stack.split("pricing.", 1)[1] == from_file.split(f"{prices}: ", 1)[1]


def test_every_shipped_stack_shows_its_sizing_in_the_preview_json_and_reports(capsys):
    from markupsafe import escape as html_escape

    from dbx_ai_infra.dbxtypes.stack_files import available_stacks
    from dbx_ai_infra.stackspec import load_stack

    for stack in available_stacks():
        resolved = load_stack(stack).resolved
        workloads = resolved.workloads
        code, table, _ = run_cli(capsys, "preview", "--stack", stack)
        assert code == 0 and "Sizing (GPU memory need -> node):" in table
        plan = json.loads(run_cli(capsys, "preview", "--stack", stack, "--json")[1])
        assert [z["workload"] for z in plan["sizing"]] == [*workloads, *(f"serving {e}" for e in resolved.endpoints),
                                                           *resolved.serverless]  # issue 55: the accelerator's line
        for z in plan["sizing"]:
            if z["workload"] in resolved.serverless:  # no node: the accelerator in its place
                s = resolved.serverless[z["workload"]]
                assert z["node_type_id"] == s.accelerator.name and z["need_gb"] == s.need_gb
                continue
            if z["workload"].startswith("serving "):
                e = resolved.endpoints[z["workload"].removeprefix("serving ")]
                assert z["node_type_id"] == e.serving_type.workload_type and z["need_gb"] == e.need_gb
                continue
            w = workloads[z["workload"]]
            assert z["node_type_id"] == w.node.node_type_id and z["need_gb"] == w.need_gb
            shown = z["workload"] if z["section"] == z["workload"] else f"{z['workload']} ({z['section']})"
            assert f"{shown}: {z['formula'] or z['rule']}" in table
            assert (z["formula"] or "").endswith(f"= {w.need_gb:g} GB") if w.need_gb else z["formula"] is None
        md = run_cli(capsys, "cost", "--stack", stack, "--format", "markdown")[1]
        html = run_cli(capsys, "cost", "--stack", stack, "--format", "html")[1]
        for z in plan["sizing"]:
            how = z["formula"] or z["rule"]
            assert how in md and str(html_escape(how)) in html and z["node_type_id"] in md


def test_a_cost_diff_says_why_a_node_changed(write_stack, capsys, tmp_path):
    import copy

    full = copy.deepcopy(BASE_CONFIG)
    full["dbx-ai-infra:training"] = {"num_workers": 1, "model": {"params_billions": 7, "precision": "fp16",
                                                                 "method": "full"}}
    full["dbx-ai-infra:gpu_family"] = "a100"
    full["dbx-ai-infra:inference"] = {**full["dbx-ai-infra:inference"], "gpu_family": "a10g"}
    full["dbx-ai-infra:dev"] = {**full["dbx-ai-infra:dev"], "gpu_family": "a10g"}
    lora = copy.deepcopy(full)
    lora["dbx-ai-infra:training"] = {"num_workers": 1, "gpu_family": "a10g",
                                     "model": {"params_billions": 7, "precision": "fp16", "method": "lora"}}
    base = tmp_path / "base"
    base.mkdir()
    base_file = write_stack(full, name="team")
    base_path = base / base_file.name
    base_file.rename(base_path)
    doc = cost_json(capsys, "--stack", str(write_stack(lora, name="team")), "--against", str(base_path))
    (change,) = doc["diff"]["sizing"]
    assert change["workload"] == "training"
    assert "7B x 16 B = 112 GB -> p4d.24xlarge" in change["base"]
    assert "7B x 2 B x 4 / 3 = 18.67 GB -> g5.xlarge" in change["head"]
    table = run_cli(capsys, "cost", "--stack", str(write_stack(lora, name="team")), "--against", str(base_path))[1]
    assert "Sizing of training: training: 7B x 16 B = 112 GB" in table and "18.67 GB -> g5.xlarge" in table


# --- inference clusters that stay up (scale down, not shut down) -----------------------------------------------

def _inference_stack(write_stack, **inference):
    import copy

    config = copy.deepcopy(BASE_CONFIG)
    config.pop("dbx-ai-infra:training")
    config.pop("dbx-ai-infra:dev")
    config["dbx-ai-infra:inference"] = {**config["dbx-ai-infra:inference"], **inference}
    config["dbx-ai-infra:usage"] = {"inference_hours_per_month": 200}
    return write_stack(config, name="serve")


def _inference_entry(doc):
    (entry,) = [e for e in doc["cost"]["resources"].values()
                if e["workload_type"] == "inference" and e["type"].endswith("cluster:Cluster")]
    return entry


def test_an_always_on_inference_base_is_priced_for_the_month_and_the_default_stops_when_idle(write_stack, capsys):
    """Issue 52: the default was 0 (never), and a cluster nobody used cost the whole month; now it stops after an idle
    hour, and one that stays up says why (always_on)."""
    doc = cost_json(capsys, "--stack", str(_inference_stack(write_stack, always_on=True,
                                                            always_on_reason="a scoring stream runs day and night")))
    entry = _inference_entry(doc)
    assert entry["hours_per_month"] == 730 and entry["hours_basis"].startswith("always on")
    # the default: going cold after an idle hour, priced at the usage assumption (200 h)
    cold = _inference_entry(cost_json(capsys, "--stack", str(_inference_stack(write_stack))))
    assert cold["hours_per_month"] == 200 and cold["hours_basis"] == "usage assumption inference_hours_per_month"
    assert cold["monthly"]["min"] == pytest.approx(entry["monthly"]["min"] * 200 / 730)
    assert doc["violations"] == []  # "never" is allowed for inference


@pytest.mark.parametrize("minutes,seconds", [(10, "600"), (5, "300"), (1, "60")])
def test_scale_down_minutes_become_the_aggressive_window(write_stack, capsys, minutes, seconds):
    code, out, _ = run_cli(capsys, "preview", "--stack", str(_inference_stack(write_stack, scale_down_minutes=minutes)),
                       "--json")
    (c,) = [r["inputs"] for r in json.loads(out)["resources"] if r["type"].endswith("cluster:Cluster")]
    assert code == 0 and c["sparkConf"]["spark.databricks.aggressiveWindowDownS"] == seconds


@pytest.mark.parametrize("inference,field,words", [
    ({"scale_down_minutes": 11}, "inference", "at most 600 seconds"),
    ({"autotermination_minutes": 5}, "inference", "0 (never) or at least 10"),
    ({"autotermination_minutes": 200}, "inference.autotermination_minutes", "at most 120"),
])
def test_bad_idle_settings_exit_2_naming_the_field(write_stack, capsys, inference, field, words):
    code, _, err = run_cli(capsys, "preview", "--stack", str(_inference_stack(write_stack, **inference)))
    assert code == 2 and f"dbx-ai-infra:{field}" in err and words in err and "Fix:" in err


def test_training_and_dev_still_refuse_never(write_stack, capsys):
    import copy

    for section in ("training", "dev"):
        config = copy.deepcopy(BASE_CONFIG)
        config[f"dbx-ai-infra:{section}"] = {**config[f"dbx-ai-infra:{section}"], "autotermination_minutes": 0}
        code, _, err = run_cli(capsys, "check", "--stack", str(write_stack(config, name=section)))
        assert code == 2 and f"dbx-ai-infra:{section}.autotermination_minutes" in err


def test_the_generated_inference_policy_admits_never_and_the_training_policy_does_not():
    from dbx_ai_infra.dbxtypes.shape import cluster_shape
    from dbx_ai_infra.engine.pipeline import build_plan
    from dbx_ai_infra.guardrails import evaluate_shape

    plan = build_plan("prod", with_policies=False)
    definitions = {r.id: json.loads(r.inputs["definition"]) for r in plan.resources if r.type.endswith("ClusterPolicy")}
    by_name = {r.name: r for r in plan.resources}
    serving = dict(by_name["prod-inference-cluster"].inputs, autoterminationMinutes=0)  # as an always_on one is
    assert evaluate_shape(definitions[serving["policyId"]], cluster_shape(serving)).allowed
    # the training job's cluster, as an all-purpose cluster under the same policy would be with auto-termination 0
    (job_cluster,) = by_name["prod-training-job"].inputs["jobClusters"]
    training = dict(job_cluster["newCluster"], autoterminationMinutes=0)
    result = evaluate_shape(definitions[training["policyId"]], cluster_shape(training))
    assert not result.allowed and {v.path for v in result.violations} == {"autotermination_minutes"}


def test_shipped_stacks_say_which_inference_clusters_stay_up(capsys):
    """Issue 52: prod's inference cluster ran the whole month ($4,688.61) though no job or endpoint used it; it now
    stops after an idle hour and is priced for its batch hours. estate's chat cluster stays up, and says why."""
    prod = _inference_entry(cost_json(capsys, "--stack", "prod"))
    dev = _inference_entry(cost_json(capsys, "--stack", "dev"))
    assert prod["hours_basis"] == "usage assumption inference_hours_per_month" and prod["hours_per_month"] == 210
    assert dev["hours_basis"] == "usage assumption inference_hours_per_month" and dev["hours_per_month"] == 200
    estate = cost_json(capsys, "--stack", "estate")
    chat = next(e for e in estate["cost"]["resources"].values() if e["name"] == "estate-chat-cluster")
    assert chat["hours_basis"].startswith("always on") and chat["hours_per_month"] == 730


def test_a_multi_gpu_node_gets_the_cheaper_single_gpu_named_with_the_monthly_difference(write_stack, capsys):
    import copy

    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:gpu_family"] = "t4"
    for section in ("training", "dev"):
        config.pop(f"dbx-ai-infra:{section}")
    doc = json.loads(run_cli(capsys, "preview", "--stack", str(write_stack(config, name="t4")), "--json")[1])
    (advice,) = [a for a in doc["advice"] if a["id"] == "cheaper-single-gpu"]
    assert advice["resource_name"] == "t4-inference-cluster"
    assert "g4dn.12xlarge is 4 x NVIDIA T4" in advice["message"] and "gpu_family" in advice["message"]
    # the difference is the cost model's: the same cluster re-priced on the named node
    named = re.search(r"\((\S+), 24 GB, family (\S+)\)", advice["message"])
    assert named is not None
    current = _inference_entry(doc)["monthly"]["expected"]
    config["dbx-ai-infra:inference"] = {**config["dbx-ai-infra:inference"], "gpu_family": named.group(2),
                                       "node_type_id": named.group(1)}
    cheaper = _inference_entry(json.loads(run_cli(capsys, "preview", "--stack", str(write_stack(config, name="t4")),
                                              "--json")[1]))
    assert advice["monthly_cost_delta"] == pytest.approx(cheaper["monthly"]["expected"] - current) and \
        advice["monthly_cost_delta"] < 0
    md = run_cli(capsys, "cost", "--stack", str(write_stack(config | {"dbx-ai-infra:inference": BASE_CONFIG[
        "dbx-ai-infra:inference"]}, name="t4")), "--format", "markdown")[1]
    assert "### Advice" in md and "cheaper-single-gpu" in md
    # a stack already on one GPU gets no advice
    assert [a for a in json.loads(run_cli(capsys, "preview", "--stack", "prod", "--json")[1])["advice"]
            if a["id"] == "cheaper-single-gpu"] == []
