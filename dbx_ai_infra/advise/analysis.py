"""The SQL of ``advise``, rendered from one source (``sql/*.sql.j2``) for DuckDB (the local run) or Databricks SQL
(``--emit-sql``), and its local run over the exports of ``--usage DIR``."""

from __future__ import annotations

import functools
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbx_ai_infra.advise.findings import FINDING_IDS, FINDINGS
from dbx_ai_infra.dbxtypes.advise_thresholds import AdviseSettings
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.vocabulary import HOURS_PER_MONTH
from dbx_ai_infra.engine.crash import cache_root, caching

if TYPE_CHECKING:
    from dbx_ai_infra.advise.engines import Engine
from dbx_ai_infra.advise.engines import SparkEngine, SparkOptions, databricks_session, duckdb_engine, spark_session
from dbx_ai_infra.advise.plausible import check_aggregated, check_values, drop_duplicate_usage
from dbx_ai_infra.advise.sources import Input, find_inputs, sql_string
from dbx_ai_infra.dbxtypes.vocabulary import ROLE_TAG, STACK_TAG, WORKLOAD_TAG

SQL_DIR = Path(__file__).parent / "sql"


def plain(value: Any) -> Any:
    """A value DuckDB returned, as JSON takes it: Decimal -> float, a time -> ISO text, a float rounded."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float):
        return round(value, 3) if math.isfinite(value) else None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def sql_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "NULL"
        return repr(value)
    return sql_string(str(value))


@functools.cache
def _env() -> Any:
    """One template environment per process: jinja compiles a template once per environment, and an advise run
    renders every template for its SQL (and again per dialect)."""
    import jinja2

    # the templates under sql/, and each finding's SELECT from its record as "finding/<id>"
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(SQL_DIR),
                                  jinja2.DictLoader({f"finding/{f.id}": f.sql for f in FINDINGS})])
    env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, bytecode_cache=_template_cache(jinja2),
                             autoescape=False, keep_trailing_newline=True)  # noqa: S701 - SQL, not HTML
    env.filters["sql"] = sql_literal
    return env


def _template_cache(jinja2: Any) -> Any:
    """Jinja's compiled templates kept across runs in the user's cache directory (``sql-templates/``): compiling
    the 17 templates was about 60 ms of every analysis (issue 53, item 3). None when the caches are off
    (``STACKPLAN_NO_CACHE``); a directory that cannot be written is no error (the templates are compiled, as
    before)."""

    class _Quiet(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket: Any) -> None:
            try:
                super().load_bytecode(bucket)
            except OSError:  # not a directory, not readable: compiled, as with no cache
                pass

        def dump_bytecode(self, bucket: Any) -> None:
            try:
                os.makedirs(self.directory, exist_ok=True)
                super().dump_bytecode(bucket)
            except OSError:
                pass

    return _Quiet(str(cache_root() / "sql-templates")) if caching() else None


def render(template: str, *, dialect: str, targets: list[dict[str, Any]], settings: AdviseSettings,
           endpoints: Sequence[Mapping[str, Any]] = ()) -> str:
    """A template for ``dialect``: ``targets`` the clusters (`targets.target_rows`), ``endpoints`` the serving
    endpoints (`targets.endpoint_rows`), ``settings`` the run's thresholds (``t`` in the templates)."""
    return str(_env().get_template(template).render(dialect=dialect, targets=targets, endpoints=list(endpoints),
                                                    t=settings, sla=sql_literal(settings.sla_p99_ms),
                                                    hours_per_month=HOURS_PER_MONTH, findings=FINDINGS))


def statements(sql: str) -> list[str]:
    """The statements of a rendered file (separated by a line holding only ';')."""
    return [s.strip() for s in re.split(r"^\s*;\s*$", sql, flags=re.M) if s.strip() and not _only_comments(s)]


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in text.splitlines())


def finding_queries(sql: str) -> dict[str, str]:
    """``-- finding: <id>`` blocks of the rendered findings file -> their SELECT."""
    out = {}
    for block in statements(sql):
        found = re.search(r"^-- finding: (\S+)", block, flags=re.M)
        if found:
            out[found.group(1)] = block
    return out


@dataclass
class Analysis:
    """What the local run found: per-workload figures, candidate rows per finding id, chart series."""

    inputs: dict[str, str]
    summary: list[dict[str, Any]]
    rows: dict[str, list[dict[str, Any]]]
    gpu_hourly: list[dict[str, Any]] = field(default_factory=list)
    p99_hourly: list[dict[str, Any]] = field(default_factory=list)
    unmatched_clusters: int = 0
    #: Usage rows outside the export window, left out of the bill: count, first and last start, the window.
    usage_outside: dict[str, Any] = field(default_factory=dict)
    #: Inputs present but without a row (a header-only or empty file): name -> path.
    empty_inputs: dict[str, str] = field(default_factory=dict)
    #: Per serving endpoint of the stack: its figures (``endpoint_summary``).
    endpoints: list[dict[str, Any]] = field(default_factory=list)
    #: Exact duplicate billing rows dropped before the analysis (an export appended twice).
    duplicate_usage_rows: int = 0


def find_exports(usage_dir: str) -> dict[str, Input]:
    """The inputs of ``--usage DIR``; clusters is required (`InputError` otherwise)."""
    found = find_inputs(usage_dir)
    if "clusters" not in found:
        raise InputError.single(usage_dir, "clusters", "is missing: without it no cluster can be matched to the "
                                "stack's workloads.", "export system.compute.clusters (cluster_id, cluster_name, "
                                "tags) as clusters.csv, or the Clusters API list as clusters.json.")
    return found


def run_local(usage_dir: str, targets: list[dict[str, Any]], settings: AdviseSettings, memory_limit: str | None = None,
              endpoints: Sequence[Mapping[str, Any]] = ()) -> Analysis:
    """Read the exports in place with DuckDB and run the analysis; `InputError` for unreadable inputs."""
    found = find_exports(usage_dir)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="advise-sql") as pool:
        # the SQL is rendered (jinja imported, the templates loaded) while DuckDB starts and reads the inputs, which
        # it does without holding the GIL: about 30 ms of each analysis (issue 53, item 3)
        sql = pool.submit(analysis_sql, "duckdb", targets, settings, endpoints)
        with duckdb_engine(memory_limit) as engine:
            engine.load_sources(found)
            return analyse(engine, _where(found), targets, settings, endpoints, sql.result)


def _where(found: Mapping[str, Input]) -> dict[str, str]:
    return {name: str(inp.path) for name, inp in found.items()}


def run_spark(usage_dir: str, targets: list[dict[str, Any]], settings: AdviseSettings, options: Any = None,
              endpoints: Sequence[Mapping[str, Any]] = ()) -> Analysis:
    """The same analysis on Spark (`engines.SparkOptions`: local or Spark Connect), Spark reading the exports."""
    found = find_exports(usage_dir)
    with spark_session(options or SparkOptions()) as spark:
        engine = SparkEngine(spark)
        engine.load_sources(found)
        return analyse(engine, _where(found), targets, settings, endpoints)


def run_databricks(targets: list[dict[str, Any]], settings: AdviseSettings, *, stack: str,
                   days: int, profile: str | None, telemetry: str,
                   endpoints: Sequence[Mapping[str, Any]] = ()) -> Analysis:
    """The analysis through Databricks Connect: the ``--emit-sql`` sources (system tables, the telemetry Volume of
    the last ``days`` days), then the same statements. Needs databricks-connect, installed in its own environment
    (it replaces pyspark); not tested in CI (no workspace)."""
    with databricks_session(profile) as spark:
        engine = SparkEngine(spark, cache=False)  # serverless compute refuses CACHE TABLE
        for statement in statements(sources_sql(stack=stack, telemetry=telemetry, days=days, endpoints=endpoints)):
            engine.execute(statement)
        inputs = {name: table for name, table in SYSTEM_TABLES.items()}
        inputs.update({name: f"{telemetry}/{name}" for name in ("gpu_timeline", "cluster_events", "requests")})
        inputs["serving_requests"] = ", ".join(str(e["payload_table"]) for e in endpoints if e.get("payload_table")) \
            or "(no endpoint with an inference table)"
        return analyse(engine, inputs, targets, settings, endpoints)


#: Where ``--engine databricks`` reads each input that a system table holds (the rest: the telemetry Volume).
SYSTEM_TABLES = {"clusters": "system.compute.clusters", "node_timeline": "system.compute.node_timeline",
                 "usage": "system.billing.usage", "list_prices": "system.billing.list_prices"}


@dataclass(frozen=True)
class AnalysisSQL:
    """The analysis in one dialect: the statements of the statistics, in order, and each finding's query."""

    stats: list[str]
    findings: dict[str, str]


def analysis_sql(dialect: str, targets: list[dict[str, Any]], settings: AdviseSettings,
                 endpoints: Sequence[Mapping[str, Any]] = ()) -> AnalysisSQL:
    """`AnalysisSQL` rendered from ``sql/stats.sql.j2`` and ``sql/findings.sql.j2`` (`render`)."""
    return AnalysisSQL(
        statements(render("stats.sql.j2", dialect=dialect, targets=targets, settings=settings, endpoints=endpoints)),
        finding_queries(render("findings.sql.j2", dialect=dialect, targets=targets, settings=settings,
                               endpoints=endpoints)))


def analyse(engine: Engine, inputs: Mapping[str, str], targets: list[dict[str, Any]], settings: AdviseSettings,
            endpoints: Sequence[Mapping[str, Any]] = (),
            prepared: Callable[[], AnalysisSQL] | None = None) -> Analysis:
    """The statistics, the finding queries and the chart series on an engine whose sources are loaded (``inputs``:
    each input's name -> where it was read from; ``prepared``: the `AnalysisSQL` already being rendered, else it is
    rendered here for the engine's dialect)."""
    check_values(engine, inputs)  # data that cannot be true is exit 2, never advice
    duplicates = drop_duplicate_usage(engine, inputs)
    sql = prepared() if prepared else analysis_sql(engine.dialect, targets, settings, endpoints)
    for statement in sql.stats:
        engine.execute(statement)
    check_aggregated(engine, inputs)  # the bounds across columns, on the aggregates (before any figure is read)
    rows = {fid: engine.fetch(sql.findings[fid]) for fid in FINDING_IDS}
    unmatched = engine.fetch("SELECT count(DISTINCT cluster_id) AS n FROM clusters WHERE cluster_id NOT IN "
                             "(SELECT cluster_id FROM cluster_workload)")
    return Analysis(
        inputs=dict(inputs),
        summary=engine.fetch("SELECT * FROM workload_summary ORDER BY workload"),
        rows=rows,
        gpu_hourly=engine.fetch("SELECT * FROM gpu_hourly ORDER BY workload, hour"),
        p99_hourly=engine.fetch("SELECT * FROM p99_hourly ORDER BY workload, hour"),
        unmatched_clusters=int(unmatched[0]["n"]) if unmatched else 0,
        usage_outside=next(iter(engine.fetch("SELECT * FROM usage_outside WHERE rows_outside > 0")), {}),
        empty_inputs=_empty_inputs(engine, inputs),
        endpoints=engine.fetch("SELECT * FROM endpoint_summary ORDER BY endpoint"),
        duplicate_usage_rows=duplicates,
    )


def _empty_inputs(engine: Engine, inputs: Mapping[str, str]) -> dict[str, str]:
    """The inputs that hold no row (name -> where), asked in one statement: "holds no rows" needs one row of each, not
    a count (a count reads every file of a CSV directory again)."""
    names = list(inputs)
    if not names:
        return {}
    held = engine.fetch("SELECT " + ", ".join(f"(SELECT count(*) FROM (SELECT 1 AS one FROM {name} LIMIT 1) AS p{i}) "
                                              f"AS held_{i}" for i, name in enumerate(names)))[0]
    return {name: inputs[name] for i, name in enumerate(names) if not held[f"held_{i}"]}


def sources_sql(*, stack: str, telemetry: str, days: int, endpoints: Sequence[Mapping[str, Any]] = ()) -> str:
    """The Databricks sources file (system tables, the telemetry Volume), for ``--emit-sql`` and ``--engine
    databricks``."""
    return str(_env().get_template("sources.databricks.sql.j2").render(
        stack=stack, telemetry=telemetry, days=days, stack_tag=STACK_TAG, role_tag=ROLE_TAG,
        workload_tag=WORKLOAD_TAG, payload_tables=[(str(e["endpoint"]), str(e["payload_table"]))
                                                   for e in endpoints if e.get("payload_table")]))


def emitted_sql(*, stack: str, telemetry: str, days: int, targets: list[dict[str, Any]],
                settings: AdviseSettings, endpoints: Sequence[Mapping[str, Any]] = ()) -> dict[str, str]:
    """``--emit-sql``: file name -> Databricks SQL; the same templates as the local run, in the Databricks dialect."""
    stats = render("stats.sql.j2", dialect="databricks", targets=targets, settings=settings,
                   endpoints=endpoints)
    findings = render("findings.sql.j2", dialect="databricks", targets=targets, settings=settings,
                      endpoints=endpoints)
    return {"01_sources.sql": sources_sql(stack=stack, telemetry=telemetry, days=days, endpoints=endpoints),
            "02_stats.sql": stats,
            "03_findings.sql": findings}
