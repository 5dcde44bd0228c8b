"""``python -m stackplan``: argument parsing and dispatch. The commands live in `stackplan.commands`; each builds
its report through `stackplan.pipeline` and writes it through the format registry, `stackplan.formats`.

Exit codes (a public contract, `stackplan.exits`): 0 success; 1 a mandatory policy violation (``preview``,
``check``) or a failure that is not the input's fault; 2 invalid input (the message on stderr names the file, the
field and the fix; nothing is written); 130 an interrupted run (Ctrl-C or SIGTERM; no file is left behind).
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from dbxtypes.errors import InputError, ProgramError
from dbxtypes.text import printable

from . import formats, version
from .exits import EXIT_INTERRUPTED, EXIT_INVALID, EXIT_VIOLATIONS
from .interrupts import MESSAGE, cleanup_partial_outputs, exit_on_signal
from .output import check_out, same_outputs
from .workspace import CONNECT_TIMEOUT_S, HTTP_TIMEOUT_S, RETRY_BUDGET_S, WorkspaceUnavailable

Command = Callable[[argparse.Namespace], int]


def _lazy(module: str, name: str) -> Command:
    """A command imported when it runs, not when the parser is built."""
    def command(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(module), name)(args))

    command.__qualname__ = command.__name__ = name
    return command


cmd_preview = _lazy("stackplan.commands.stacks", "cmd_preview")
cmd_cost = _lazy("stackplan.commands.stacks", "cmd_cost")
cmd_export_policies = _lazy("stackplan.commands.export", "cmd_export_policies")
cmd_export_terraform = _lazy("stackplan.commands.export", "cmd_export_terraform")
cmd_advise = _lazy("stackplan.commands.advise", "cmd_advise")
cmd_sample_usage = _lazy("stackplan.commands.sample_usage", "cmd_sample_usage")


def cmd_check(args: argparse.Namespace) -> int:
    """Stacks, a workspace (export or live read), or the drift between a stack and a workspace."""
    if args.stack and (args.cluster_json or args.workspace):
        return _lazy("stackplan.commands.workspace", "cmd_drift")(args)
    if getattr(args, "terraform_plan", None):
        from policies.exports import require_terraform_plan

        require_terraform_plan(args.terraform_plan)
    if args.cluster_json or args.workspace:
        return _lazy("stackplan.commands.workspace", "cmd_audit")(args)
    return _lazy("stackplan.commands.stacks", "cmd_check")(args)


def _format_arg(p: argparse.ArgumentParser, *kinds: str) -> None:
    """``--format``: the registry's formats for these report kinds."""
    p.add_argument("--format", choices=formats.choices(*kinds), default="table", help=formats.help_text(*kinds))


_EXIT_CODES = """exit codes:
  0    success
  1    a mandatory policy violation (or a failure that is not the input's fault)
  2    invalid input: one message names the file, the field and the fix; nothing is written
  130  interrupted (Ctrl-C, SIGTERM); nothing is written
"""
#: cost fails on the stack's budget alone: its other findings are check's to fail on.
_COST_EXIT_CODES = _EXIT_CODES.replace(
    "  1    a mandatory policy violation (or a failure that is not the input's fault)",
    "  1    over the stack's budget (dbx-ai-infra:budget), or one that cannot be verified; other findings are\n"
    "       check's to fail on (or a failure that is not the input's fault)")
EXAMPLES_PREVIEW = """examples:
  python -m stackplan preview --stack dev
  python -m stackplan preview --stack stacks/Pulumi.prod.yaml --json --out plan.json
  python -m stackplan preview --all --format sarif --out stackplan.sarif

"""
EXAMPLES_CHECK = """examples:
  python -m stackplan check --stack prod
  python -m stackplan check --stack dev --stack prod --format github
  python -m stackplan check --cluster-json clusters.json --cluster-policy policy.json

"""
EXAMPLES_COST = """examples:
  python -m stackplan cost --stack prod
  python -m stackplan cost --stack prod --against dev --format markdown --out cost.md
  python -m stackplan cost --all --against base-plans/ --format markdown --out report.md

"""
EXAMPLES_ADVISE = """examples:
  python -m stackplan advise --stack prod --usage exports/ --sla-p99-ms 800
  python -m stackplan advise --stack prod --usage exports/ --format html --out advice.html
  python -m stackplan advise --stack prod --emit-sql advise-sql/

"""
EXAMPLES_SAMPLE = """examples:
  python -m stackplan sample-usage --stack prod --out /tmp/usage --plant gpu-underutilized --plant cost-drift
  python -m stackplan advise --stack prod --usage /tmp/usage --sla-p99-ms 800

"""
EXAMPLES_EXPORT = """examples:
  python -m stackplan export-policies --stack prod --out policies-out/

"""
EXAMPLES_EXPORT_TERRAFORM = """examples:
  python -m stackplan export-terraform --stack prod --out terraform/prod/
  cd terraform/prod && terraform init && terraform plan   # credentials from DATABRICKS_HOST/... or a profile

"""


def finite_float(text: str) -> float:
    """A command-line number that is finite (``inf``, ``nan`` and ``1e400`` are refused: exit 2)."""
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def invoked_as() -> str:
    """How the user ran the program: ``stackplan`` (the installed command, pyproject's [project.scripts]) or
    ``python -m stackplan``."""
    return "stackplan" if Path(sys.argv[0]).name == "stackplan" else "python -m stackplan"


_RAW = argparse.RawDescriptionHelpFormatter


def _stacks_arg(p: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup) -> None:
    p.add_argument("--stack", action="append", metavar="NAME|FILE",
                   help="a stack name (dev) or the path of a stack YAML file; repeat it for several stacks "
                        "(one combined report, the worst exit code)")
    p.add_argument("--all", action="store_true", help="every stack under stacks/")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="write JSON instead of a table")
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    p.add_argument("--policy-config", metavar="FILE",
                   help="policy config JSON: enforcement levels and thresholds, as Pulumi takes it")
    p.add_argument("--rules", metavar="DIR",
                   help="also judge your team's own rule modules (each *.py in DIR defines RULE; they are code "
                        "you trust: loading one runs it)")


def _region_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--region", metavar="REGION",
                   help="the workspace's region (eu-west-1, westeurope, europe-west1): VM prices and Model Serving "
                        "$/DBU of that region where the data has them; over a stack's dbx-ai-infra:region. Default: "
                        "the stack's, else the cloud's reference region (us-east-1, eastus, us-central1)")


def _add_preview(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("preview", formatter_class=_RAW, epilog=EXAMPLES_PREVIEW + _EXIT_CODES,
                       help="run the program offline; show resources, violations and costs")
    _stacks_arg(p.add_mutually_exclusive_group(required=True))
    _common(p)
    _format_arg(p, "preview")
    p.add_argument("--prices", metavar="FILE", help="price overrides (YAML)")
    _region_arg(p)
    p.set_defaults(func=cmd_preview)


def _add_check(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", formatter_class=_RAW, epilog=EXAMPLES_CHECK + _EXIT_CODES,
                       help="evaluate the policies on stacks or on exported cluster JSON")
    group = p.add_mutually_exclusive_group()
    _stacks_arg(group)
    p.add_argument("--write-baseline", metavar="FILE",
                   help="also record today's findings in FILE (a baseline, for --baseline in later runs)")
    p.add_argument("--baseline", metavar="FILE",
                   help="report the findings FILE holds as baselined (they fail nothing) and fail only on new ones; "
                        "list the baselined ones that are gone as fixed")
    p.add_argument("--workspace", action="store_true",
                   help="read the workspace live through databricks-sdk (its standard auth: the environment or "
                        f"--profile; never a token on the command line). Gives up after {CONNECT_TIMEOUT_S} s "
                        f"without a connection, {HTTP_TIMEOUT_S} s without a response, {RETRY_BUDGET_S} s of "
                        "retries on one list; a host that does not resolve or refuses the connection is invalid "
                        "input (exit 2), one that does not answer is exit 1")
    p.add_argument("--profile", metavar="NAME", help="with --workspace: a ~/.databrickscfg profile")
    p.add_argument("--save-export", metavar="DIR",
                   help="with --workspace: also write what was read to DIR, for a later --cluster-json DIR")
    p.add_argument("--cluster-json", metavar="FILE",
                   help="a workspace export: Databricks API or CLI JSON of clusters, jobs, instance pools "
                        "(one object, lists, a mix, pages one after another), or a directory of such files")
    p.add_argument("--terraform-plan", metavar="FILE",
                   help="a Terraform plan's JSON (terraform show -json PLANFILE): its databricks_cluster, _job, "
                        "_instance_pool, _cluster_policy and _model_serving changes, checked like an export, named by "
                        "address")
    p.add_argument("--exceptions", metavar="FILE",
                   help="with --terraform-plan, --cluster-json or --workspace: accepted findings (YAML or JSON, the "
                        "stack's exceptions shape: rule, resource as the report names it, reason, expires)")
    p.add_argument("--cluster-policy", metavar="POLICY.json",
                   help="with --cluster-json: also evaluate a cluster policy definition")
    _common(p)
    _format_arg(p, "check", "audit", "drift")
    p.add_argument("--soft-fail", action="store_true",
                   help="exit 0 whatever the policies find (the report still shows it); invalid input still exits 2")
    p.set_defaults(func=cmd_check)


def _add_cost(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("cost", formatter_class=_RAW, epilog=EXAMPLES_COST + _COST_EXIT_CODES,
                       help="price stacks; with --against, what the change adds or removes")
    sources = p.add_mutually_exclusive_group(required=True)
    _stacks_arg(sources)
    sources.add_argument("--terraform-plan", metavar="FILE",
                         help="price a Terraform plan's JSON (terraform show -json PLANFILE) instead of a stack; "
                              "--against another plan's JSON diffs the two")
    p.add_argument("--against", metavar="BASE",
                   help="a stack name, a stack file, a plan JSON saved earlier, or a directory of base plans "
                        "(STACK.json each; a stack with none there is new)")
    _format_arg(p, "cost")
    p.add_argument("--prices", metavar="FILE", help="price overrides (YAML)")
    _region_arg(p)
    p.add_argument("--json", action="store_true", help="write JSON instead of a table (= --format json)")
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    p.add_argument("--policy-config", metavar="FILE", help="policy config JSON, as Pulumi takes it")
    p.set_defaults(func=cmd_cost)


def _add_advise(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("advise", formatter_class=_RAW, epilog=EXAMPLES_ADVISE + _EXIT_CODES,
                       help="read how the stack's compute ran (exports of system tables, GPU collector, events, "
                            "bill) and propose priced edits of the stack")
    p.add_argument("--stack", required=True, metavar="NAME|FILE",
                   help="a stack name (prod) or the path of a stack YAML file")
    p.add_argument("--usage", metavar="DIR",
                   help="the exports: clusters, node_timeline, gpu_timeline, cluster_events, usage, list_prices, "
                        "requests (CSV or Parquet, events as JSON; each optional but clusters)")
    p.add_argument("--sla-p99-ms", type=finite_float, metavar="N",
                   help="request P99 latency SLA in ms (default: advise.sla_p99_ms of the policy config; none: "
                        "latency is not judged)")
    _format_arg(p, "advise")
    _common(p)  # --json, --out, --policy-config (its advise section holds the thresholds)
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
    p.add_argument("--prices", metavar="FILE", help="price overrides (YAML)")
    p.add_argument("--write-stack", metavar="FILE",
                   help="also write the stack with every proposal applied that no mandatory policy refuses, to FILE "
                        "(a new stack file, comments kept; never the stack file itself; --out stays the report)")
    p.set_defaults(func=cmd_advise)


def _add_export_policies(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export-policies", formatter_class=_RAW, epilog=EXAMPLES_EXPORT + _EXIT_CODES,
                       help="write the stack's cluster-policy definitions as JSON files")
    p.add_argument("--stack", required=True, metavar="NAME|FILE",
                   help="a stack name (dev) or the path of a stack YAML file")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for <policy-name>.json files")
    p.add_argument("--policy-config", metavar="FILE",
                   help="policy config JSON: its mandatory thresholds bound the definitions as they bound the stack "
                        "(max_autotermination_minutes caps the idle time a policy allows)")
    p.set_defaults(func=cmd_export_policies)


def _add_export_terraform(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export-terraform", formatter_class=_RAW, epilog=EXAMPLES_EXPORT_TERRAFORM + _EXIT_CODES,
                       help="write the stack's plan as Terraform JSON configuration (DIR/main.tf.json)")
    p.add_argument("--stack", required=True, metavar="NAME|FILE",
                   help="a stack name (prod) or the path of a stack YAML file")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for main.tf.json (created)")
    p.add_argument("--policy-config", metavar="FILE",
                   help="policy config JSON: its mandatory thresholds bound the stack as for preview")
    p.set_defaults(func=cmd_export_terraform)


def _add_sample_usage(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("sample-usage", formatter_class=_RAW, epilog=EXAMPLES_SAMPLE + _EXIT_CODES,
                       help="write telemetry exports for a stack, with problems planted, to try advise without a "
                            "workspace")
    p.add_argument("--stack", required=True, metavar="NAME|FILE",
                   help="a stack name (prod) or the path of a stack YAML file")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for the exports (created)")
    p.add_argument("--days", type=finite_float, default=7, metavar="N", help="the window, days (default 7)")
    p.add_argument("--plant", action="append", default=[], metavar="FINDING",
                   help="a problem to plant, by advise's finding id (repeat): gpu-underutilized, "
                        "latency-over-sla-scale-out, spot-reclaim-hits-base, idle-cluster, cost-drift, ...")
    p.add_argument("--file-format", choices=["csv", "parquet"], default="csv",
                   help="the exports' file format (default csv)")
    p.add_argument("--full-window", action="store_true", help="every cluster up for the whole window")
    p.add_argument("--only", action="append", metavar="WORKLOAD", help="only these workloads (repeat)")
    p.set_defaults(func=cmd_sample_usage)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m stackplan",
                                  description="Offline preview, policy check and cost review of dbx-ai-infra stacks.",
                                  epilog=_EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"{invoked_as()} {version()}")
    sub = top.add_subparsers(dest="command", required=True)
    for add in (_add_preview, _add_check, _add_cost, _add_advise, _add_export_policies, _add_export_terraform,
                _add_sample_usage):
        add(sub)
    return top


def _usage_problem(args: argparse.Namespace) -> str | None:
    """Combinations of inputs that argparse cannot state: check's one source of clusters; advise's --usage."""
    if args.func is cmd_advise:
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
    if args.func is not cmd_check:
        return None
    stacks = bool(args.stack or args.all)
    if args.cluster_json and args.workspace:
        return "--cluster-json and --workspace are two sources of clusters. Fix: pass one of them."
    if stacks and (args.cluster_json or args.workspace) and (args.all or len(set(args.stack)) > 1):
        return ("drift compares one stack with a workspace. Fix: pass one --stack with --workspace or "
                "--cluster-json.")
    if not stacks and not args.cluster_json and not args.workspace:
        return "nothing to check. Fix: pass --stack NAME, --all, --cluster-json FILE or --workspace."
    if (args.profile or args.save_export) and not args.workspace:
        return "--profile and --save-export go with --workspace. Fix: add --workspace."
    kind = ("drift" if stacks else "audit") if (args.cluster_json or args.workspace) else "check"
    fmt = "json" if args.json else args.format
    if not formats.accepts(fmt, kind):
        return (f"--format {fmt} is for {', '.join(formats.kinds_of(fmt))} reports, not "
                f"{'a workspace audit' if kind == 'audit' else 'drift'}. Fix: pass one of "
                f"{', '.join(formats.choices(kind))}.")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "terraform_plan", None) and args.func is cmd_check:
        if args.cluster_json or args.workspace:
            print("error: --terraform-plan, --cluster-json and --workspace are each a source of clusters. Fix: pass "
                  "one of them.", file=sys.stderr)
            return EXIT_INVALID
        args.cluster_json = args.terraform_plan  # a plan is read like an export (policies.exports)
    problem = _usage_problem(args) or same_outputs(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_INVALID
    if getattr(args, "cluster_policy", None) and not (getattr(args, "cluster_json", None) or
                                                      getattr(args, "workspace", False)):
        print("error: --cluster-policy goes with --cluster-json or --workspace. Fix: add --cluster-json FILE.",
              file=sys.stderr)
        return EXIT_INVALID
    if getattr(args, "cluster_policy", None) and getattr(args, "format", None) in formats.FINDING_FORMATS:
        print(f"error: --format {args.format} does not carry --cluster-policy results yet. Fix: use --format table "
              "or --json for the cluster-policy evaluation.", file=sys.stderr)
        return EXIT_INVALID
    if getattr(args, "out", None) in (None, "-") and sys.stdout.isatty():
        from .render import fit_terminal

        # a person reading: tables as wide as the window, in colour unless NO_COLOR is set (no-color.org)
        fit_terminal(shutil.get_terminal_size().columns, colour=not os.environ.get("NO_COLOR"))
    try:
        if getattr(args, "rules", None):
            from policies.registry import load_team_rules, use_team_rules

            use_team_rules(load_team_rules(args.rules))
        if args.func not in (cmd_export_policies, cmd_export_terraform) and getattr(args, "out", None) is not None:
            from .commands.common import inputs

            check_out(args.out, inputs(args))  # before any work: a bad --out changes nothing
        # A signal ends the run from its handler: Pulumi's runtime and DuckDB swallow or convert KeyboardInterrupt.
        with exit_on_signal():
            return args.func(args)
    except KeyboardInterrupt:
        cleanup_partial_outputs()
        print(MESSAGE, file=sys.stderr)
        return EXIT_INTERRUPTED
    except RecursionError:
        print("error: an input is nested too deeply to read. Fix: pass a Databricks export or a stack file as "
              "written by their tools.", file=sys.stderr)
        return EXIT_INVALID
    except InputError as exc:
        print(printable(f"error: {exc}"), file=sys.stderr)
        return EXIT_INVALID
    except ProgramError as exc:
        print(printable(f"error: the Pulumi program failed: {exc}"), file=sys.stderr)
        return EXIT_VIOLATIONS
    except WorkspaceUnavailable as exc:
        print(printable(f"error: {exc} (not the input's fault: try again later)"), file=sys.stderr)
        return EXIT_VIOLATIONS
    except Exception as exc:  # noqa: BLE001 - the CLI prints a sentence, not a traceback
        if os.environ.get("STACKPLAN_DEBUG"):
            raise
        print(printable(f"error: unexpected {type(exc).__name__}: {exc} (set STACKPLAN_DEBUG=1 for a traceback)"),
              file=sys.stderr)
        return EXIT_VIOLATIONS
