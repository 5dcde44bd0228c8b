"""``advise --engine spark`` (issue 29): the same analysis on Apache Spark as on DuckDB, and the ``--emit-sql`` files
executed on Spark, not only parsed. One local Spark session per test process (starting one takes seconds). The tests
that start Spark are marked ``spark``: ``make test-spark`` runs them (CI does, after ``make test``)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dbx_ai_infra.advise.analysis import emitted_sql, find_exports, run_local, statements
from dbx_ai_infra.advise.engines import SparkEngine, SparkOptions, spark_session
from dbx_ai_infra.advise.targets import endpoint_rows, endpoint_targets, target_rows, targets_of
from dbx_ai_infra.advise.telemetry import write_exports
from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.advise_thresholds import advise_settings
from dbx_ai_infra.engine.pipeline import build_plan

REPO = Path(__file__).resolve().parent.parent
PLANTS = ["spot-reclaim-hits-base", "idle-cluster", "cost-drift", "gpu-underutilized", "training-resized",
          "latency-over-sla-scale-out", "serving-latency-at-max-concurrency"]
SLA = 800.0


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with spark_session(SparkOptions(master="local[2]")) as session:
        yield session


@pytest.fixture(scope="module")
def prod(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """prod's plan, its targets, and a day of its telemetry with problems planted, as CSV and as Parquet."""
    plan = build_plan("prod", with_policies=False, with_cost=True)
    settings = advise_settings({}, SLA)
    rows = target_rows(targets_of(plan, settings.low_bandwidth_gbps), plan.stack)
    endpoints = endpoint_rows(endpoint_targets(plan))
    assert endpoints and all(e["payload_table"] for e in endpoints)  # prod serves an endpoint with an inference table
    root = tmp_path_factory.mktemp("spark")
    write_exports(root / "csv", plan, plant=PLANTS, days=1)
    write_exports(root / "parquet", plan, plant=PLANTS, days=1, fmt="parquet")
    return {"plan": plan, "settings": settings, "rows": rows, "root": root, "endpoints": endpoints}


def canon(value: Any) -> Any:
    """A value as both engines should agree on it: numbers to 6 significant digits, times as ISO text."""
    if isinstance(value, dict):
        return {k: canon(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canon(v) for v in value]
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, float):
        return None if not math.isfinite(value) else float(f"{value:.6g}")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def _stand_ins(spark: Any, exports: Path, root: Path, endpoints: list[dict[str, Any]]) -> dict[str, str]:
    """Views standing in for the system tables and the telemetry Volume's files, from the Parquet exports, which
    the generator writes in the system tables' documented types (tags a map, usage_metadata and pricing structs,
    times as instants); returns the name each stands in for -> its view."""
    from pyspark.sql import functions as f

    def parquet(name: str) -> Any:
        return spark.read.parquet(str(exports / f"{name}.parquet"))

    clusters = parquet("clusters")
    assert clusters.schema["tags"].dataType.typeName() == "map"
    clusters.withColumn("change_time", f.lit("2026-11-01 00:00:00").cast("timestamp")) \
        .createOrReplaceTempView("system_compute_clusters")
    parquet("node_timeline").createOrReplaceTempView("system_compute_node_timeline")
    parquet("usage").createOrReplaceTempView("system_billing_usage")
    parquet("list_prices").createOrReplaceTempView("system_billing_list_prices")
    # the Volume's files: the collector's CSVs, the events as JSON text lines, the request log
    volume = root / "volume"
    for name in ("gpu_timeline", "requests"):
        parquet(name).write.mode("overwrite").option("header", "true").csv(str(volume / name))
    events = [json.dumps(json.loads(line)) for line in (root / "csv" / "cluster_events.jsonl").read_text().splitlines()
              if line.strip()]
    (volume / "cluster_events").mkdir(parents=True, exist_ok=True)
    (volume / "cluster_events" / "events.json").write_text("\n".join(events) + "\n")
    spark.read.option("header", "true").csv(str(volume / "gpu_timeline")).createOrReplaceTempView("files_gpu_timeline")
    spark.read.text(str(volume / "cluster_events")).createOrReplaceTempView("files_cluster_events")
    spark.read.option("header", "true").csv(str(volume / "requests")).createOrReplaceTempView("files_requests")
    # each endpoint's AI Gateway payload table: its own columns, without the endpoint's name (one table per endpoint)
    payload = {}
    for i, e in enumerate(endpoints):
        parquet("serving_requests").where(f.col("endpoint_name") == e["endpoint"]).drop("endpoint_name") \
            .createOrReplaceTempView(f"payload_{i}")
        payload[e["payload_table"]] = f"payload_{i}"
    return {**payload, "system.compute.clusters": "system_compute_clusters",
            "system.compute.node_timeline": "system_compute_node_timeline",
            "system.billing.usage": "system_billing_usage", "system.billing.list_prices": "system_billing_list_prices"}


@pytest.mark.spark
def test_the_emitted_sql_runs_on_spark_over_stand_ins_for_the_system_tables(spark, prod) -> None:
    """The three --emit-sql files, executed on Apache Spark as written but for the table names (system tables and
    read_files, which only Databricks has, point at stand-in views with the same columns): the figures and findings
    are the ones DuckDB gives of the same data. (The engine's own reading of the exports, `--engine spark`, is the
    Spark Connect test below: the CLI's whole report against DuckDB's.)"""
    plan = prod["plan"]
    files = emitted_sql(stack=plan.stack, telemetry="/Volumes/ai/ops/telemetry", days=3650, targets=prod["rows"],
                        settings=prod["settings"], endpoints=prod["endpoints"])
    tables = _stand_ins(spark, prod["root"] / "parquet", prod["root"], prod["endpoints"])
    sources = files["01_sources.sql"]
    for system, view in tables.items():
        sources = sources.replace(system, view)
    sources = re.sub(r"read_files\('/Volumes/ai/ops/telemetry/(\w+)[^)]*\)",
                     lambda m: f"files_{m.group(1)}", sources)
    assert "read_files" not in sources and "system." not in sources
    engine = SparkEngine(spark)
    for statement in statements(sources):
        engine.execute(statement)
    for statement in statements(files["02_stats.sql"]):
        engine.execute(statement)
    queries = {m.group(1): block for block in statements(files["03_findings.sql"])
               if (m := re.search(r"^-- finding: (\S+)", block, flags=re.M))}
    on_spark = {fid: canon(engine.fetch(sql)) for fid, sql in queries.items()}
    local = run_local(str(prod["root"] / "parquet"), prod["rows"], prod["settings"],
                      endpoints=prod["endpoints"])
    # every candidate row of every finding, every figure of every workload and the chart series: the same on both
    # engines (exact percentiles on both: percentile_cont)
    assert on_spark == {fid: canon(rows) for fid, rows in local.rows.items()}
    assert canon(engine.fetch("SELECT * FROM workload_summary ORDER BY workload")) == canon(local.summary)
    assert canon(engine.fetch("SELECT * FROM gpu_hourly ORDER BY workload, hour")) == canon(local.gpu_hourly)
    assert canon(engine.fetch("SELECT * FROM p99_hourly ORDER BY workload, hour")) == canon(local.p99_hourly)
    assert canon(engine.fetch("SELECT * FROM endpoint_summary ORDER BY endpoint")) == canon(local.endpoints)
    # the planted problems were found (the comparison is not of two empty results)
    assert {"spot-reclaim-hits-base", "cost-drift", "training-resized",
            "serving-latency-at-max-concurrency"} <= {f for f, rows in on_spark.items() if rows}


@pytest.mark.spark
@pytest.mark.parametrize("session", [
    ["--spark-master", "local[1]"],
    # a Spark Connect server pyspark starts itself: the same analysis over gRPC, about twice as long (make test-slow)
    pytest.param(["--remote", "local[1]"], marks=pytest.mark.slow, id="spark-connect"),
], ids=["classic", "spark-connect"])
def test_advise_on_spark_gives_the_duckdb_report(prod, tmp_path, session) -> None:
    """The CLI end to end with --engine spark (Spark reading the CSV exports itself), in its own process: the same
    JSON report as DuckDB's, figures, findings and priced proposals."""
    usage = prod["root"] / "csv"
    common = ["advise", "--stack", "prod", "--usage", str(usage), "--sla-p99-ms", str(SLA), "--json"]
    assert main([*common, "--out", str(tmp_path / "duckdb.json")]) == 0
    done = subprocess.run([sys.executable, "-m", "stackplan", *common, "--out", str(tmp_path / "spark.json"),
                           "--engine", "spark", *session], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((tmp_path / "spark.json").read_text()) == json.loads((tmp_path / "duckdb.json").read_text())
    assert "Traceback" not in done.stderr and "WARN" not in done.stderr  # the JVM's log stays out of the way


@pytest.mark.parametrize(("argv", "message"), [
    (["--engine", "databricks", "--usage", "."], "--engine databricks reads the system tables"),
    (["--remote", "sc://localhost:15002", "--usage", "."], "--remote and --spark-master are for --engine spark"),
    (["--profile", "dev", "--usage", "."], "--profile is for --engine databricks"),
    (["--engine", "databricks"], "needs databricks-connect"),
])
def test_an_engine_option_out_of_place_is_exit_2(capsys, argv, message) -> None:
    code = main(["advise", "--stack", "dev", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.spark
def test_an_unreadable_export_on_spark_is_exit_2_naming_it(spark, tmp_path) -> None:
    (tmp_path / "clusters.csv").write_text("cluster_id,cluster_name,tags\n")
    (tmp_path / "gpu_timeline.csv").write_text("cluster_id,instance_id\n1,2\n")  # lacks most columns
    engine = SparkEngine(spark)
    with pytest.raises(Exception) as caught:
        engine.load_sources(find_exports(str(tmp_path)))
    assert "gpu_timeline" in str(caught.value) and "lacks the column(s)" in str(caught.value)
