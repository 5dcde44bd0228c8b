"""Data that cannot be true never becomes priced advice: the values of ``advise``'s inputs held to what they can be.

Run on an engine whose sources are loaded (`engines`): an out-of-range value (a utilisation of 250%, memory used
above the GPU's total, a negative duration, a sampling fraction outside (0, 1]) is `InputError` naming the file, the
data row (1 = the first row after a header) and the column, so the command exits 2; exact duplicate billing rows (an
export appended twice) are dropped, and the analysis says how many.

What it costs (issue 53, item 3): the bounds on one column are judged before the analysis, one filtered scan per
input, which DuckDB answers from a Parquet file's column statistics without reading a row when they exclude every
bound. A bound across columns (memory used above the GPU's total) cannot be answered so: it read every row of a
month's gpu_timeline again (4-5% of the analysis), so it is judged after the statistics, on the per-minute aggregate
that reads those rows anyway (`check_aggregated`), before any figure is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dbx_ai_infra.advise.engines import Engine
from dbx_ai_infra.dbxtypes.errors import InputError


@dataclass(frozen=True)
class Bound:
    """A condition no true row meets, on the column it is about, and what the column must be."""

    column: str
    broken: str
    must: str
    #: For a bound across columns: the relation of the statistics (``sql/stats.sql.j2``) that aggregates every row
    #: of the input, and a condition on it that holds exactly when some row is broken; judged there, not by a scan.
    aggregated: tuple[str, str] | None = None


def _percent(column: str) -> Bound:
    return Bound(column, f"{column} < 0 OR {column} > 100", "a percent, 0 to 100")


def _not_negative(column: str) -> Bound:
    return Bound(column, f"{column} < 0", "not negative")


#: Per normalized input (`sources.COLUMNS`), what its values can be.
BOUNDS: Mapping[str, tuple[Bound, ...]] = {
    "gpu_timeline": (_percent("gpu_util_percent"), _not_negative("gpu_mem_used_mb"),
                     Bound("gpu_mem_total_mb", "gpu_mem_total_mb <= 0", "positive"),
                     # gpu_cluster_minutes.mem_share is the minute's largest used / total: above 1 exactly when a
                     # row's used exceeds its total (a total of 0 or less is the bound above)
                     Bound("gpu_mem_used_mb", "gpu_mem_used_mb > gpu_mem_total_mb", "at most gpu_mem_total_mb",
                           aggregated=("gpu_cluster_minutes", "mem_share > 1")),
                     _not_negative("gpu_index")),
    "node_timeline": (_percent("cpu_user_percent"), _percent("cpu_system_percent"), _percent("cpu_wait_percent"),
                      _percent("mem_used_percent"), _not_negative("network_sent_bytes"),
                      _not_negative("network_received_bytes")),
    "usage": (_not_negative("usage_quantity"),),
    "list_prices": (_not_negative("price"),),
    "requests": (_not_negative("latency_ms"),),
    "serving_requests": (_not_negative("duration_ms"),
                         Bound("sampling_fraction", "sampling_fraction <= 0 OR sampling_fraction > 1",
                               "a fraction above 0 and at most 1")),
}


def check_values(engine: Engine, inputs: Mapping[str, str]) -> None:
    """`InputError` for the first value of an input that breaks a bound on one column (``inputs``: name -> where it
    was read).

    One filtered scan per input over the columns its bounds read, stopping at the first broken row: no row numbers
    (a window over every row of the input, once per bound, cost 5x a scan of gpu_timeline and its rows' memory:
    issue 53, item 3); only when a row is broken are the rows numbered, to name the first."""
    for name, where in inputs.items():
        bounds = [b for b in BOUNDS.get(name, ()) if b.aggregated is None]
        if not bounds:
            continue
        try:
            broken = bool(engine.fetch(f"SELECT 1 AS broken FROM {name} WHERE "
                                       f"{' OR '.join(f'({b.broken})' for b in bounds)} LIMIT 1"))
        except InputError:  # a value that cannot be read at all: the numbered pass below names its line and column
            broken = True
        if broken:
            _name_first(engine, name, where, bounds)


def check_aggregated(engine: Engine, inputs: Mapping[str, str]) -> None:
    """`InputError` for the first value that breaks a bound across columns, judged on the statistics' aggregate
    (`Bound.aggregated`); run after the statistics are computed and before anything is read from them."""
    for name, where in inputs.items():
        for bound in BOUNDS.get(name, ()):
            if bound.aggregated is not None:
                relation, condition = bound.aggregated
                if engine.fetch(f"SELECT 1 AS broken FROM {relation} WHERE {condition} LIMIT 1"):
                    _name_first(engine, name, where, [bound])


def _name_first(engine: Engine, name: str, where: str, bounds: Sequence[Bound]) -> None:
    """`InputError` naming the first row of ``name`` that breaks one of ``bounds`` (in their order), by its data row
    where the engine numbers rows in file order (DuckDB); the error path only."""
    for bound in bounds:
        found = engine.fetch(f"SELECT row_n, {bound.column} AS value FROM (SELECT *, row_number() OVER "
                             f"(ORDER BY (SELECT NULL)) AS row_n FROM {name}) AS numbered WHERE "
                             f"{bound.broken} ORDER BY row_n LIMIT 1") if engine.dialect == "duckdb" else \
            engine.fetch(f"SELECT {bound.column} AS value FROM {name} WHERE {bound.broken} LIMIT 1")
        if found:
            row = found[0]
            at = f"data row {row['row_n']}, " if "row_n" in row else ""
            raise InputError.single(where, f"{at}column {bound.column}",
                                    f"is {row['value']!r}, which cannot be true: it must be {bound.must}.",
                                    "fix the export (a unit, a scale or a sign gone wrong) or drop that row.")


def drop_duplicate_usage(engine: Engine, inputs: Mapping[str, str]) -> int:
    """Exact duplicate rows of the billing usage (the same rows exported twice), dropped; how many there were."""
    if "usage" not in inputs:
        return 0
    counted = engine.fetch("SELECT count(*) AS n, (SELECT count(*) FROM (SELECT DISTINCT * FROM usage) AS d) AS "
                           "distinct_n FROM usage")
    duplicates = int(counted[0]["n"]) - int(counted[0]["distinct_n"]) if counted else 0
    if duplicates > 0:
        if engine.dialect == "duckdb":
            engine.execute("CREATE OR REPLACE TEMP TABLE usage_distinct AS SELECT DISTINCT * FROM usage")
        else:
            engine.execute("CACHE TABLE usage_distinct AS SELECT DISTINCT * FROM usage")
        engine.execute("CREATE OR REPLACE TEMP VIEW usage AS SELECT * FROM usage_distinct")
    return duplicates
