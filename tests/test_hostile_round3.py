"""A third hostile pass (issue 44): inputs that once gave a wrong answer with exit 0, blamed the wrong thing or left
something behind. The baselines' and team rules' cases are in tests/test_baseline.py and tests/test_team_rules.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

from dbx_ai_infra.cli.cli import main

# --- 3. two outputs, one path ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["advise", "--stack", "prod", "--usage", "{tmp}/usage", "--write-stack", "{tmp}/x.yaml", "--out", "{tmp}/x.yaml"],
    ["check", "--stack", "dev", "--out", "{tmp}/b.json", "--write-baseline", "{tmp}/./b.json"],
])
def test_two_outputs_on_one_path_are_refused_before_any_work(capsys, tmp_path: Path, argv):
    (tmp_path / "usage").mkdir()
    code, out, err = run_cli(capsys, *(a.format(tmp=tmp_path) for a in argv))
    assert code == 2 and "name the same path" in err and "Fix: give each its own path" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["usage"]  # nothing written


# --- 4. data that cannot be true ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A day of prod's telemetry, as sample-usage writes it (CSV)."""
    from dbx_ai_infra.advise.telemetry import write_exports
    from dbx_ai_infra.engine.pipeline import build_plan

    root = tmp_path_factory.mktemp("usage") / "clean"
    write_exports(root, build_plan("prod", with_policies=False, with_cost=True), plant=["cost-drift"], days=1)
    return root


def _copy_with(exports: Path, tmp_path: Path, name: str, column: str, value: str, row: int = 3) -> Path:
    import csv
    import shutil

    target = tmp_path / "usage"
    shutil.copytree(exports, target)
    with (target / f"{name}.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    rows[row][rows[0].index(column)] = value
    with (target / f"{name}.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return target


@pytest.mark.parametrize(("name", "column", "value", "must"), [
    ("gpu_timeline", "gpu_util_percent", "250", "a percent, 0 to 100"),
    ("gpu_timeline", "gpu_util_percent", "-3", "a percent, 0 to 100"),
    ("gpu_timeline", "gpu_mem_used_mb", "999999", "at most gpu_mem_total_mb"),
    ("node_timeline", "cpu_user_percent", "-1", "a percent, 0 to 100"),
    ("usage", "usage_quantity", "-5", "not negative"),
    ("serving_requests", "sampling_fraction", "-0.5", "a fraction above 0 and at most 1"),
])
def test_a_value_that_cannot_be_true_is_exit_2_naming_file_row_and_column(capsys, exports, tmp_path, name, column,
                                                                          value, must):
    usage = _copy_with(exports, tmp_path, name, column, value)
    code, out, err = run_cli(capsys, "advise", "--stack", "prod", "--usage", str(usage), "--json")
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"{usage / name}.csv: data row 3, column {column}" in err and must in err


def test_duplicate_billing_rows_are_dropped_and_counted(capsys, exports, tmp_path):
    import shutil

    clean = run_cli(capsys, "advise", "--stack", "prod", "--usage", str(exports), "--json")[1]
    doubled = tmp_path / "usage"
    shutil.copytree(exports, doubled)
    lines = (exports / "usage.csv").read_text().splitlines(keepends=True)
    (doubled / "usage.csv").write_text("".join(lines + lines[1:]))  # every billing row twice
    code, out, _ = run_cli(capsys, "advise", "--stack", "prod", "--usage", str(doubled), "--json")
    doc, before = json.loads(out), json.loads(clean)
    assert code == 0 and f"{len(lines) - 1} exact duplicate row(s) of {doubled / 'usage.csv'} dropped" in \
        " ".join(doc["notes"])
    assert [(f["id"], f["monthly_cost_delta"]) for f in doc["findings"]] == \
        [(f["id"], f["monthly_cost_delta"]) for f in before["findings"]]  # billed once, as without the copy


# --- 5. a base of another stack ----------------------------------------------------------------------------------------

def test_a_directory_base_of_another_stack_or_cloud_is_refused(capsys, tmp_path):
    plans = tmp_path / "plans"
    plans.mkdir()
    assert main(["preview", "--stack", "prod", "--json", "--out", str(plans / "azure-prod.json")]) == 0
    capsys.readouterr()
    code, out, err = run_cli(capsys, "cost", "--stack", "azure-prod", "--stack", "dev", "--against", str(plans))
    assert code == 2 and "holds the plan of stack prod (aws), not of azure-prod (azure)" in err
    assert "Traceback" not in err
    # a base named on its own may be any stack (the diff says which)
    assert run_cli(capsys, "cost", "--stack", "azure-prod", "--against", str(plans / "azure-prod.json"))[0] == 0


# --- 7. numbers that are not finite -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [".inf", "1e400", "-.inf", ".nan"])
def test_a_non_finite_number_in_a_stack_is_refused_at_the_input(write_stack, capsys, value):
    import copy

    from conftest import BASE_CONFIG

    config = copy.deepcopy(BASE_CONFIG)
    text = __import__("yaml").safe_dump({"config": config}) + f"  dbx-ai-infra:budget:\n    monthly_expected_max: {value}\n"
    code, out, err = run_cli(capsys, "check", "--stack", str(write_stack(text=text)), "--json")
    assert code == 2 and "budget.monthly_expected_max" in err and "Traceback" not in err and out == ""


@pytest.mark.parametrize("argv", [["advise", "--stack", "dev", "--usage", ".", "--sla-p99-ms", "inf"],
                                  ["sample-usage", "--stack", "dev", "--out", "x", "--days", "nan"]])
def test_a_non_finite_number_on_the_command_line_is_refused(capsys, argv):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2 and "is not a finite number" in capsys.readouterr().err


# --- 9. Terraform plan shapes ------------------------------------------------------------------------------------------

def _plan(tmp_path: Path, doc: object, raw: bytes | None = None) -> Path:
    path = tmp_path / "plan.json"
    path.write_bytes(raw if raw is not None else json.dumps(doc).encode())
    return path


def test_a_plan_that_changes_nothing_is_a_plan(capsys, tmp_path):
    path = _plan(tmp_path, {"format_version": "1.2", "terraform_version": "1.9.0",
                            "planned_values": {"root_module": {}}, "configuration": {"root_module": {}}})
    code, _, err = run_cli(capsys, "check", "--terraform-plan", str(path))
    assert code == 0, err


def test_a_byte_order_mark_is_no_content(capsys, tmp_path):
    good = (Path(__file__).resolve().parent.parent / "examples" / "terraform" / "plan-good.json").read_bytes()
    code, _, err = run_cli(capsys, "check", "--terraform-plan", str(_plan(tmp_path, None, b"\xef\xbb\xbf" + good)))
    assert code == 0, err


def test_a_change_without_its_change_object_is_named(capsys, tmp_path):
    path = _plan(tmp_path, {"format_version": "1.2", "terraform_version": "1.9.0", "resource_changes": [
        {"address": "databricks_cluster.x", "type": "databricks_cluster", "name": "x"}]})
    code, _, err = run_cli(capsys, "check", "--terraform-plan", str(path))
    assert code == 2 and "resource_changes[0] (databricks_cluster.x)" in err and "no change object" in err


@pytest.mark.parametrize("version", ["0.1", "2.0"])
def test_a_plan_format_this_does_not_read_is_named_by_its_version(capsys, tmp_path, version):
    path = _plan(tmp_path, {"format_version": version, "resource_changes": []})
    code, _, err = run_cli(capsys, "check", "--terraform-plan", str(path))
    assert code == 2 and f"format_version: is '{version}'" in err and "1.x" in err


# --- 10. export-terraform --out that cannot be written -------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["empty", "dangling", "under-a-file"])
def test_an_export_directory_that_cannot_be_written_is_exit_2(capsys, tmp_path, monkeypatch, kind):
    monkeypatch.chdir(tmp_path)
    if kind == "empty":
        out = ""
    elif kind == "dangling":
        (tmp_path / "link").symlink_to(tmp_path / "nowhere")
        out = str(tmp_path / "link")
    else:
        (tmp_path / "file").write_text("x")
        out = str(tmp_path / "file" / "tf")
    code, _, err = run_cli(capsys, "export-terraform", "--stack", "dev", "--out", out)
    assert code == 2 and "--out" in err and "Fix:" in err and "unexpected" not in err
    assert not (tmp_path / "main.tf.json").exists() and not (tmp_path / "nowhere").exists()


# --- 11. a plant that does not apply -------------------------------------------------------------------------------------

def test_a_plant_the_stack_has_no_workload_for_is_exit_2_before_anything_is_written(capsys, tmp_path):
    out = tmp_path / "exports"
    code, stdout, err = run_cli(capsys, "sample-usage", "--stack", "dev", "--out", str(out), "--plant", "training-resized")
    assert code == 2 and "training-resized plants on a training workload, and stack dev has none" in err
    assert stdout == "" and not out.exists()
    code, stdout, _ = run_cli(capsys, "sample-usage", "--stack", "prod", "--out", str(out), "--plant", "training-resized",
                          "--days", "1")
    assert code == 0 and json.loads(stdout)["planted"] == {"training-resized": "prod-training-run"}


# --- 13. small promises --------------------------------------------------------------------------------------------------

def test_cost_takes_json_as_preview_and_check_do(capsys):
    code, out, _ = run_cli(capsys, "cost", "--stack", "dev", "--json")
    assert code == 0 and json.loads(out)["cost"]["total"]["complete"] is True


def test_cost_help_says_what_its_exit_1_means(capsys):
    with pytest.raises(SystemExit):
        main(["cost", "--help"])
    text = capsys.readouterr().out
    assert "1    over the stack's budget" in text and "a mandatory policy violation" not in text


def test_the_example_team_rule_flags_a_pool_backed_gpu_cluster(capsys):
    from dbx_ai_infra.policies.registry import forget_team_rules

    examples = Path(__file__).resolve().parent.parent / "examples" / "rules"
    try:
        code, out, _ = run_cli(capsys, "check", "--stack", "prod", "--rules", str(examples), "--json")
    finally:
        forget_team_rules()
    flagged = {v["resource_name"] for v in json.loads(out)["violations"] if v["policy"] == "acme-gpu-require-owner-tag"}
    assert code == 0 and "prod-inference-cluster" in flagged  # on its pool: no node type of its own


# --- 12. messages that name the field, the place and a real fix ---------------------------------------------------------

HEAD = ("config:\n  dbx-ai-infra:cloud: aws\n  dbx-ai-infra:gpu_family: a10g\n  dbx-ai-infra:single_user_name: "
        "ml@example.com\n  dbx-ai-infra:tags: {workload: genai, cost_center: ai}\n")


@pytest.mark.parametrize(("tail", "said", "not_said"), [
    ("  dbx-ai-infra:workloads:\n    x: {role: trainer, num_workers: 2}\n",
     "role 'trainer' is not one of 'training', 'inference', 'dev'. Fix: set role to one of", "discriminator"),
    ("  dbx-ai-infra:workloads:\n    x: {num_workers: 2}\n", "has no role. Fix: add role: training, inference or dev",
     "Unable to extract tag"),
    ("  dbx-ai-infra:workloads:\n    x: {role: dev, num_workers: 2}\n",
     "workloads.x.dev.num_workers: is not a known key", "did you mean 'num_workers'"),
    ('  dbx-ai-infra:serving:\n    endpoints:\n      "bad name!": {entity: a.b.c, entity_version: "1", '
     "model: {params_billions: 1}}\n", "key 'bad name!': string should match pattern", "Fix: use ."),
    ("  dbx-ai-infra:workloads:\n    serving-x: {role: dev}\n", "names starting with serving- are kept for",
     "collides with serving endpoint"),
    ("  dbx-ai-infra:dev:\n    \u0430utotermination_minutes: 30\n", "dev['\\u0430utotermination_minutes']: is not a "
     "known key (it holds characters that are not ASCII", "dev.\u0430utotermination"),
])
def test_a_message_names_the_field_the_place_and_a_real_fix(write_stack, capsys, tail, said, not_said):
    code, _, err = run_cli(capsys, "check", "--stack", str(write_stack(text=HEAD + tail)))
    assert code == 2 and said in err and not_said not in err and "Traceback" not in err, err


# --- 8. telemetry that cannot be read names the guilty file, its line and column ----------------------------------------

@pytest.mark.parametrize(("name", "column", "value", "said"), [
    ("gpu_timeline", "gpu_util_percent", "N/A", 'line 4, column gpu_util_percent: holds a value that cannot be read: '
                                                'Could not convert string "N/A"'),
    ("node_timeline", "cpu_user_percent", "75%", 'line 4, column cpu_user_percent'),
])
def test_a_value_that_cannot_be_read_names_the_guilty_file_line_and_column(capsys, exports, tmp_path, name, column,
                                                                           value, said):
    usage = _copy_with(exports, tmp_path, name, column, value)
    code, _, err = run_cli(capsys, "advise", "--stack", "prod", "--usage", str(usage))
    assert code == 2 and f"{usage / name}.csv: {said}" in err, err
    assert "clusters.csv" not in err and "SELECT" not in err and "strict mode" not in err and "Traceback" not in err


def test_epoch_milliseconds_are_read_in_the_gpu_timeline_too(capsys, exports, tmp_path):
    import csv
    import shutil

    usage = tmp_path / "usage"
    shutil.copytree(exports, usage)
    with (exports / "gpu_timeline.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    start, end = rows[0].index("start_time"), rows[0].index("end_time")
    from datetime import datetime

    for row in rows[1:]:
        for i in (start, end):
            row[i] = str(int(datetime.fromisoformat(row[i].replace("+00", "+00:00")).timestamp() * 1000))
    with (usage / "gpu_timeline.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    as_iso = json.loads(run_cli(capsys, "advise", "--stack", "prod", "--usage", str(exports), "--json")[1])
    code, out, _ = run_cli(capsys, "advise", "--stack", "prod", "--usage", str(usage), "--json")
    assert code == 0 and json.loads(out)["findings"] == as_iso["findings"]


@pytest.mark.parametrize("kind", ["garbage-csv", "corrupt-parquet"])
def test_a_file_that_cannot_be_read_at_all_is_exit_2_naming_it(capsys, exports, tmp_path, kind):
    import shutil

    usage = tmp_path / "usage"
    shutil.copytree(exports, usage)
    if kind == "garbage-csv":
        (usage / "requests.csv").write_bytes(bytes(range(256)) * 20)
        guilty = usage / "requests.csv"
    else:
        (usage / "gpu_timeline.csv").unlink()
        guilty = usage / "gpu_timeline.parquet"
        guilty.write_bytes(b"PAR1" + bytes(range(256)) * 10 + b"PAR1")
    code, _, err = run_cli(capsys, "advise", "--stack", "prod", "--usage", str(usage))
    assert code == 2 and f"{guilty}:" in err and "cannot be read" in err and "unexpected" not in err
