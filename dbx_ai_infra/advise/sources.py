"""The inputs of ``advise``: which files of ``--usage DIR`` are read, with which columns (a contract), and the
DuckDB views that read them in place and give the analysis (``sql/stats.sql.j2``) one shape per relation.

Each input is optional and may be ``NAME.parquet``, ``NAME.csv`` (``clusters`` also ``.json``: a Clusters API list
response; ``cluster_events`` is ``.jsonl``), or a directory ``NAME/`` of such files (the GPU collector writes one CSV
per node and minute under ``gpu_timeline/``). A missing input is an empty relation; its findings are not judged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.documents import parse_json_stream, read_text
from dbx_ai_infra.dbxtypes.errors import InputError, clip
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, ROLE_TAG, STACK_TAG, WORKLOAD_TAG
from dbx_ai_infra.sources.exports import read_export_file


def load_duckdb() -> Any:
    """DuckDB, imported on first use (the one place that imports it): a run that does not analyse locally, or that
    fails on its input first, never loads it."""
    import duckdb

    return duckdb


def load_pyspark() -> Any:
    """pyspark with the parts the Spark engine uses (``sql``, ``sql.functions``, ``sql.types``), imported on first
    use (the one place that imports it): an optional package, needed by ``--engine spark`` only."""
    import pyspark.sql.functions
    import pyspark.sql.types  # noqa: F401 - loads the submodule the engine reads off the package

    return pyspark


#: Input name -> the columns it must have (system-table names; a contract).
COLUMNS: Mapping[str, tuple[str, ...]] = {
    "clusters": ("cluster_id", "cluster_name", "tags"),
    "node_timeline": ("cluster_id", "instance_id", "start_time", "end_time", "driver", "cpu_user_percent",
                      "cpu_system_percent", "cpu_wait_percent", "mem_used_percent", "network_sent_bytes",
                      "network_received_bytes", "node_type"),
    "gpu_timeline": ("cluster_id", "instance_id", "driver", "gpu_index", "start_time", "end_time",
                     "gpu_util_percent", "gpu_mem_used_mb", "gpu_mem_total_mb"),
    "cluster_events": ("cluster_id", "timestamp", "type", "details"),
    "usage": ("usage_start_time", "usage_end_time", "sku_name", "usage_unit", "usage_quantity"),
    "list_prices": ("sku_name", "currency_code", "usage_unit", "price_start_time", "price_end_time"),
    "requests": ("request_time", "cluster_id", "latency_ms", "status_code"),
    # a Model Serving endpoint's AI Gateway inference table (``<catalog>.<schema>.<prefix>_payload``: request_time,
    # status_code, execution_duration_ms and sampling_fraction are its own columns), with the endpoint's name added,
    # since each endpoint has its own table; sampling_fraction is optional (1: every request logged)
    "serving_requests": ("endpoint_name", "request_time", "status_code", "execution_duration_ms"),
}

#: The normalized relation each input becomes (what the analysis reads): its columns, in order, and their SQL types.
#: A view casts each input column to its type (a TIMESTAMP as `_ts` reads a time), unless the view gives the column
#: its own expression; the relation of an absent input is these columns, NULL.
RELATIONS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "clusters": (("cluster_id", "STRING"), ("cluster_name", "STRING"), ("tag_stack", "STRING"),
                 ("tag_role", "STRING"), ("tag_workload", "STRING")),
    "node_timeline": (("cluster_id", "STRING"), ("instance_id", "STRING"), ("start_time", "TIMESTAMP"),
                      ("end_time", "TIMESTAMP"), ("driver", "BOOLEAN"), ("cpu_user_percent", "DOUBLE"),
                      ("cpu_system_percent", "DOUBLE"), ("cpu_wait_percent", "DOUBLE"),
                      ("mem_used_percent", "DOUBLE"), ("network_sent_bytes", "DOUBLE"),
                      ("network_received_bytes", "DOUBLE"), ("node_type", "STRING")),
    "gpu_timeline": (("cluster_id", "STRING"), ("instance_id", "STRING"), ("driver", "BOOLEAN"),
                     ("gpu_index", "INTEGER"), ("start_time", "TIMESTAMP"), ("end_time", "TIMESTAMP"),
                     ("gpu_util_percent", "DOUBLE"), ("gpu_mem_used_mb", "DOUBLE"), ("gpu_mem_total_mb", "DOUBLE")),
    "cluster_events": (("cluster_id", "STRING"), ("at", "TIMESTAMP"), ("type", "STRING"), ("reason_code", "STRING"),
                       ("current_workers", "INTEGER"), ("target_workers", "INTEGER")),
    "usage": (("usage_start_time", "TIMESTAMP"), ("usage_end_time", "TIMESTAMP"), ("sku_name", "STRING"),
              ("usage_unit", "STRING"), ("usage_quantity", "DOUBLE"), ("cluster_id", "STRING"),
              ("endpoint_name", "STRING")),
    "list_prices": (("sku_name", "STRING"), ("usage_unit", "STRING"), ("price_start_time", "TIMESTAMP"),
                    ("price_end_time", "TIMESTAMP"), ("price", "DOUBLE")),
    "requests": (("request_time", "TIMESTAMP"), ("cluster_id", "STRING"), ("latency_ms", "DOUBLE"),
                 ("status_code", "INTEGER")),
    "serving_requests": (("endpoint_name", "STRING"), ("request_time", "TIMESTAMP"), ("status_code", "INTEGER"),
                         ("duration_ms", "DOUBLE"), ("sampling_fraction", "DOUBLE")),
}


#: The format of an input file that holds nothing at all (0 bytes).
EMPTY = "empty"


@dataclass(frozen=True)
class Input:
    name: str
    path: Path  #: the file, or the directory of files
    reader: str  #: a DuckDB table expression reading it
    fmt: str  #: parquet | csv | json | jsonl | empty


def sql_string(text: str) -> str:
    """A SQL string literal (the one quoting of the advise SQL: inputs' paths, the plan's names, generated rows)."""
    return "'" + text.replace("'", "''") + "'"


def find_inputs(usage_dir: str) -> dict[str, Input]:
    """The inputs present in ``usage_dir`` (raises `InputError` when it is not a directory or holds none)."""
    root = Path(usage_dir)
    if not root.is_dir():
        raise InputError.single(usage_dir, "--usage", "is not a directory.",
                                "pass the directory of the exports (clusters.csv, gpu_timeline/, ...).")
    found: dict[str, Input] = {}
    for name in COLUMNS:
        exts = ("parquet", "csv", "json") if name == "clusters" else \
            ("jsonl", "json") if name == "cluster_events" else ("parquet", "csv")
        for ext in exts:
            file = root / f"{name}.{ext}"
            if file.is_file():
                # a 0-byte file is an input without rows (the analysis notes what it could not judge)
                found[name] = Input(name, file, "", EMPTY) if file.stat().st_size == 0 else _input(name, file, ext)
                break
        else:
            folder = root / name
            if folder.is_dir():
                for ext in ("parquet", "csv", "jsonl"):
                    if next(folder.rglob(f"*.{ext}"), None) is not None:
                        found[name] = _input(name, folder, ext, glob=f"{folder}/**/*.{ext}")
                        break
    if not found:
        raise InputError.single(usage_dir, "--usage", "holds none of the inputs.",
                                f"export {', '.join(f'{n}.csv' for n in COLUMNS)} (or .parquet) into it; the README's "
                                f"advise section names their columns.")
    return found


def _input(name: str, path: Path, fmt: str, glob: str | None = None) -> Input:
    where = sql_string(glob or str(path))
    if fmt == "parquet":
        reader = f"read_parquet({where}, union_by_name = true)"
    elif fmt == "csv":
        reader = f"read_csv({where}, header = true, union_by_name = true, auto_detect = true)"
    elif fmt == "jsonl" and name == "cluster_events":
        reader = (f"read_json({where}, format = 'newline_delimited', columns = {{cluster_id: 'VARCHAR', "
                  f"timestamp: 'VARCHAR', type: 'VARCHAR', details: 'JSON'}})")
    else:
        reader = ""  # clusters.json, cluster_events.json: API responses, read in Python (small), see `api_rows`
    return Input(name, path, reader, fmt)


def _ts(types: Mapping[str, str], column: str, dialect: str = "duckdb") -> str:
    """A time column as a UTC TIMESTAMP. A number is epoch milliseconds (as the Databricks APIs write times), in every
    input. DuckDB: an instant (Parquet's TIMESTAMPTZ, CSV's ``...+00``) is taken by its epoch microseconds: a cast
    through the time-zone library costs more than the whole scan (bench 2c). Spark: a cast (the session is in UTC;
    ISO text with or without its offset)."""
    kind = types.get(column, "")
    numeric = kind.upper().split("(")[0] in ("BIGINT", "INTEGER", "HUGEINT", "DOUBLE", "DECIMAL", "LONG",
                                             "INT", "FLOAT")
    if numeric:  # epoch milliseconds, as the Databricks APIs write times
        return (f"make_timestamp(CAST({column} AS BIGINT) * 1000)" if dialect == "duckdb" else
                f"timestamp_millis(CAST({column} AS BIGINT))")
    if dialect != "duckdb":
        return f"CAST({column} AS TIMESTAMP)"
    if kind == "TIMESTAMP WITH TIME ZONE":
        return f"make_timestamp(epoch_us({column}))"
    if kind.startswith("TIMESTAMP"):
        return f"CAST({column} AS TIMESTAMP)"
    return f"make_timestamp(epoch_us(CAST({column} AS TIMESTAMPTZ)))"


def sniffed(con: Any, inp: Input) -> Input:
    """A single CSV file read with the options DuckDB's sniffer finds in it, found once: with ``auto_detect`` a view
    sniffs the file again at every statement that reads it (about 45 ms a read for a small export, 2 ms once
    sniffed: much of a small advise run). The sniffer reads the same sample either way, so the columns, their types
    and the errors are the same. A directory of files, or a file the sniffer cannot read, keeps auto-detection
    (its errors are reported where the file is read)."""
    duckdb = load_duckdb()

    if inp.fmt != "csv" or not inp.path.is_file():
        return inp
    try:
        found = con.execute(f"SELECT Prompt FROM sniff_csv({sql_string(str(inp.path))})").fetchone()
    except duckdb.Error:
        return inp
    prompt = str(found[0]).strip().rstrip(";") if found else ""
    return replace(inp, reader=prompt.removeprefix("FROM ")) if prompt.startswith("FROM read_csv(") else inp


def column_types(con: Any, inp: Input) -> dict[str, str]:
    """The columns of an input and their DuckDB types; `InputError` when it cannot be read or lacks a column."""
    duckdb = load_duckdb()

    try:
        described = con.execute(f"DESCRIBE SELECT * FROM {inp.reader}").fetchall()
    except duckdb.Error as exc:
        raise InputError.single(str(inp.path), inp.name, f"cannot be read: {clip(str(exc).splitlines()[0])}",
                                "export it again as CSV with a header row, or as Parquet.") from None
    types = {str(row[0]): str(row[1]) for row in described}
    check_columns(inp, types)
    return types


def check_columns(inp: Input, types: Mapping[str, str]) -> None:
    """`InputError` when an input (its columns -> types, as any engine read them) lacks a column the analysis reads."""
    missing = [c for c in COLUMNS[inp.name] if c not in types]
    if inp.name == "usage" and "cluster_id" not in types and "usage_metadata" not in types:
        missing.append("usage_metadata.cluster_id (or a flattened cluster_id)")
    if inp.name == "list_prices" and "pricing" not in types and "pricing_default" not in types:
        missing.append("pricing.default (or a flattened pricing_default)")
    if missing:
        raise InputError.single(str(inp.path), inp.name, f"lacks the column(s) {', '.join(missing)}.",
                                f"export {inp.name} with the columns of the README's advise inputs table: "
                                f"{', '.join(COLUMNS[inp.name])}.")


def _field(types: Mapping[str, str], column: str, key: str, dialect: str = "duckdb") -> str:
    """``column.key`` whatever the export made of the column: a struct, a map, or a JSON string."""
    kind = types.get(column, "").lower()
    if kind.startswith("struct"):
        return f"CAST({column}.`{key}` AS STRING)" if dialect != "duckdb" else f"CAST({column}.\"{key}\" AS STRING)"
    if kind.startswith("map"):
        return f"CAST({column}['{key}'] AS STRING)" if dialect != "duckdb" else \
            f"CAST(map_extract_value({column}, '{key}') AS STRING)"
    return _json(f"CAST({column} AS STRING)", f"$.{key}", dialect)


def _json(text: str, path: str, dialect: str) -> str:
    """The text at a JSON path of a JSON string (None when absent)."""
    return f"get_json_object({text}, '{path}')" if dialect != "duckdb" else f"json_extract_string({text}, '{path}')"


def _select(name: str, types: Mapping[str, str], dialect: str, src: str, **own: str) -> str:
    """The SELECT of input ``name``'s relation (`RELATIONS`) from ``src``: each column cast to its type, a time read
    by `_ts`, or the expression ``own`` gives it."""
    def column(column: str, sql_type: str) -> str:
        if column in own:
            return own[column]
        return _ts(types, column, dialect) if sql_type == "TIMESTAMP" else f"CAST({column} AS {sql_type})"

    return f"SELECT {', '.join(f'{column(c, t)} AS {c}' for c, t in RELATIONS[name])} FROM {src}"


def _clusters_view(types: Mapping[str, str], dialect: str, src: str) -> str:
    def tag(key: str) -> str:
        return _field(types, "tags", key, dialect)

    return _select("clusters", types, dialect, src, tag_stack=tag(STACK_TAG), tag_role=tag(ROLE_TAG),
                   tag_workload=tag(WORKLOAD_TAG))


#: An event's time, per dialect: epoch milliseconds as the API writes them, or an ISO 8601 time as a SQL export
#: writes it.
_EVENT_TIME: Mapping[str, str] = {
    "duckdb": "CAST(CASE WHEN TRY_CAST(timestamp AS DOUBLE) IS NOT NULL "
              "THEN to_timestamp(CAST(timestamp AS DOUBLE) / 1000) "
              "ELSE CAST(CAST(timestamp AS VARCHAR) AS TIMESTAMPTZ) END AS TIMESTAMP)",
    "databricks": "CASE WHEN TRY_CAST(timestamp AS DOUBLE) IS NOT NULL "
                  "THEN timestamp_millis(CAST(TRY_CAST(timestamp AS DOUBLE) AS BIGINT)) "
                  "ELSE CAST(CAST(timestamp AS STRING) AS TIMESTAMP) END",
}


def _dialect_choice(table: Mapping[str, str], dialect: str) -> str:
    """``table``'s entry for ``dialect``: DuckDB's, or Spark's for any other dialect."""
    return table["duckdb"] if dialect == "duckdb" else table["databricks"]


def _cluster_events_view(types: Mapping[str, str], dialect: str, src: str) -> str:
    details = _dialect_choice({"duckdb": "details", "databricks": "CAST(details AS STRING)"}, dialect)
    return _select("cluster_events", types, dialect, src, at=_dialect_choice(_EVENT_TIME, dialect),
                   reason_code=_json(details, '$.reason.code', dialect),
                   current_workers=f"TRY_CAST({_json(details, '$.current_num_workers', dialect)} AS INTEGER)",
                   target_workers=f"TRY_CAST({_json(details, '$.target_num_workers', dialect)} AS INTEGER)")


def _usage_cluster(types: Mapping[str, str], dialect: str) -> str:
    """usage's cluster id: a flattened ``cluster_id`` column, else ``usage_metadata.cluster_id``."""
    if "cluster_id" in types:
        return "CAST(cluster_id AS STRING)"
    return _field(types, "usage_metadata", "cluster_id", dialect)


def _usage_endpoint(types: Mapping[str, str], dialect: str) -> str:
    """usage's serving endpoint: a serving endpoint's rows name it in usage_metadata.endpoint_name (optional: clusters
    only without it); a flattened ``endpoint_name`` column, else the metadata's key when the metadata can hold it (a
    struct that declares it, or a map / JSON string), else NULL."""
    if "endpoint_name" in types:
        return "CAST(endpoint_name AS STRING)"
    meta = types.get("usage_metadata", "").lower()
    if meta and ("endpoint_name" in meta or not meta.startswith("struct")):
        return _field(types, "usage_metadata", "endpoint_name", dialect)
    return "CAST(NULL AS STRING)"


def _usage_view(types: Mapping[str, str], dialect: str, src: str) -> str:
    return _select("usage", types, dialect, src, cluster_id=_usage_cluster(types, dialect),
                   endpoint_name=_usage_endpoint(types, dialect))


def _list_prices_view(types: Mapping[str, str], dialect: str, src: str) -> str:
    price = "pricing_default" if "pricing_default" in types else _field(types, "pricing", "default", dialect)
    return _select("list_prices", types, dialect, f"{src} WHERE coalesce(currency_code, 'USD') = 'USD'",
                   price=f"CAST({price} AS DOUBLE)")


def _serving_requests_view(types: Mapping[str, str], dialect: str, src: str) -> str:
    # a sampled table logs a share of the requests: each row stands for 1 / sampling_fraction of them
    sampled = ("coalesce(CAST(sampling_fraction AS DOUBLE), CAST(1 AS DOUBLE))" if "sampling_fraction" in types
               else "CAST(1 AS DOUBLE)")
    return _select("serving_requests", types, dialect, src, duration_ms="CAST(execution_duration_ms AS DOUBLE)",
                   sampling_fraction=sampled)


#: The SELECT that normalizes each input (its column types, the dialect, the relation it reads); any other name
#: reads as ``requests``.
_VIEWS: Mapping[str, Callable[[Mapping[str, str], str, str], str]] = {
    "clusters": _clusters_view, "node_timeline": partial(_select, "node_timeline"),
    "gpu_timeline": partial(_select, "gpu_timeline"), "cluster_events": _cluster_events_view, "usage": _usage_view,
    "list_prices": _list_prices_view, "serving_requests": _serving_requests_view,
    "requests": partial(_select, "requests"),
}


def view_sql(name: str, inp: Input | None, types: Mapping[str, str], dialect: str = "duckdb",
             source: str | None = None) -> str:
    """``CREATE VIEW <name>`` normalizing one input (or an empty relation when it is absent), in ``dialect``
    (``duckdb``, or ``databricks`` for Spark); ``source`` is the relation to read (default: the input's reader)."""
    head = f"CREATE OR REPLACE TEMP VIEW {name} AS "
    if inp is None:
        return head + f"SELECT {', '.join(f'CAST(NULL AS {t}) AS {c}' for c, t in RELATIONS[name])} WHERE false"
    src = source or inp.reader or f"{name}_json"
    return head + _VIEWS.get(name, _VIEWS["requests"])(types, dialect, src)


#: The table an API response is loaded into, and its columns (all text; the view casts them).
API_TABLES: Mapping[str, tuple[str, ...]] = {"clusters": ("cluster_id", "cluster_name", "tags"),
                                             "cluster_events": ("cluster_id", "timestamp", "type", "details")}


def api_rows(name: str, path: Path) -> list[tuple[str, ...]]:
    """The rows of an API response (`API_TABLES`)."""
    return clusters_rows(path) if name == "clusters" else events_rows(path)


def events_rows(path: Path) -> list[tuple[str, ...]]:
    """``cluster_events.json``: the Clusters events API response (``{"events": [...]}``, pages one after another) or a
    list of events -> (cluster_id, timestamp, type, details as JSON)."""
    items: list[Any] = []
    for doc in parse_json_stream(read_text(path, "cluster events"), str(path)):
        items += doc["events"] if isinstance(doc, dict) and isinstance(doc.get("events"), list) else \
            doc if isinstance(doc, list) else [doc]
    rows: list[tuple[str, ...]] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not item.get("cluster_id") or item.get("timestamp") is None:
            raise InputError.single(str(path), f"events[{i}]", "lacks cluster_id or timestamp.",
                                    "export the Clusters events API response, or one event per line.")
        rows.append((str(item["cluster_id"]), str(item["timestamp"]), str(item.get("type") or ""),
                     json.dumps(item.get("details") or {})))
    return rows


def clusters_rows(path: Path) -> list[tuple[str, ...]]:
    """``clusters.json``, read by the project's one reader of workspace exports
    (`dbx_ai_infra.sources.exports.read_export_file`: a cluster, a list, ``{"clusters": [...]}``, pages one after
    another) -> (cluster_id, cluster_name, tags as JSON) of each cluster in it."""
    rows: list[tuple[str, ...]] = []
    for item in read_export_file(path, "clusters"):
        if item.resource_type != CLUSTER:
            continue
        props = item.props
        if not props.get("cluster_id"):
            raise InputError.single(str(path), f"{item.label or item.name}.cluster_id", "is missing.",
                                    "export the Clusters API list response (databricks clusters list -o json).")
        tags = {**(props.get("default_tags") or {}), **(props.get("custom_tags") or {}), **(props.get("tags") or {})}
        rows.append((str(props["cluster_id"]), str(props.get("cluster_name") or ""), json.dumps(tags)))
    return rows
