"""Where ``advise`` runs its SQL: the engines of ``--engine`` (a contract: ``duckdb``, ``spark``, ``databricks``).

Each engine loads the inputs as the normalized relations the analysis reads (`sources.COLUMNS`, `sources.view_sql`),
then runs the same rendered statements (``sql/stats.sql.j2``, the finding SELECTs) and fetches rows as dicts of
Python values (a time as a naive UTC ``datetime``, whatever the engine):

- ``duckdb`` (default): one process over the exported files, read in place (`analysis.run_local`).
- ``spark``: a Spark session, local (``--spark-master local[N]``) or remote over Spark Connect (``--remote
  sc://HOST:PORT``); Spark reads the exported files itself (the paths must be readable where Spark runs). The SQL
  is the Databricks dialect, which Apache Spark 4.0 runs as written (no ``QUALIFY``, exact percentiles).
- ``databricks``: Databricks Connect (``--profile``), reading the system tables directly (the ``--emit-sql``
  sources), no export. databricks-connect replaces pyspark in its environment, so it is installed apart
  (``requirements-databricks.txt``) and CI cannot test it (no workspace).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from dbx_ai_infra.advise.sources import (
    API_TABLES,
    COLUMNS,
    EMPTY,
    Input,
    api_rows,
    check_columns,
    column_types,
    load_duckdb,
    load_pyspark,
    sniffed,
    view_sql,
)
from dbx_ai_infra.dbxtypes.errors import InputError, clip, cut
from dbx_ai_infra.engine.interrupts import line_to, scratch_dir, signalled

#: ``--engine`` values; the first is the default.
ENGINES = ("duckdb", "spark", "databricks")
#: The SQL dialect each engine's statements are rendered in (`analysis.render`).
DIALECT = {"duckdb": "duckdb", "spark": "databricks", "databricks": "databricks"}
SPARK_REQUIREMENTS = "requirements-spark.txt"
QUIET_LOG4J = Path(__file__).parent / "sql" / "log4j2-quiet.properties"
DATABRICKS_REQUIREMENTS = "requirements-databricks.txt"


class DuckDBEngine:
    """The analysis in one DuckDB process over the exported files, read in place."""

    dialect = "duckdb"

    def __init__(self, con: Any) -> None:
        self.con = con
        self.found: Mapping[str, Input] = {}

    def execute(self, sql: str) -> None:
        self._run(sql)

    def fetch(self, sql: str) -> list[dict[str, Any]]:
        cursor = self._run(sql)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _run(self, sql: str, only: Input | None = None) -> Any:
        """One statement; a value an input holds that cannot be read is `InputError` naming the guilty file (DuckDB
        says which, else each input the statement reads is tried alone), its line and column, and nothing of the
        engine (its SQL, its advice to change the reader's options)."""
        duckdb = load_duckdb()

        try:
            return self.con.execute(sql)
        except duckdb.Error as exc:
            if isinstance(exc, duckdb.InterruptException):
                raise KeyboardInterrupt from None
            if not isinstance(exc, (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.IOException)) \
                    and only is None:
                # DuckDB's own errors for a file damaged inside (a Parquet file cut in its middle: "don't know what
                # type", a Thrift "Invalid data") come as plain errors, at the first query that scans that far: an
                # input that cannot be read whole is named; else the error is the statement's own
                damaged = self._damaged(sql)
                if damaged is None:
                    raise
                raise damaged from None
            if isinstance(exc, (duckdb.IOException, duckdb.InvalidInputException)) and only is None:
                # a Parquet file's data that does not decode ("Failed to read file ...: Snappy decompression failure"
                # where a file was cut in its middle) comes from the first query that reads that column: the file is
                # damaged (a value of a Parquet file is typed: one our views cannot convert is a ConversionException)
                damaged = self._damaged(sql, formats=("parquet",))
                if damaged is not None:
                    raise damaged from None
            raise self._read_error(exc, sql, only) from None

    def _damaged(self, sql: str, formats: tuple[str, ...] | None = None) -> InputError | None:
        """The first input ``sql`` reads (of ``formats``, default any) that cannot be read whole, as `InputError`
        naming its file; None when each reads whole."""
        read = self._inputs_read_by(sql)
        for name, inp in self.found.items():
            if inp is None or inp.fmt == EMPTY or (formats and inp.fmt not in formats) or name not in read or \
                    self._reads_whole(name):
                continue
            reason = self._whole_error(name)
            return InputError.single(str(inp.path), "", f"cannot be read: the file is damaged ({inp.fmt} that does "
                                     f"not decode{f': {reason}' if reason else ''}).",
                                     f"export {inp.name} again ({inp.fmt}).")
        return None

    def _inputs_read_by(self, sql: str) -> set[str]:
        """The inputs a statement reads: those it names, and those named by the views it reads, through views of
        views (``stack_requests`` reads ``requests`` without its readers naming it); on the path of an error only."""
        views = dict(self.con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal").fetchall())
        texts, seen = [sql], set()
        while texts:
            text = texts.pop()
            for view, body in views.items():
                if view not in seen and re.search(rf"\b{view}\b", text):
                    seen.add(view)
                    texts.append(body)
        return {name for name in self.found if name in seen or re.search(rf"\b{name}\b", sql)}

    def _whole_error(self, name: str) -> str:
        """What reading input ``name`` whole says, short (the file named apart)."""
        duckdb = load_duckdb()

        try:
            self.con.execute(f"SELECT count(*) FROM (SELECT * FROM {name}) AS probe WHERE "
                             f"hash(COLUMNS(*)) IS NOT NULL").fetchall()
        except duckdb.Error as exc:
            inp = self.found[name]
            return _duckdb_problem(exc, [str(inp.path)]).removeprefix("Error: ")
        return ""

    def _read_error(self, exc: BaseException, sql: str, only: Input | None) -> InputError:
        text = str(exc)
        named = re.search(r"^\s*file = (.+)$", text, re.M)
        guilty = [inp for inp in ([only] if only else self.found.values()) if inp is not None and (
            named and named.group(1).strip().startswith(str(inp.path)) or str(inp.path) in text)]
        if not guilty:  # DuckDB did not say: the inputs this statement reads, each tried alone
            read = self._inputs_read_by(sql)
            guilty = [inp for name, inp in self.found.items() if name in read and not self._reads_whole(name)]
        where = named.group(1).strip() if named else ", ".join(str(i.path) for i in guilty) or "the exports"
        line = re.search(r"CSV Error on Line: (\d+)|\bin line (\d+)", text)
        column = re.search(r'converting column "([^"]+)"', text)
        name = column.group(1) if column else _first_missing_column(where, text)
        number = (line.group(1) or line.group(2)) if line else _first_bad_line(where) if "CSV" in text else None
        field = ", ".join(part for part in (f"line {number}" if number else "",
                                            f"column {name}" if name else "") if part)
        return InputError.single(where, field, f"holds a value that cannot be read: {_duckdb_problem(exc, [where])}.",
                                 "fix or drop that row (numbers plain, without units; true or false; timestamps ISO "
                                 "8601 or epoch milliseconds), or export the file again.")

    def _reads_whole(self, name: str) -> bool:
        """True when the view of input ``name`` reads every row and column without an error (a probe, on the path of
        an error only)."""
        duckdb = load_duckdb()

        try:
            self.con.execute(f"SELECT count(*) FROM (SELECT * FROM {name}) AS probe WHERE "
                             f"hash(COLUMNS(*)) IS NOT NULL").fetchall()
            return True
        except duckdb.Error:
            return False

    def load_sources(self, found: Mapping[str, Input]) -> None:
        """A view per input over its files (an API response loaded into a table first)."""
        self.found = found
        for name in COLUMNS:
            inp = found.get(name)
            types: dict[str, str] = {}
            if inp is not None and inp.fmt == EMPTY:
                self.con.execute(view_sql(name, None, types))
                continue
            if inp is not None and not inp.reader:  # an API response: clusters.json, cluster_events.json
                columns = API_TABLES[name]
                self.con.execute(f"CREATE TEMP TABLE {name}_json ({', '.join(f'{c} VARCHAR' for c in columns)})")
                loaded = api_rows(name, inp.path)
                if loaded:
                    self.con.executemany(f"INSERT INTO {name}_json VALUES ({', '.join('?' for _ in columns)})",
                                         loaded)
                types = dict.fromkeys(columns, "VARCHAR")
            elif inp is not None:
                inp = self._readable(inp)
                types = column_types(self.con, inp)
            self.con.execute(view_sql(name, inp, types))

    def _readable(self, inp: Input) -> Input:
        """The input with its columns sniffed; a file DuckDB cannot read at all (a corrupt Parquet file, binary
        garbage) is `InputError` naming it."""
        duckdb = load_duckdb()

        try:
            return sniffed(self.con, inp)
        except duckdb.Error as exc:
            raise InputError.single(str(inp.path), "", f"cannot be read: {_duckdb_problem(exc, [str(inp.path)])}",
                                    f"export {inp.name} again ({inp.fmt}).") from None


@contextmanager
def duckdb_engine(memory_limit: str | None = None) -> Iterator[DuckDBEngine]:
    duckdb = load_duckdb()

    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        # a Parquet file's footer (its row groups' statistics) read once per run, not by every statement that reads
        # the file: about 4 ms a statement on a month of gpu_timeline (171 row groups), which the plausibility
        # bounds, the sniffing and the statistics read several times (issue 53, item 3); the cache lives and dies
        # with this connection, over files that do not change during a run
        con.execute("SET parquet_metadata_cache = true")
        if memory_limit:
            con.execute(f"SET memory_limit = '{memory_limit}'")
        yield DuckDBEngine(con)
    finally:
        con.close()


def _first_bad_line(path: str) -> str | None:
    """Where DuckDB did not say: the first line of a CSV file that is not UTF-8 text, holds control bytes, or has
    another number of commas than the header (a reading of the file on the path of an error only)."""
    try:
        with open(path, "rb") as handle:
            header = handle.readline()
            commas = header.count(b",")
            for number, raw in enumerate(handle, start=2):
                try:
                    text = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError:
                    return str(number)
                if any(ord(c) < 32 and c != "\t" for c in text) or ('"' not in text and text.count(",") != commas):
                    return str(number)
    except OSError:
        return None
    return None


def _first_missing_column(path: str, text: str) -> str | None:
    """For a CSV row with fewer columns than the header: the first column it lacks (the header read from ``path``)."""
    found = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
    if not found:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            header = handle.readline().strip().split(",")
    except OSError:
        return None
    index = int(found.group(2))
    return header[index].strip('"') if index < len(header) else None


def _duckdb_problem(exc: BaseException, paths: list[str]) -> str:
    """DuckDB's message, short: the line it names first, without the file (named already) or its advice to change
    the reader's options (which the user cannot pass), quoted input cut."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    reason = re.search(r"Could not convert [^.]*?to '?\w+'?", text)
    if reason:  # a CSV value of the wrong type: just what DuckDB could not convert (the line and column named apart)
        return cut(reason.group(0), 240)
    ours = _csv_problem(text)
    if ours:
        return ours
    text = re.sub(r"\s*Possible fixes:.*$", "", text)  # the reader's options, which the user cannot pass
    text = re.sub(r"\s*\bLINE \d+:.*$", "", text)  # the statement's text that DuckDB quotes: ours, not the user's
    text = re.sub(r"\s*\bTry [^.]*(\.|$)", "", text)
    text = text.removeprefix("Invalid Input Error: ").removeprefix("Conversion Error: ")
    for path in paths:
        text = text.replace(f' in file "{path}"', "").replace(f'"{path}"', "the file")
    line = re.search(r"\bin line (\d+)", text)
    if line:
        text = f"line {line.group(1)}: " + re.sub(r",? ?\bin line \d+:?", "", text).strip(" :,")
    return cut(text, 240)


#: What DuckDB's CSV reader says of a row it cannot read, in our words (its text names its own options to change).
_CSV_PROBLEMS = (
    (r"Expected Number of Columns: (\d+) Found: (\d+)",
     lambda m: f"the row has {m.group(2)} column(s) where the header has {m.group(1)} (binary data, or a line cut "
               f"short or joined to the next)"),
    (r"Invalid unicode|byte sequence mismatch", lambda m: "the row holds bytes that are not UTF-8 text (binary data?)"),
    (r"unterminated quote", lambda m: "the row opens a quote it never closes"),
    (r"Maximum line size", lambda m: "the line is longer than any row could be (binary data?)"),
    (r"state machine reached an invalid state", lambda m: "the row is not CSV (binary data?)"),
)


def _csv_problem(text: str) -> str | None:
    """A CSV row DuckDB cannot read, said in our words; None for any other error."""
    if "CSV Error" not in text and "CSV" not in text[:80]:
        return None
    for pattern, say in _CSV_PROBLEMS:
        found = re.search(pattern, text)
        if found:
            return say(found)
    return None


class Engine(Protocol):
    dialect: str

    def execute(self, sql: str) -> None: ...

    def fetch(self, sql: str) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class SparkOptions:
    """How to reach Spark: ``master`` (classic, ``local[2]``) or ``remote`` (Spark Connect, ``sc://host:15002``, or
    ``local[N]`` for a Spark Connect server pyspark starts itself)."""

    master: str = "local[2]"
    remote: str | None = None


def _spark_missing(exc: ImportError) -> InputError:
    return InputError.single("--engine spark", "--engine", f"needs pyspark, which is not installed ({exc.name}).",
                             f"install it: pip install -r {SPARK_REQUIREMENTS} (make test does), and Java 17 or "
                             f"later on PATH.")


@contextmanager
def spark_session(options: SparkOptions) -> Iterator[Any]:
    """A Spark session in UTC, quiet, with few shuffle partitions (the analysis' relations are small per workload);
    stopped on exit unless it was running before."""
    try:
        SparkSession = load_pyspark().sql.SparkSession  # noqa: N806 - the class, named as pyspark names it
    except ImportError as exc:
        raise _spark_missing(exc) from None
    for name in ("py4j", "pyspark"):  # their tracebacks (a broken call logged at ERROR) never reach the user
        logging.getLogger(name).setLevel(logging.CRITICAL)
    builder = SparkSession.builder.appName("stackplan-advise")
    builder = builder.remote(options.remote) if options.remote else builder.master(options.master)
    conf = {"spark.sql.session.timeZone": "UTC", "spark.sql.shuffle.partitions": "4",
            "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    if not options.remote:  # a local JVM: its log off (pyspark passes these to spark-submit as it starts it)
        quiet = f"-Dlog4j.configurationFile=file:{QUIET_LOG4J}"
        conf.update({"spark.driver.extraJavaOptions": quiet, "spark.executor.extraJavaOptions": quiet})
    for key, value in conf.items():
        builder = builder.config(key, value)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers' Python: this one
    active = SparkSession.getActiveSession()
    with scratch_dir("stackplan-spark-") as scratch:  # removed when the run is interrupted too
        log = Path(scratch) / "jvm.log"
        try:
            # the JVM pyspark starts inherits fd 2 (its banner and warnings go to the log), pyspark's own temporary
            # files go to the scratch directory (an interrupt removes them with it)
            with _stderr_to(log), _temporary_files_in(scratch):
                spark = _off_the_main_thread(builder.getOrCreate)
        except Exception as exc:  # noqa: BLE001 - the JVM, the network or the server: named in the message
            where = f"Spark Connect at {options.remote}" if options.remote else f"Spark master {options.master}"
            said = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][-1:]
            raise InputError.single("--engine spark", "--remote" if options.remote else "--spark-master",
                                    f"cannot start a session on {where}: "
                                    f"{clip(' '.join([str(exc).splitlines()[0], *said]))}",
                                    "check that Java 17+ is on PATH (local) or that the server listens (remote).") \
                from None
        try:
            yield spark
        finally:
            if active is None and not options.remote and not signalled():  # interrupted: the process ends now
                spark.stop()


def _off_the_main_thread(start: Callable[[], Any]) -> Any:
    """``start()`` (the session's start) run in a helper thread while the main thread waits for it.

    pyspark's SparkContext puts its own SIGINT handler in place when it starts on the main thread (pyspark
    ``core/context.py``: it calls ``cancelAllJobs`` over py4j, then raises KeyboardInterrupt). A Ctrl-C as the session
    started (9-24 s into a run) found it: its call went out on the py4j connection whose call was under way, so the
    exit waited for the JVM's answer (11-18 s) or the call broke into "cannot start a session" (exit 2). Started off
    the main thread, pyspark leaves the run's handler (`dbx_ai_infra.engine.interrupts`) in place, and the main thread,
    waiting on a lock (which a signal interrupts), runs it at once: exit 130, the JVM ending at its stdin's end."""
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["session"] = start()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread as it was raised
            done["error"] = exc

    helper = threading.Thread(target=run, name="stackplan-spark-start", daemon=True)
    helper.start()
    helper.join()
    if "error" in done:
        raise done["error"]
    return done["session"]


@contextmanager
def _temporary_files_in(directory: Path) -> Iterator[None]:
    """``tempfile``'s default directory is ``directory`` for the block (pyspark's gateway writes its connection file
    in a directory of its own there, removed in a ``finally`` that an interrupted run never reaches)."""
    before, tempfile.tempdir = tempfile.tempdir, str(directory)
    try:
        yield
    finally:
        tempfile.tempdir = before


@contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """File descriptor 2 pointed at ``path`` for the block (what a child process started there inherits), then
    restored; an interrupted run's line still goes to the user's stderr (`line_to`)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with path.open("ab") as sink, line_to(saved):
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


_VIEW = re.compile(r"^\s*(?:--[^\n]*\n\s*)*CREATE OR REPLACE TEMPORARY VIEW (\w+) AS", re.I)


class SparkEngine:
    """The analysis on a Spark session (classic or Spark Connect): Databricks-dialect SQL as written."""

    dialect = "databricks"

    def __init__(self, spark: Any, cache: bool = True) -> None:
        self.spark = spark
        self.cache = cache

    def execute(self, sql: str) -> None:
        """Run a statement; a temporary view the analysis creates is cached at once (as DuckDB's temp tables are
        materialized): every later view and finding reads it, and a lazy view would be computed again each time."""
        self._sql(sql)
        made = _VIEW.match(sql)
        if made and self.cache:
            self._sql(f"CACHE TABLE {made.group(1)}")

    def fetch(self, sql: str) -> list[dict[str, Any]]:
        pyspark = load_pyspark()
        f, types = pyspark.sql.functions, pyspark.sql.types
        TimestampNTZType, TimestampType = types.TimestampNTZType, types.TimestampType  # noqa: N806

        df = self._sql(sql)
        # a time as ISO text in the session's time zone (UTC), then a naive datetime: pyspark would convert it to
        # the Python process' local time zone instead
        times = [s.name for s in df.schema.fields if isinstance(s.dataType, TimestampType | TimestampNTZType)]
        if times:
            df = df.select(*[f.date_format(f.col(c), "yyyy-MM-dd'T'HH:mm:ss.SSSSSS").alias(c) if c in times
                             else f.col(c) for c in df.columns])
        rows = [row.asDict() for row in df.collect()]
        for row in rows:
            for c in times:
                row[c] = dt.datetime.fromisoformat(row[c]) if row[c] is not None else None
        return rows

    def _sql(self, sql: str) -> Any:
        try:
            return self.spark.sql(sql)
        except Exception as exc:  # noqa: BLE001 - Spark's analysis and execution errors share no base class here
            if signalled():  # the call broke because the run was interrupted: an interrupt, not the inputs' fault
                raise KeyboardInterrupt from None
            text = " ".join(str(exc).split())
            raise InputError.single("the exports", "", f"Spark could not run the analysis: {clip(text)}",
                                    "check the inputs' columns and values (the README's advise table).") from None

    # ---- sources: Spark reads the exported files itself --------------------------------------------------------

    def load_sources(self, found: Mapping[str, Input]) -> None:
        for name in COLUMNS:
            inp = found.get(name)
            if inp is None or inp.fmt == EMPTY:
                self.execute(view_sql(name, None, {}, dialect=self.dialect))
                continue
            raw = self._raw_frame(inp)
            types = {field.name: field.dataType.simpleString() for field in raw.schema.fields}
            check_columns(inp, types)
            raw.createOrReplaceTempView(f"{name}_raw")
            self.execute(view_sql(name, inp, types, dialect=self.dialect, source=f"{name}_raw"))

    def _raw_frame(self, inp: Input) -> Any:
        types = load_pyspark().sql.types
        StringType, StructField, StructType = types.StringType, types.StructField, types.StructType  # noqa: N806

        reader = self.spark.read
        path = str(inp.path)
        if Path(path).is_dir():
            reader = reader.option("recursiveFileLookup", "true").option("pathGlobFilter", f"*.{inp.fmt}")
        try:
            if inp.fmt == "parquet":
                return reader.option("mergeSchema", "true").parquet(path)
            if inp.fmt == "csv":  # every column as text: the normalizing view casts, as for DuckDB
                return reader.option("header", "true").option("escape", '"').option("multiLine", "true") \
                    .option("mode", "FAILFAST").csv(path)
            if inp.fmt == "jsonl":  # cluster events: details kept as its JSON text
                schema = StructType([StructField(c, StringType()) for c in API_TABLES["cluster_events"]])
                return reader.schema(schema).option("mode", "FAILFAST").json(path)
        except Exception as exc:  # noqa: BLE001 - an unreadable file
            raise InputError.single(path, inp.name, f"cannot be read: {clip(' '.join(str(exc).split()))}",
                                    "export it again as CSV with a header row, or as Parquet.") from None
        # an API response (clusters.json, cluster_events.json): small, read in Python
        columns = API_TABLES[inp.name]
        schema = StructType([StructField(c, StringType()) for c in columns])
        return self.spark.createDataFrame(api_rows(inp.name, inp.path), schema)


@contextmanager
def databricks_session(profile: str | None) -> Iterator[Any]:
    """A Databricks Connect session (``--engine databricks``): the profile's workspace and its cluster or serverless
    compute (Databricks Connect docs, "Configure a connection": ``DatabricksSession.builder.profile(...)``)."""
    try:
        from databricks.connect import DatabricksSession  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise InputError.single("--engine databricks", "--engine", "needs databricks-connect, which is not "
                                "installed here.", f"create a separate environment (databricks-connect replaces "
                                f"pyspark): python -m venv .venv-dbc && .venv-dbc/bin/pip install -r requirements.txt "
                                f"-r {DATABRICKS_REQUIREMENTS}, then run advise with that Python.") from None
    builder = DatabricksSession.builder
    if profile:
        builder = builder.profile(profile)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 - authentication, the network, the compute
        raise InputError.single("--engine databricks", "--profile", f"cannot connect: "
                                f"{clip(' '.join(str(exc).split()))}", "check the profile's host, token and "
                                "cluster_id or serverless_compute_id (databricks auth describe).") from None
    yield spark
