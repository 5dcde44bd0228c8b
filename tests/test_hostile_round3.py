"""A third hostile pass (issue 44): inputs that once gave a wrong answer with exit 0, blamed the wrong thing or left
something behind. The baselines' and team rules' cases are in tests/test_baseline.py and tests/test_team_rules.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackplan.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- 3. two outputs, one path ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["advise", "--stack", "prod", "--usage", "{tmp}/usage", "--write-stack", "{tmp}/x.yaml", "--out", "{tmp}/x.yaml"],
    ["check", "--stack", "dev", "--out", "{tmp}/b.json", "--write-baseline", "{tmp}/./b.json"],
])
def test_two_outputs_on_one_path_are_refused_before_any_work(capsys, tmp_path: Path, argv):
    (tmp_path / "usage").mkdir()
    code, out, err = run(capsys, *(a.format(tmp=tmp_path) for a in argv))
    assert code == 2 and "name the same path" in err and "Fix: give each its own path" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["usage"]  # nothing written


# --- 4. data that cannot be true ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A day of prod's telemetry, as sample-usage writes it (CSV)."""
    from stackplan.advise.telemetry import write_exports
    from stackplan.pipeline import build_plan

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
    code, out, err = run(capsys, "advise", "--stack", "prod", "--usage", str(usage), "--json")
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"{usage / name}.csv: data row 3, column {column}" in err and must in err


def test_duplicate_billing_rows_are_dropped_and_counted(capsys, exports, tmp_path):
    import shutil

    clean = run(capsys, "advise", "--stack", "prod", "--usage", str(exports), "--json")[1]
    doubled = tmp_path / "usage"
    shutil.copytree(exports, doubled)
    lines = (exports / "usage.csv").read_text().splitlines(keepends=True)
    (doubled / "usage.csv").write_text("".join(lines + lines[1:]))  # every billing row twice
    code, out, _ = run(capsys, "advise", "--stack", "prod", "--usage", str(doubled), "--json")
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
    code, out, err = run(capsys, "cost", "--stack", "azure-prod", "--stack", "dev", "--against", str(plans))
    assert code == 2 and "holds the plan of stack prod (aws), not of azure-prod (azure)" in err
    assert "Traceback" not in err
    # a base named on its own may be any stack (the diff says which)
    assert run(capsys, "cost", "--stack", "azure-prod", "--against", str(plans / "azure-prod.json"))[0] == 0
