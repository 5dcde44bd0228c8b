"""``python tests/pause_at.py POINT ARGS...``: ``python -m stackplan ARGS...`` that stops at POINT, says so on stderr
(`READY`), and waits there until a signal ends it. The interrupt tests signal it only after that line, so what they
check never depends on how fast the machine is (a sleep before the signal did: on a loaded machine the signal came
before or after the point it meant).

POINT is where a user's Ctrl-C may land:
- ``import``: while the provider SDK is being imported (the first seconds of a run);
- ``program``: inside the Pulumi program under the mock runtime, as it registers a resource;
- ``write``: with the output's temporary file written, before it is renamed into place;
- ``body``: in the program's own code (not an RPC), at its first ``pulumi.export``; Pulumi's runtime catches what
  is raised there and waits for every RPC before re-raising;
- ``duckdb``: inside advise's analysis, as its DuckDB query runs (DuckDB turns a KeyboardInterrupt into its own
  error);
- ``spark``: inside ``advise --engine spark``, as a Spark query runs in the JVM (py4j turns a broken call into its
  own error);
- ``spark-launch``: as ``advise --engine spark`` starts the JVM (pyspark waits for its gateway, the process' file
  descriptor 2 pointed at the JVM's log);
- ``spark-start``: as the Spark session starts, in a call to the JVM (pyspark's SparkContext is up and its
  SparkSession is being made: the window where pyspark's own SIGINT handler stood, 9-24 s into a user's run).
A point may carry a count, ``program:4``: the 4th time the run passes it.

(There was a ``frame`` point, inside the stack-frame lookup Pulumi's runtime runs under ``except BaseException`` at
each registration, where a KeyboardInterrupt was swallowed and the run exited 0. The offline engine now registers
without source positions (``pulumi_private.without_source_positions``), so the run never enters that lookup.)
"""

from __future__ import annotations

import importlib.machinery
import os
import runpy
import signal
import sys
import time
from pathlib import Path

READY = "pause_at: ready"
#: The longest wait at POINT; the test signals within moments, so reaching it means the signal never came.
WAIT_SECONDS = 120

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
#: The stderr the test reads, kept apart: the run may point file descriptor 2 elsewhere at the point (the JVM's log).
_STDERR = os.dup(2)


def say_ready() -> None:
    os.write(_STDERR, f"{READY}\n".encode())


def ready_and_wait() -> None:
    say_ready()
    time.sleep(WAIT_SECONDS)


def _pause_on_find(name: str) -> None:
    """Pause when module ``name`` is about to be imported: wraps the path finder every import of a file goes through
    (the offline engine's own finder, `pulumi_private`'s lazy-annotations one, asks it too)."""
    original = importlib.machinery.PathFinder.find_spec

    def find_spec(fullname, path=None, target=None):  # noqa: ANN001, ANN202 - the finder protocol
        if fullname == name:
            importlib.machinery.PathFinder.find_spec = original  # type: ignore[method-assign]
            ready_and_wait()
        return original(fullname, path, target)

    importlib.machinery.PathFinder.find_spec = find_spec  # type: ignore[method-assign]


def _pause_on_call(owner: object, name: str, nth: int) -> None:
    """Wrap ``owner.name`` so that its ``nth`` call pauses first."""
    original = getattr(owner, name)
    calls = [0]

    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls[0] += 1
        if calls[0] == nth:
            ready_and_wait()
        return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def _at_body(nth: int) -> None:
    import pulumi

    _pause_on_call(pulumi, "export", nth)


def _at_duckdb(nth: int) -> None:
    import duckdb

    connect = duckdb.connect

    def connect_then_pause(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        con = connect(*args, **kwargs)
        say_ready()
        # a query that runs inside DuckDB until the signal comes (DuckDB checks for signals as it runs)
        con.execute("SELECT count(*) FROM range(9223372036854775807) t(i) WHERE i % 7 = 8")
        return con

    duckdb.connect = connect_then_pause


def _at_spark(nth: int) -> None:
    from dbx_ai_infra.advise import engines

    original = engines.SparkEngine._sql

    def sql_then_pause(self, sql):  # noqa: ANN001, ANN202
        if not getattr(engines, "_paused", False):
            engines._paused = True
            say_ready()
            # a query that runs in the JVM until the signal comes
            self.spark.range(10 ** 13).selectExpr("sum(id % 7) AS s").collect()
        return original(self, sql)

    engines.SparkEngine._sql = sql_then_pause


def _at_spark_launch(nth: int) -> None:
    from pyspark import java_gateway

    popen = java_gateway.Popen

    def popen_then_pause(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        proc = popen(*args, **kwargs)
        ready_and_wait()
        return proc

    java_gateway.Popen = popen_then_pause


def _at_spark_start(nth: int) -> None:
    from pyspark.sql import session

    init = session.SparkSession.__init__

    def init_after_a_jvm_call(self, sc, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        say_ready()
        sc._jvm.java.lang.Thread.sleep(WAIT_SECONDS * 1000)  # a call the JVM answers when the wait is over
        init(self, sc, *args, **kwargs)

    session.SparkSession.__init__ = init_after_a_jvm_call


def _at_import(nth: int) -> None:
    _pause_on_find("pulumi_databricks._inputs")  # the provider's input types, the bulk of its import


def _at_program(nth: int) -> None:
    from dbx_ai_infra.engine import engine

    _pause_on_call(engine._Mocks, "new_resource", nth)


def _at_write(nth: int) -> None:
    from dbx_ai_infra.engine import output

    class _Os:  # os, with a pause before the rename that puts the output in place
        def __getattr__(self, name):  # noqa: ANN001, ANN204
            return getattr(os, name)

        @staticmethod
        def replace(src, dst):  # noqa: ANN001, ANN205
            ready_and_wait()
            os.replace(src, dst)

    output.os = _Os()  # type: ignore[assignment]


#: Each POINT (the module's docstring) and how it is installed (its argument: the count, ``program:4``).
POINTS = {"body": _at_body, "duckdb": _at_duckdb, "spark": _at_spark, "spark-launch": _at_spark_launch,
          "spark-start": _at_spark_start, "import": _at_import, "program": _at_program, "write": _at_write}


def install(spec: str) -> None:
    point, _, count = spec.partition(":")
    if point not in POINTS:
        raise SystemExit(f"pause_at: unknown point {point!r}")
    POINTS[point](int(count or 1))


if __name__ == "__main__":
    # A terminal's Ctrl-C reaches Python's own handler; a test runner may have started us with SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    install(sys.argv[1])
    sys.argv = ["stackplan", *sys.argv[2:]]
    runpy.run_module("stackplan", run_name="__main__", alter_sys=True)
