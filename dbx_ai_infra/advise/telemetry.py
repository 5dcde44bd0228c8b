"""Telemetry exports with planted problems: try ``stackplan advise`` without a workspace (``python -m stackplan
sample-usage``); the tests and the benchmark of advise use the same generator.

``write_exports(out, plan, plant={...})`` writes, for the priced plan of a stack, the input files of
``python -m stackplan advise --usage DIR`` (names and columns as the README's advise section states them): clusters,
node_timeline, gpu_timeline, cluster_events.jsonl, usage, list_prices and requests, in CSV or Parquet. The data is made
by DuckDB from a few lines per cluster run (no Python loop per row), so the benchmark's month of 60 eight-GPU nodes
(about 20 million gpu_timeline rows) takes seconds.

Without a plant the data is healthy: GPUs busy at about 70%, request P99 about 600 ms, no reclaims, no resizes, short
idle tails, and a bill that matches the cost model's expected DBUs for the window. Each planted problem is one of
`PLANTS` (the finding ids of ``advise`` whose record says how to plant it: `dbx_ai_infra.advise.record.Plant`), planted
on
the first target of the role it concerns.

    python -m stackplan sample-usage --stack prod --out /tmp/usage --days 7 --plant gpu-underutilized
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dbx_ai_infra.advise.findings import FINDINGS, PLANTS
from dbx_ai_infra.advise.sources import load_duckdb, sql_string
from dbx_ai_infra.advise.targets import EndpointTarget, Target, endpoint_targets, targets_of
from dbx_ai_infra.dbxtypes.plan import Plan
from dbx_ai_infra.dbxtypes.vocabulary import HOURS_PER_MONTH, ROLE_TAG, STACK_TAG, WORKLOAD_TAG
from dbx_ai_infra.gpucatalog import load_catalog

#: The role each plant goes to (from the findings' records).
PLANT_ROLE = {f.id: f.plant.role for f in FINDINGS if f.plant is not None}
START = datetime(2026, 11, 1, tzinfo=UTC)
SKU = {"all_purpose": "PREMIUM_ALL_PURPOSE_COMPUTE", "jobs_compute": "PREMIUM_JOBS_COMPUTE"}
HEALTHY_LATENCY_MS = 200.0


@dataclass(frozen=True)
class Traffic:
    """A serving endpoint's requests over the window (its ``serving_requests`` rows, as its AI Gateway payload table
    logs them: ``LOGGED_PER_MINUTE`` rows a minute, each standing for 1 / sampling_fraction requests)."""

    load: float = 0.5  #: requests in flight, as a share of its max provisioned concurrency
    latency_ms: float = HEALTHY_LATENCY_MS  #: median execution duration
    tail_factor: float = 3.0  #: the slowest 3% take this many times the median
    #: Traffic comes in stretches of ``active_minutes`` followed by ``idle_minutes`` without a request (0: all the
    #: time). A scale-to-zero endpoint is busy its usage assumption's hours a month, in one stretch a day.
    active_minutes: int = 0
    idle_minutes: int = 0
    launch_ms: float = 0.0  #: the execution duration of the first request after an idle stretch (0: as any other)


LOGGED_PER_MINUTE = 20


@dataclass(frozen=True)
class Run:
    """One cluster run: ``minutes`` long from ``start`` (minutes after the window's start)."""

    cluster_id: str
    cluster_name: str
    tags: dict[str, str]
    node_type: str
    gpus: int
    workers: int  #: workers most of the time
    peak_workers: int  #: workers during the "at max" minutes
    peak_share: float  #: share of minutes at peak_workers
    start: int
    minutes: int
    util: float  #: mean GPU utilisation of busy minutes, %
    idle_tail: int  #: idle minutes before the run ends
    cpu: float  #: CPU user %
    net_mbps: float  #: network per node, sent + received, Mbit/s
    requests_per_minute: int
    latency_ms: float  #: median request latency
    tail_factor: float  #: the slowest 3% of requests take this many times the median
    dbu_per_hour: float  #: billed DBUs per hour of the run
    sku: str
    usd_per_dbu: float
    gpu_mem_mb: float = 24576.0  #: one GPU's memory (the node type's, from the catalog)
    mem_share: float = 0.7  #: share of a GPU's memory in use in busy minutes (healthy: 70%)


def _runs_for(target: Target, stack: str, days: float, plant: set[str], full_window: bool) -> list[Run]:
    window_minutes = int(days * 24 * 60)
    share_of_month = window_minutes / 60 / HOURS_PER_MONTH
    hours = target.hours_per_month * share_of_month  # what the cost model expects in this window
    if target.role == "inference" and target.autotermination_minutes == 0:
        hours = window_minutes / 60
    hours = window_minutes / 60 if full_window else min(hours, window_minutes / 60)
    mine = {p for p in plant if PLANT_ROLE[p] == target.role}
    tags = {STACK_TAG: stack, ROLE_TAG: target.role, WORKLOAD_TAG: target.name}

    node = load_catalog().get(target.node_type_id)
    gpu_mem_mb = node.gpu_memory_gb * 1024 if node is not None else 24576.0
    base = Run(cluster_id="", cluster_name=target.cluster_name or "", tags=tags, node_type=target.node_type_id,
               gpus=max(target.gpus_per_node, 1), workers=target.min_workers, peak_workers=target.min_workers,
               peak_share=0.0, start=0, minutes=0, util=70.0, idle_tail=0, cpu=35.0, net_mbps=100.0,
               requests_per_minute=20 if target.role == "inference" else 0, latency_ms=HEALTHY_LATENCY_MS,
               tail_factor=3.0, dbu_per_hour=0.0, sku=SKU.get(target.kind, SKU["all_purpose"]), gpu_mem_mb=gpu_mem_mb,
               usd_per_dbu=target.usd_per_dbu)
    for spec in FINDINGS:  # each planted finding changes the run as its record says, in registry order
        if spec.id in mine and spec.plant is not None and spec.plant.run is not None:
            base = spec.plant.run(base, target)
    # one run per day (training and dev), or one run over the window (always-on inference)
    per_day = target.role != "inference" and not full_window and days >= 1
    count = max(1, int(days)) if per_day else 1
    run_minutes = max(30, int(hours * 60 / count))
    # healthy: the run is stopped soon after its work (10 idle minutes); planted: 150 idle minutes before it stops
    idle = max([10] + [spec.plant.idle_minutes or 10 for spec in FINDINGS if spec.id in mine and spec.plant])
    runs = []
    for i in range(count):
        start = i * 24 * 60 if per_day else 0
        minutes = min(run_minutes + (idle if target.role == "interactive" else 0), window_minutes - start)
        seed = zlib.crc32(target.workload.encode())
        run = replace(base, cluster_id=f"1101-{seed % 10**6:06d}-run{i:03d}",
                      cluster_name=target.cluster_name or f"job-{seed % 10**4}-run-{seed % 10**5 + i}",
                      start=start, minutes=minutes, idle_tail=idle if target.role != "inference" else 0)
        billed_hours = hours / count
        dbu_per_hour = target.dbu_hourly / max(target.usd_per_dbu, 1e-9)
        if target.dbu_monthly_expected and hours:
            # spread the cost model's expected DBUs for this window over the run (burst included)
            dbu_per_hour = target.dbu_monthly_expected * share_of_month / max(target.usd_per_dbu, 1e-9) / hours
        for spec in FINDINGS:
            if spec.id in mine and spec.plant is not None:
                dbu_per_hour *= spec.plant.dbu_factor
        runs.append(replace(run, dbu_per_hour=dbu_per_hour * billed_hours * 60 / max(minutes, 1)))
    return runs


def _events(runs: list[Run], targets: dict[str, Target], where: dict[str, str]) -> list[dict[str, Any]]:
    """The runs' events; a planted problem's events only on the workload it was planted on (``where``)."""
    events: list[dict[str, Any]] = []

    def at(run: Run, minute: int) -> int:
        return int((START + timedelta(minutes=run.start + minute)).timestamp() * 1000)

    for run in runs:
        target = targets[run.cluster_id]
        events.append({"cluster_id": run.cluster_id, "timestamp": at(run, 0), "type": "RUNNING",
                       "details": {"current_num_workers": run.workers, "target_num_workers": run.workers}})
        mine = {p for p, workload in where.items() if workload == target.workload}
        def minute_at(minute: int, run: Run = run) -> int:
            return at(run, minute)

        for spec in FINDINGS:  # the events each planted finding's record makes, in registry order
            if spec.id in mine and spec.plant is not None and spec.plant.events is not None:
                events.extend(spec.plant.events(run, target, minute_at))
    return sorted(events, key=lambda e: e["timestamp"])


#: A run of nothing: the row that types the runs table of a stack with no cluster (serverless jobs and endpoints
#: only, or an --only that names none), filtered out, since SQL has no empty VALUES list.
_NO_RUN = Run(cluster_id="", cluster_name="", tags={}, node_type="", gpus=0, workers=0, peak_workers=0, peak_share=0,
              start=0, minutes=0, util=0, idle_tail=0, cpu=0, net_mbps=0, requests_per_minute=0, latency_ms=0,
              tail_factor=0, dbu_per_hour=0, sku="", usd_per_dbu=0)


def _runs_sql(runs: list[Run]) -> str:
    def lit(v: Any) -> str:
        return sql_string(v) if isinstance(v, str) else repr(float(v))

    rows = ", ".join("(" + ", ".join(lit(v) for v in (
        r.cluster_id, r.cluster_name, json.dumps(r.tags), r.node_type, r.gpus, r.workers, r.peak_workers,
        r.peak_share, r.start, r.minutes, r.util, r.idle_tail, r.cpu, r.net_mbps, r.requests_per_minute,
        r.latency_ms, r.tail_factor, r.dbu_per_hour, r.sku, r.usd_per_dbu, r.gpu_mem_mb, r.mem_share)) + ")"
        for r in runs or (_NO_RUN,))
    return (f"SELECT * FROM (VALUES {rows}) AS t(cluster_id, cluster_name, tags, node_type, gpus, workers, "
            "peak_workers, peak_share, start_minute, minutes, util, idle_tail, cpu, net_mbps, rpm, latency_ms, "
            "tail_factor, dbu_per_hour, sku, usd_per_dbu, gpu_mem_mb, mem_share)" + ("" if runs else " WHERE false"))


_NODES = """
CREATE TABLE nodes AS
SELECT r.*, m.m AS minute, n.i AS node,
       TIMESTAMPTZ '{start}' + to_minutes(CAST(r.start_minute + m.m AS BIGINT)) AS start_time,
       m.m >= r.minutes - r.idle_tail AS idle
FROM runs r
CROSS JOIN LATERAL range(CAST(r.minutes AS BIGINT)) AS m(m)
CROSS JOIN LATERAL range(CAST(1 + r.peak_workers AS BIGINT)) AS n(i)
WHERE n.i <= CASE WHEN (m.m % 100) < r.peak_share * 100 THEN r.peak_workers ELSE r.workers END
"""

_GPU = """
SELECT n.cluster_id, n.cluster_id || '-n' || n.node AS instance_id, n.node = 0 AS driver, g.k AS gpu_index,
       n.start_time, n.start_time + INTERVAL 1 MINUTE AS end_time,
       CASE WHEN n.idle THEN CAST(hash(n.cluster_id, n.node, g.k, n.minute) % 3 AS DOUBLE)
            WHEN n.node = 0 AND n.workers > 0 THEN 8.0
            ELSE greatest(0.0, least(100.0, n.util + CAST(hash(n.cluster_id, n.node, g.k, n.minute) % 21 AS DOUBLE)
                                              - 10.0)) END AS gpu_util_percent,
       CASE WHEN n.idle THEN 500.0 ELSE round(n.gpu_mem_mb * n.mem_share, 1) END AS gpu_mem_used_mb,
       n.gpu_mem_mb AS gpu_mem_total_mb
FROM nodes n CROSS JOIN LATERAL range(CAST(n.gpus AS BIGINT)) AS g(k)
"""

_NODE_TIMELINE = """
SELECT cluster_id, cluster_id || '-n' || node AS instance_id, start_time, start_time + INTERVAL 1 MINUTE AS end_time,
       node = 0 AS driver,
       CASE WHEN idle THEN 2.0 ELSE cpu + CAST(hash(cluster_id, node, minute) % 7 AS DOUBLE) - 3.0 END
           AS cpu_user_percent,
       4.0 AS cpu_system_percent, 1.5 AS cpu_wait_percent, 52.0 AS mem_used_percent,
       CAST(CASE WHEN idle THEN 1e5 ELSE net_mbps * 1e6 / 8 * 60 / 2 END AS BIGINT) AS network_sent_bytes,
       CAST(CASE WHEN idle THEN 1e5 ELSE net_mbps * 1e6 / 8 * 60 / 2 END AS BIGINT) AS network_received_bytes,
       node_type
FROM nodes
"""

_REQUESTS = """
SELECT n.start_time + to_milliseconds(CAST(q.j * 60000 / n.rpm AS BIGINT)) AS request_time, n.cluster_id,
       CASE WHEN hash(n.cluster_id, n.minute, q.j) % 100 < 3 THEN n.latency_ms * n.tail_factor
            ELSE n.latency_ms * (0.7 + CAST(hash(n.cluster_id, n.minute, q.j) % 60 AS DOUBLE) / 100) END
           * CASE WHEN reclaimed.cluster_id IS NOT NULL THEN 8 ELSE 1 END AS latency_ms,
       CASE WHEN hash(n.cluster_id, n.minute, q.j) % 500 = 0 THEN 503 ELSE 200 END AS status_code
FROM nodes n CROSS JOIN LATERAL range(CAST(n.rpm AS BIGINT)) AS q(j)
LEFT JOIN reclaim_minutes reclaimed ON reclaimed.cluster_id = n.cluster_id AND reclaimed.minute = n.minute
WHERE n.node = 0 AND n.rpm > 0
"""

_SERVING = """
SELECT t.endpoint AS endpoint_name,
       TIMESTAMPTZ '{start}' + to_minutes(m.m) + to_milliseconds(CAST(q.j * 60000 / {logged} AS BIGINT))
           AS request_time,
       CASE WHEN hash(t.endpoint, m.m, q.j) % 500 = 0 THEN 503 ELSE 200 END AS status_code,
       CAST(CASE WHEN t.idle > 0 AND t.launch_ms > 0 AND m.m > 0 AND m.m % (t.active + t.idle) = 0 AND q.j = 0
                 THEN t.launch_ms
                 WHEN hash(t.endpoint, m.m, q.j) % 100 < 3 THEN t.latency_ms * t.tail_factor
                 ELSE t.latency_ms * (0.7 + CAST(hash(t.endpoint, m.m, q.j) % 60 AS DOUBLE) / 100) END AS BIGINT)
           AS execution_duration_ms,
       t.sampling_fraction
FROM traffic t CROSS JOIN range(CAST({minutes} AS BIGINT)) AS m(m) CROSS JOIN range({logged}) AS q(j)
WHERE t.idle = 0 OR m.m % (t.active + t.idle) < t.active
"""


def _traffic_sql(endpoints: list[EndpointTarget], plants: dict[str, set[str]]) -> str:
    """The endpoints' traffic (each changed by the plants its record says, in registry order) as a VALUES relation."""
    rows = []
    for e in endpoints:
        traffic = Traffic()
        if e.scale_to_zero:
            active = max(60, min(1440, round(e.hours_per_month / HOURS_PER_MONTH * 1440)))
            traffic = replace(traffic, active_minutes=active, idle_minutes=1440 - active)
        for spec in FINDINGS:
            if spec.id in plants.get(e.workload, set()) and spec.plant is not None and spec.plant.traffic is not None:
                traffic = spec.plant.traffic(traffic, e)
        in_flight = traffic.load * max(e.max_concurrency, 1)
        mean_ms = traffic.latency_ms * (0.97 * 0.995 + 0.03 * traffic.tail_factor)
        per_minute = in_flight * 60000 / mean_ms  # Little's law: the arrivals that keep that many in flight
        sampled = min(1.0, LOGGED_PER_MINUTE / per_minute)
        # billed as the cost model prices it: its hourly $ for every hour it was up, at the model-serving $/DBU
        hourly_dbus = e.hourly / e.usd_per_dbu if e.usd_per_dbu else 0.0
        rows.append("(" + ", ".join([sql_string(e.workload), repr(traffic.latency_ms),
                                     repr(traffic.tail_factor), str(traffic.active_minutes),
                                     str(traffic.idle_minutes), repr(traffic.launch_ms), repr(sampled),
                                     repr(hourly_dbus), repr(e.usd_per_dbu)]) + ")")
    return (f"SELECT * FROM (VALUES {', '.join(rows)}) AS t(endpoint, latency_ms, tail_factor, active, idle, "
            "launch_ms, sampling_fraction, hourly_dbus, usd_per_dbu)")


_USAGE = """
SELECT date_trunc('hour', start_time) AS usage_start_time,
       date_trunc('hour', start_time) + INTERVAL 1 HOUR AS usage_end_time,
       sku AS sku_name, 'DBU' AS usage_unit, sum(dbu_per_hour) / 60 AS usage_quantity, cluster_id,
       CAST(NULL AS VARCHAR) AS endpoint_name
FROM nodes WHERE node = 0 GROUP BY ALL
"""
#: The generator's model-serving SKU (a stand-in: Databricks' names carry the tier and region).
SERVING_SKU = "PREMIUM_SERVERLESS_REAL_TIME_INFERENCE"
#: A serving endpoint's usage: each hour it served a request, at its hourly DBUs.
_SERVING_USAGE = """
SELECT TIMESTAMPTZ '{start}' + to_hours(CAST(h.h AS BIGINT)) AS usage_start_time,
       TIMESTAMPTZ '{start}' + to_hours(CAST(h.h + 1 AS BIGINT)) AS usage_end_time,
       '{sku}' AS sku_name, 'DBU' AS usage_unit, t.hourly_dbus AS usage_quantity, CAST(NULL AS VARCHAR) AS cluster_id,
       t.endpoint AS endpoint_name
FROM traffic t
JOIN (SELECT DISTINCT x.endpoint, m.m // 60 AS h FROM traffic x CROSS JOIN range(CAST({minutes} AS BIGINT)) AS m(m)
      WHERE x.idle = 0 OR m.m % (x.active + x.idle) < x.active) AS h ON h.endpoint = t.endpoint
"""


def _names(target: Target, stack: str) -> set[str]:
    """The names ``--only`` knows a cluster target by: its workload (an all-purpose cluster's name, a job's name), its
    stack workload (the ``dbx_workload`` tag its cluster carries) and ``<stack>-<workload>``, the name the stack's
    all-purpose cluster of that workload has. A job cluster's name is made up per run: it is known by its tags."""
    return {target.workload, target.name, f"{stack}-{target.name}"}


def plant_targets(plan: Plan, planted: Iterable[str], only: Iterable[str] | None = None
                  ) -> tuple[list[Target], list[Any], dict[str, str]]:
    """The cluster targets and endpoints of ``plan`` (those of ``only``, when given), and where each plant goes: a
    serving plant on the first endpoint it applies to, any other on the first target of its role. A plant that applies
    to none is not in the mapping."""
    kept = set(only) if only is not None else None
    targets = [t for t in targets_of(plan, low_bandwidth_gbps=200) if kept is None or kept & _names(t, plan.stack)]
    endpoints = [e for e in endpoint_targets(plan) if kept is None or e.workload in kept]
    where: dict[str, str] = {}
    for plant_id in sorted(p for p in planted if PLANT_ROLE[p] == "serving"):
        spec = next(f for f in FINDINGS if f.id == plant_id)
        assert spec.plant is not None
        chosen = next((e for e in endpoints if spec.plant.applies is None or spec.plant.applies(e)), None)
        if chosen is not None:
            where[plant_id] = chosen.workload
    for target in targets:
        for plant_id in sorted(p for p in planted if PLANT_ROLE[p] == target.role and p not in where):
            where[plant_id] = target.workload
    return targets, endpoints, where


def _check_plants(planted: set[str]) -> None:
    """`ValueError` naming the plants that are not in `PLANTS`."""
    unknown = planted - set(PLANTS)
    if unknown:
        raise ValueError(f"unknown plants {sorted(unknown)}; use {', '.join(PLANTS)}")


def _endpoint_plants(where: dict[str, str]) -> dict[str, set[str]]:
    """The serving plants on each endpoint (by its workload)."""
    on_endpoint: dict[str, set[str]] = {}
    for plant_id, workload in where.items():
        if PLANT_ROLE[plant_id] == "serving":
            on_endpoint.setdefault(workload, set()).add(plant_id)
    return on_endpoint


def _all_runs(targets: list[Target], where: dict[str, str], stack: str, days: float, full_window: bool
              ) -> tuple[list[Run], dict[str, Target]]:
    """Every target's runs (with the cluster plants placed on it), and the target each run's cluster is of."""
    runs: list[Run] = []
    by_cluster: dict[str, Target] = {}
    for target in targets:
        mine = {p for p, w in where.items() if w == target.workload and PLANT_ROLE[p] != "serving"}
        for run in _runs_for(target, stack, days, mine, full_window):
            runs.append(run)
            by_cluster[run.cluster_id] = target
    return runs, by_cluster


def _reclaim_minutes(con: Any, runs: list[Run], events: list[dict[str, Any]]) -> None:
    """Table ``reclaim_minutes``: 3 slow minutes after each reclaim (the breach the finding looks for), in minutes of
    its run."""
    reclaims = [(e["cluster_id"], (e["timestamp"] // 60000) - int(START.timestamp() // 60)) for e in events
                if e["type"] == "NODES_LOST"]
    con.execute("CREATE TABLE reclaim_minutes (cluster_id VARCHAR, minute BIGINT)")
    starts = {r.cluster_id: r.start for r in runs}
    for cluster_id, minute in reclaims:
        con.executemany("INSERT INTO reclaim_minutes VALUES (?, ?)",
                        [(cluster_id, minute - starts[cluster_id] + k) for k in range(3)])


def _parquet_tables(usage: str, prices: str) -> list[tuple[str, str]]:
    """clusters, usage and list_prices as a Parquet export has them: tags a map, usage_metadata and pricing structs."""
    return [
        ("clusters", "SELECT DISTINCT cluster_id, cluster_name, CAST(json_transform(tags, "
                     "'\"MAP(VARCHAR, VARCHAR)\"') AS MAP(VARCHAR, VARCHAR)) AS tags FROM runs"),
        ("usage", f"SELECT usage_start_time, usage_end_time, sku_name, usage_unit, usage_quantity, "
                  f"struct_pack(cluster_id := cluster_id, endpoint_name := endpoint_name) AS usage_metadata "
                  f"FROM ({usage})"),
        ("list_prices", "SELECT DISTINCT sku AS sku_name, 'USD' AS currency_code, 'DBU' AS usage_unit, "
                        "TIMESTAMPTZ '2026-01-01 00:00:00+00' AS price_start_time, "
                        "CAST(NULL AS TIMESTAMPTZ) AS price_end_time, "
                        f"struct_pack(\"default\" := usd_per_dbu) AS pricing FROM ({prices})"),
    ]


def _csv_tables(usage: str, prices: str) -> list[tuple[str, str]]:
    """clusters, usage and list_prices as a CSV export has them: tags JSON text, the metadata and pricing flattened."""
    return [
        ("clusters", "SELECT DISTINCT cluster_id, cluster_name, tags FROM runs"),
        ("usage", usage),
        ("list_prices", "SELECT DISTINCT sku AS sku_name, 'USD' AS currency_code, 'DBU' AS usage_unit, "
                        "'2026-01-01T00:00:00Z' AS price_start_time, NULL AS price_end_time, "
                        f"usd_per_dbu AS pricing_default FROM ({prices})"),
    ]


@dataclass(frozen=True)
class _Format:
    """How an export format is written: the file extension, DuckDB's COPY options, its shape of the billing tables."""

    ext: str
    how: str
    billing: Callable[[str, str], list[tuple[str, str]]]


#: The formats exports are written in; any other ``fmt`` writes CSV.
_FORMATS: dict[str, _Format] = {
    "parquet": _Format("parquet", "(FORMAT parquet)", _parquet_tables),
    "csv": _Format("csv", "(FORMAT csv, HEADER true)", _csv_tables),
}


def _export_tables(con: Any, endpoints: list[EndpointTarget], on_endpoint: dict[str, set[str]], days: float,
                   form: _Format) -> list[tuple[str, str]]:
    """Each export file's name and the query that fills it (creating table ``traffic`` when there are endpoints)."""
    tables = [("gpu_timeline", _GPU), ("node_timeline", _NODE_TIMELINE), ("requests", _REQUESTS)]
    start, minutes = START.strftime("%Y-%m-%d %H:%M:%S+00"), int(days * 24 * 60)
    usage, prices = _USAGE, "SELECT DISTINCT sku, usd_per_dbu FROM runs"
    if endpoints:
        con.execute(f"CREATE TABLE traffic AS {_traffic_sql(endpoints, on_endpoint)}")
        tables.append(("serving_requests", _SERVING.format(start=start, logged=LOGGED_PER_MINUTE, minutes=minutes)))
        usage += " UNION ALL " + _SERVING_USAGE.format(start=start, sku=SERVING_SKU, minutes=minutes)
        prices += f" UNION SELECT DISTINCT '{SERVING_SKU}', usd_per_dbu FROM traffic"
    return tables + form.billing(usage, prices)


def _write_events(out: Path, events: list[dict[str, Any]]) -> None:
    """``cluster_events.jsonl``: one event a line, as the API returns them."""
    with open(out / "cluster_events.jsonl", "w", encoding="utf-8") as handle:
        for event in events:
            handle.write(json.dumps(event) + "\n")


def write_exports(out: str | Path, plan: Plan, *, plant: Iterable[str] = (), days: float = 7, fmt: str = "csv",
                  full_window: bool = False, only: Iterable[str] | None = None) -> dict[str, Any]:
    """Write the exports of ``plan``'s clusters to ``out`` (created); returns what was planted where."""
    duckdb = load_duckdb()

    planted = set(plant)
    _check_plants(planted)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    targets, endpoints, where = plant_targets(plan, planted, only)
    runs, by_cluster = _all_runs(targets, where, plan.stack, days, full_window)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"CREATE TABLE runs AS {_runs_sql(runs)}")
    con.execute(_NODES.format(start=START.strftime("%Y-%m-%d %H:%M:%S+00")))
    events = _events(runs, by_cluster, where)
    _reclaim_minutes(con, runs, events)
    form = _FORMATS.get(fmt, _FORMATS["csv"])
    for name, sql in _export_tables(con, endpoints, _endpoint_plants(where), days, form):
        con.execute(f"COPY ({sql}) TO '{out / f'{name}.{form.ext}'}' {form.how}")
    _write_events(out, events)
    rows = con.execute("SELECT count(*) FROM nodes").fetchone()
    con.close()
    return {"planted": where, "runs": len(runs), "node_minutes": rows[0] if rows else 0, "days": days}
