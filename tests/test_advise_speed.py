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


def test_a_broken_row_is_still_named_by_its_data_row_and_column(tmp_path: Path) -> None:
    engine = _Recorder("(50.0, 100.0, 1000.0, 0), (70.0, 1900.0, 1000.0, 1)")
    with pytest.raises(InputError) as caught:
        check_values(engine, {"gpu_timeline": "gpu_timeline.parquet"})
    problem = caught.value.problems[0]
    assert caught.value.source == "gpu_timeline.parquet"
    assert problem.field == "data row 2, column gpu_mem_used_mb" and "1900.0" in problem.message


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
