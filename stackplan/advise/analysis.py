"""The SQL of ``advise``, rendered from one source (``sql/*.sql.j2``) for DuckDB (the local run) or Databricks SQL
(``--emit-sql``), and its local run over the exports of ``--usage DIR``."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from dbxtypes.errors import InputError, cut
from dbxtypes.vocabulary import HOURS_PER_MONTH

from .findings import FINDING_IDS, FINDINGS
from .sources import API_TABLES, EMPTY, Input, api_rows, column_types, find_inputs, view_sql

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
    return "'" + str(value).replace("'", "''") + "'"


def _env() -> Any:
    import jinja2

    # the templates under sql/, and each finding's SELECT from its record as "finding/<id>"
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(SQL_DIR),
                                  jinja2.DictLoader({f"finding/{f.id}": f.sql for f in FINDINGS})])
    env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined,
                             autoescape=False, keep_trailing_newline=True)  # noqa: S701 - SQL, not HTML
    env.filters["sql"] = sql_literal
    return env


def render(template: str, *, dialect: str, targets: list[dict[str, Any]], thresholds: Mapping[str, Any],
           sla: float | None) -> str:
    return str(_env().get_template(template).render(dialect=dialect, targets=targets, t=thresholds,
                                                    sla=sql_literal(sla), hours_per_month=HOURS_PER_MONTH,
                                                    findings=FINDINGS))


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


def _fetch(con: Any, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def run_local(usage_dir: str, targets: list[dict[str, Any]], thresholds: Mapping[str, Any],
              sla: float | None, memory_limit: str | None = None) -> Analysis:
    """Read the exports in place with DuckDB and run the analysis; `InputError` for unreadable inputs."""
    import duckdb

    found = find_inputs(usage_dir)
    if "clusters" not in found:
        raise InputError.single(usage_dir, "clusters", "is missing: without it no cluster can be matched to the "
                                "stack's workloads.", "export system.compute.clusters (cluster_id, cluster_name, "
                                "tags) as clusters.csv, or the Clusters API list as clusters.json.")
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        if memory_limit:
            con.execute(f"SET memory_limit = {sql_literal(memory_limit)}")
        for name in ("clusters", "node_timeline", "gpu_timeline", "cluster_events", "usage", "list_prices",
                     "requests"):
            inp: Input | None = found.get(name)
            types: dict[str, str] = {}
            if inp is not None and inp.fmt == EMPTY:
                con.execute(view_sql(name, None, types))
                continue
            if inp is not None and not inp.reader:  # an API response: clusters.json, cluster_events.json
                columns = API_TABLES[name]
                con.execute(f"CREATE TEMP TABLE {name}_json ({', '.join(f'{c} VARCHAR' for c in columns)})")
                loaded = api_rows(name, inp.path)
                if loaded:
                    con.executemany(f"INSERT INTO {name}_json VALUES ({', '.join('?' for _ in columns)})", loaded)
                types = dict.fromkeys(columns, "VARCHAR")
            elif inp is not None:
                types = column_types(con, inp)
            con.execute(view_sql(name, inp, types))
        stats = render("stats.sql.j2", dialect="duckdb", targets=targets, thresholds=thresholds, sla=sla)
        for statement in statements(stats):
            _run(con, statement, found)
        queries = finding_queries(render("findings.sql.j2", dialect="duckdb", targets=targets,
                                         thresholds=thresholds, sla=sla))
        rows = {fid: _fetch(con, queries[fid]) for fid in FINDING_IDS}
        unmatched = con.execute("SELECT count(DISTINCT cluster_id) FROM clusters WHERE cluster_id NOT IN "
                                "(SELECT cluster_id FROM cluster_workload)").fetchone()
        return Analysis(
            inputs={k: str(v.path) for k, v in found.items()},
            summary=_fetch(con, "SELECT * FROM workload_summary ORDER BY workload"),
            rows=rows,
            gpu_hourly=_fetch(con, "SELECT * FROM gpu_hourly ORDER BY workload, hour"),
            p99_hourly=_fetch(con, "SELECT * FROM p99_hourly ORDER BY workload, hour"),
            unmatched_clusters=int(unmatched[0]) if unmatched else 0,
            usage_outside=next(iter(_fetch(con, "SELECT * FROM usage_outside WHERE rows_outside > 0")), {}),
            empty_inputs={name: str(inp.path) for name, inp in found.items()
                          if (con.execute(f"SELECT count(*) FROM {name}").fetchone() or (0,))[0] == 0},
        )
    finally:
        con.close()


def _run(con: Any, statement: str, found: Mapping[str, Input]) -> None:
    import duckdb

    try:
        con.execute(statement)
    except (duckdb.ConversionException, duckdb.InvalidInputException) as exc:
        # a value that is not what its column says, a malformed JSON line, a truncated file: DuckDB names the file
        # and line where it can; the message names the inputs the statement read
        named = [str(inp.path) for inp in found.values() if str(inp.path) in str(exc)]
        names = named or [str(found[n].path) for n in found if re.search(rf"\b{n}\b", statement)]
        raise InputError.single(", ".join(names) or "the exports", "",
                                f"holds a value that cannot be read: {_duckdb_problem(exc, named)}",
                                "fix or drop that row (a JSON line whole, timestamps ISO 8601 or epoch "
                                "milliseconds, numbers plain), or export the file again.") from None


def _duckdb_problem(exc: BaseException, paths: list[str]) -> str:
    """DuckDB's message, short: the line it names first, without the file (named already) or its advice to change
    the reader's options (which the user cannot pass), quoted input cut."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    text = re.sub(r"\s*\bTry [^.]*(\.|$)", "", text)
    text = text.removeprefix("Invalid Input Error: ").removeprefix("Conversion Error: ")
    for path in paths:
        text = text.replace(f' in file "{path}"', "").replace(f'"{path}"', "the file")
    line = re.search(r"\bin line (\d+)", text)
    if line:
        text = f"line {line.group(1)}: " + re.sub(r",? ?\bin line \d+:?", "", text).strip(" :,")
    return cut(text, 240)


def emitted_sql(*, stack: str, telemetry: str, days: int, targets: list[dict[str, Any]],
                thresholds: Mapping[str, Any], sla: float | None) -> dict[str, str]:
    """``--emit-sql``: file name -> Databricks SQL; the same templates as the local run, in the Databricks dialect."""
    from dbxtypes.vocabulary import ROLE_TAG, STACK_TAG, WORKLOAD_TAG

    sources = _env().get_template("sources.databricks.sql.j2").render(
        stack=stack, telemetry=telemetry, days=days, stack_tag=STACK_TAG, role_tag=ROLE_TAG,
        workload_tag=WORKLOAD_TAG)
    stats = render("stats.sql.j2", dialect="databricks", targets=targets, thresholds=thresholds, sla=sla)
    findings = render("findings.sql.j2", dialect="databricks", targets=targets, thresholds=thresholds, sla=sla)
    return {"01_sources.sql": str(sources), "02_stats.sql": stats, "03_findings.sql": findings}
