"""The declarations of ``advise`` and ``sample-usage``: their arguments and usage checks (the work is in
`dbx_ai_infra.cli.commands.advise` and `dbx_ai_infra.cli.commands.sample_usage`)."""

from __future__ import annotations

import argparse

from dbx_ai_infra.cli.commands.args import Command, common, finite_float, format_arg, lazy, prices_arg, stack_arg


def _advise_arguments(p: argparse.ArgumentParser) -> None:
    stack_arg(p, "prod")
    p.add_argument("--usage", metavar="DIR",
                   help="the exports: clusters, node_timeline, gpu_timeline, cluster_events, usage, list_prices, "
                        "requests (CSV or Parquet, events as JSON; each optional but clusters)")
    p.add_argument("--sla-p99-ms", type=finite_float, metavar="N",
                   help="request P99 latency SLA in ms (default: advise.sla_p99_ms of the policy config; none: "
                        "latency is not judged)")
    format_arg(p, "advise")
    common(p)  # --json, --out, --policy-config (its advise section holds the thresholds)
    p.add_argument("--emit-sql", metavar="DIR",
                   help="write the same analysis as Databricks SQL over system tables to DIR (run it on a SQL "
                        "warehouse); with --usage, also advise locally")
    p.add_argument("--days", type=int, default=30, metavar="N",
                   help="with --emit-sql or --engine databricks: the window, days (default 30)")
    p.add_argument("--engine", choices=["duckdb", "spark", "databricks"], default="duckdb",
                   help="where the analysis runs: duckdb (default: this process over --usage), spark (a Spark session "
                        "over --usage: --spark-master or --remote), databricks (Databricks Connect with --profile, "
                        "over the system tables and the telemetry Volume; no --usage)")
    p.add_argument("--spark-master", default="local[2]", metavar="URL",
                   help="with --engine spark: the master of a classic session (default local[2])")
    p.add_argument("--remote", metavar="sc://HOST:PORT",
                   help="with --engine spark: a Spark Connect server instead of a classic session")
    p.add_argument("--profile", metavar="NAME",
                   help="with --engine databricks: the Databricks CLI profile (~/.databrickscfg) to connect with")
    prices_arg(p)
    p.add_argument("--write-stack", metavar="FILE",
                   help="also write the stack with every proposal applied that no mandatory policy refuses, to FILE "
                        "(a new stack file, comments kept; never the stack file itself; --out stays the report)")


def _advise_problem(args: argparse.Namespace) -> str | None:
    """Which engine reads what: --usage for duckdb and spark, the system tables for databricks."""
    if args.engine == "databricks" and args.usage:
        return ("--engine databricks reads the system tables and the telemetry Volume, not --usage. Fix: drop "
                "--usage, or use --engine duckdb or spark over the exports.")
    if (args.remote or args.spark_master != "local[2]") and args.engine != "spark":
        return "--remote and --spark-master are for --engine spark. Fix: add --engine spark, or drop them."
    if args.profile and args.engine != "databricks":
        return "--profile is for --engine databricks. Fix: add --engine databricks, or drop it."
    if not args.usage and not args.emit_sql and args.engine != "databricks":
        return "nothing to read. Fix: pass --usage DIR (the exports), or --emit-sql DIR for the SQL."
    if args.days < 1:
        return "--days must be at least 1. Fix: pass e.g. --days 30."
    return None


ADVISE = Command(
    "advise", "read how the stack's compute ran (exports of system tables, GPU collector, events, bill) and propose "
    "priced edits of the stack",
    "  python -m stackplan advise --stack prod --usage exports/ --sla-p99-ms 800\n"
    "  python -m stackplan advise --stack prod --usage exports/ --format html --out advice.html\n"
    "  python -m stackplan advise --stack prod --emit-sql advise-sql/\n",
    _advise_arguments, lazy("dbx_ai_infra.cli.commands.advise", "cmd_advise"), _advise_problem)


def _sample_arguments(p: argparse.ArgumentParser) -> None:
    stack_arg(p, "prod")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for the exports (created)")
    p.add_argument("--days", type=finite_float, default=7, metavar="N", help="the window, days (default 7)")
    p.add_argument("--plant", action="append", default=[], metavar="FINDING",
                   help="a problem to plant, by advise's finding id (repeat): gpu-underutilized, "
                        "latency-over-sla-scale-out, spot-reclaim-hits-base, idle-cluster, cost-drift, ...")
    p.add_argument("--file-format", choices=["csv", "parquet"], default="csv",
                   help="the exports' file format (default csv)")
    p.add_argument("--full-window", action="store_true", help="every cluster up for the whole window")
    p.add_argument("--only", action="append", metavar="WORKLOAD", help="only these workloads (repeat)")


SAMPLE_USAGE = Command(
    "sample-usage", "write telemetry exports for a stack, with problems planted, to try advise without a workspace",
    "  python -m stackplan sample-usage --stack prod --out /tmp/usage --plant gpu-underutilized --plant cost-drift\n"
    "  python -m stackplan advise --stack prod --usage /tmp/usage --sla-p99-ms 800\n",
    _sample_arguments, lazy("dbx_ai_infra.cli.commands.sample_usage", "cmd_sample_usage"))
