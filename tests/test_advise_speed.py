"""Issue 53, item 3: the plausibility checks of advise's inputs cost one filtered scan per input, not a window over
every row per bound (which made the analysis 5.3-6.3x a DuckDB scan of the files and its peak 1,253 MiB). No test
times anything: these count what the checks ask the engine (the benchmark, bench/run.py section 2c, measures it)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from dbx_ai_infra.advise.plausible import BOUNDS, check_values
from dbx_ai_infra.dbxtypes.errors import InputError


class _Recorder:
    """A DuckDB engine over one in-memory view, recording the statements it is asked."""

    dialect = "duckdb"

    def __init__(self, rows: str) -> None:
        self.con = duckdb.connect()
        self.con.execute(f"CREATE VIEW gpu_timeline AS SELECT * FROM (VALUES {rows}) AS t(gpu_util_percent, "
                         "gpu_mem_used_mb, gpu_mem_total_mb, gpu_index)")
        self.asked: list[str] = []

    def fetch(self, sql: str) -> list[dict]:
        self.asked.append(sql)
        cursor = self.con.execute(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]

    def execute(self, sql: str) -> None:
        self.asked.append(sql)
        self.con.execute(sql)


def test_valid_inputs_cost_one_filtered_scan_each_and_no_row_numbers() -> None:
    engine = _Recorder("(50.0, 100.0, 1000.0, 0), (70.0, 900.0, 1000.0, 1)")
    check_values(engine, {"gpu_timeline": "gpu_timeline.parquet"})
    assert len(engine.asked) == 1 < len(BOUNDS["gpu_timeline"])
    assert "row_number" not in engine.asked[0] and "LIMIT 1" in engine.asked[0]
    # the bound across columns is left to the aggregate: column statistics cannot answer it, so a scan would read
    # every row group of the file (a whole month's gpu_timeline) a second time
    assert "gpu_mem_used_mb > gpu_mem_total_mb" not in engine.asked[0]


def test_a_broken_row_is_still_named_by_its_data_row_and_column() -> None:
    engine = _Recorder("(50.0, 100.0, 1000.0, 0), (-4.0, 100.0, 1000.0, 1)")
    with pytest.raises(InputError) as caught:
        check_values(engine, {"gpu_timeline": "gpu_timeline.parquet"})
    problem = caught.value.problems[0]
    assert caught.value.source == "gpu_timeline.parquet"
    assert problem.field == "data row 2, column gpu_util_percent" and "-4.0" in problem.message


@pytest.fixture(scope="module")
def parquet_exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Half a day of prod's telemetry as Parquet, as sample-usage writes it."""
    from dbx_ai_infra.advise.telemetry import write_exports
    from dbx_ai_infra.engine.pipeline import build_plan

    root = tmp_path_factory.mktemp("usage") / "clean"
    write_exports(root, build_plan("prod", with_policies=False, with_cost=True), days=0.5, fmt="parquet")
    return root


def _analyse(usage: Path) -> object:
    from dbx_ai_infra.advise.analysis import run_local
    from dbx_ai_infra.advise.targets import target_rows, targets_of
    from dbx_ai_infra.dbxtypes.advise_thresholds import advise_settings
    from dbx_ai_infra.engine.pipeline import build_plan

    plan = build_plan("prod", with_policies=False, with_cost=True)
    return run_local(str(usage), target_rows(targets_of(plan, 200), plan.stack), advise_settings({}, 1000.0))


@pytest.mark.parametrize(("row", "used"), [(0, "gpu_mem_total_mb + 1"), (7, "gpu_mem_total_mb + 0.1")])
def test_memory_above_the_total_is_named_from_the_aggregate_by_its_row(parquet_exports: Path, tmp_path: Path,
                                                                      row: int, used: str) -> None:
    """The bound across columns is judged on the statistics' per-minute aggregate (issue 53, item 3), and still names
    the file, the first broken data row (1-based, in file order) and the column: a broken row is never advice."""
    import shutil

    usage = tmp_path / "usage"
    shutil.copytree(parquet_exports, usage)
    gpu = usage / "gpu_timeline.parquet"
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * EXCLUDE (n) REPLACE (CASE WHEN n = {row} THEN {used} ELSE gpu_mem_used_mb END "
                f"AS gpu_mem_used_mb) FROM (SELECT *, row_number() OVER () - 1 AS n FROM "
                f"read_parquet('{parquet_exports / 'gpu_timeline.parquet'}'))) TO '{gpu}' (FORMAT parquet)")
    assert _analyse(parquet_exports).summary  # the clean copy is analysed
    with pytest.raises(InputError) as caught:
        _analyse(usage)
    problem = caught.value.problems[0]
    assert caught.value.source == str(gpu)
    assert problem.field == f"data row {row + 1}, column gpu_mem_used_mb" and "at most gpu_mem_total_mb" in \
        problem.message


@pytest.mark.parametrize("dialect", ["duckdb", "databricks"])
def test_the_statistics_read_each_timeline_once(dialect: str) -> None:
    """Issue 53, item 3: the 21 million rows of a month's gpu_timeline are read by one statement of the statistics,
    node_timeline's likewise; the export window takes the timelines' span from their per-minute aggregates (it read
    both again: 6-7% of the analysis's CPU time at 30 days)."""
    from dbx_ai_infra.advise.analysis import render, statements
    from dbx_ai_infra.advise.targets import target_rows, targets_of
    from dbx_ai_infra.dbxtypes.advise_thresholds import advise_settings
    from dbx_ai_infra.engine.pipeline import build_plan

    plan = build_plan("prod", with_policies=False, with_cost=True)
    rows = target_rows(targets_of(plan, 200), plan.stack)
    sql = render("stats.sql.j2", dialect=dialect, targets=rows, settings=advise_settings({}, 1000.0))
    for timeline in ("gpu_timeline", "node_timeline"):
        reading = [s for s in statements(sql) if re.search(rf"\bFROM {timeline}\b", s)]
        assert len(reading) == 1, (timeline, [s[:200] for s in reading])
