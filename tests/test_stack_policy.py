"""A stack's own policy levels and thresholds (issue 28, part 4): `dbx-ai-infra:policy`, over --policy-config."""

from __future__ import annotations

import copy
import json

from conftest import BASE_CONFIG, run_cli

CACHES = "databricks-cluster-require-volumes-for-caches"
IDLE = "databricks-cluster-require-autotermination"
BOUNDS = "databricks-cluster-configure-worker-bounds"


def stack(write_stack, policy, **sections):
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:dev"]["spark_env_vars"] = {"CACHE": "/dbfs/cache"}  # an advisory caches finding
    config.update({f"dbx-ai-infra:{k}": v for k, v in sections.items()})
    if policy is not None:
        config["dbx-ai-infra:policy"] = policy
    return str(write_stack(config))


def levels(out: str) -> dict[str, str]:
    return {v["policy"]: v["enforcement"] for v in json.loads(out)["violations"]}


def test_the_stack_sets_a_rule_mandatory_for_itself_and_disables_another(write_stack, capsys):
    assert levels(run_cli(capsys, "check", "--stack", stack(write_stack, None), "--json")[1])[CACHES] == "advisory"
    code, out, _ = run_cli(capsys, "check", "--stack", stack(write_stack, {CACHES: "mandatory"}), "--json")
    assert code == 1 and levels(out)[CACHES] == "mandatory"
    assert CACHES not in levels(run_cli(capsys, "check", "--stack", stack(write_stack, {CACHES: "disabled"}), "--json")[1])


def test_its_thresholds_bound_the_spec_before_the_rest_is_read(write_stack, capsys):
    """Raised for this stack: 100 workers pass; lowered: a 30-minute dev cluster is refused."""
    inference = {"min_workers": 2, "max_workers": 100, "model": {"params_billions": 7, "precision": "fp16"}}
    assert run_cli(capsys, "preview", "--stack", stack(write_stack, None, inference=inference))[0] == 2
    raised = {BOUNDS: {"max_workers_cap": 128}}
    assert run_cli(capsys, "preview", "--stack", stack(write_stack, raised, inference=inference))[0] in (0, 1)
    idle = {"min_workers": 2, "max_workers": 6, "autotermination_minutes": 30,
            "model": {"params_billions": 7, "precision": "fp16"}}
    code, _, err = run_cli(capsys, "preview", "--stack", stack(write_stack, {IDLE: {"max_autotermination_minutes": 20}},
                                                                      inference=idle))
    assert code == 2 and "inference.autotermination_minutes: must be at most 20" in err


def test_the_stack_section_wins_over_the_policy_config_file(write_stack, capsys, tmp_path):
    file = tmp_path / "pc.json"
    file.write_text(json.dumps({CACHES: "disabled", IDLE: {"enforcementLevel": "advisory"}}))
    code, out, _ = run_cli(capsys, "check", "--stack", stack(write_stack, {CACHES: "mandatory"}), "--policy-config",
                       str(file), "--json")
    assert code == 1 and levels(out)[CACHES] == "mandatory"


def test_a_bad_policy_section_names_the_stack_file(write_stack, capsys):
    path = stack(write_stack, {"databricks-nope": "disabled"})
    code, _, err = run_cli(capsys, "check", "--stack", path)
    assert code == 2 and f"{path}: dbx-ai-infra:policy" in err.replace("error: ", "") and "not a policy" in err
    code, _, err = run_cli(capsys, "check", "--stack", stack(write_stack, {CACHES: "sometimes"}))
    assert code == 2 and "dbx-ai-infra:policy" in err


def test_under_pulumi_up_the_program_reads_the_section_too(write_stack):
    """`pulumi up` hands the program no --policy-config: the stack's section still raises its limits there."""
    from dbx_ai_infra.engine.engine import run_program
    from dbx_ai_infra.engine.pipeline import load

    inference = {"min_workers": 2, "max_workers": 100, "model": {"params_billions": 7, "precision": "fp16"}}
    loaded = load(stack(write_stack, {BOUNDS: {"max_workers_cap": 128}}, inference=inference))
    plan = run_program(loaded, from_config=True)
    (cluster,) = [r for r in plan.resources if r.name == "test-inference-cluster"]
    assert cluster.inputs["autoscale"]["maxWorkers"] == 100


RETIRED_RULE = "databricks-cluster-tag-autoscaled-gpu-compute"


def test_a_retired_rule_in_a_policy_config_or_section_is_read_with_a_note(write_stack, capsys, tmp_path):
    """Issue 51, item 5 retired a rule: a team whose config or exceptions still name it keeps its gate (not exit 2),
    and is told that the setting has no effect."""
    file = tmp_path / "pc.json"
    file.write_text(json.dumps({RETIRED_RULE: "mandatory", CACHES: "mandatory"}))
    code, out, err = run_cli(capsys, "check", "--stack", stack(write_stack, None), "--policy-config", str(file), "--json")
    assert code == 1 and levels(out)[CACHES] == "mandatory"  # the rest of the config still applies
    assert f"{file}: {RETIRED_RULE} has no effect" in err and "judged as inference from its shape" in err
    code, _, err = run_cli(capsys, "check", "--stack", stack(write_stack, {RETIRED_RULE: "disabled"}), "--json")
    assert code == 0 and f"dbx-ai-infra:policy: {RETIRED_RULE} has no effect" in err
    code, _, err = run_cli(capsys, "check", "--stack", stack(write_stack, {"databricks-nope": "disabled"}))
    assert code == 2  # an unknown name is still refused


def test_an_exception_naming_a_retired_rule_is_a_note_not_a_refusal(write_stack, capsys):
    path = stack(write_stack, None, exceptions=[{"rule": RETIRED_RULE, "resource": "test-dev-cluster",
                                                 "reason": "accepted in 2025"}])
    code, _, err = run_cli(capsys, "check", "--stack", path)
    assert code == 0 and RETIRED_RULE in err and "remove it" in err
