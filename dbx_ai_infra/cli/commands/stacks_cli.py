"""The declarations of ``preview``, ``check`` and ``cost``: their arguments and usage checks (the work is in
`dbx_ai_infra.cli.commands.stacks`, and for ``check`` of a workspace in `dbx_ai_infra.cli.commands.workspace`)."""

from __future__ import annotations

import argparse

from dbx_ai_infra.cli.commands.args import (
    Command,
    common,
    exit_codes,
    format_arg,
    lazy,
    prices_arg,
    region_arg,
    stacks_arg,
    var_file_arg,
)
from dbx_ai_infra.reports import formats
from dbx_ai_infra.sources.workspace import CONNECT_TIMEOUT_S, HTTP_TIMEOUT_S, RETRY_BUDGET_S

#: cost fails on the stack's budget alone: its other findings are check's to fail on.
COST_EXIT_CODES = exit_codes(EXIT_VIOLATIONS="over the stack's budget (dbx-ai-infra:budget), or one that cannot be "
                             "verified; other findings are check's to fail on (or a failure that is not the input's "
                             "fault)")


def _preview_arguments(p: argparse.ArgumentParser) -> None:
    stacks_arg(p.add_mutually_exclusive_group(required=True))
    common(p)
    format_arg(p, "preview")
    prices_arg(p)
    region_arg(p)


PREVIEW = Command(
    "preview", "run the program offline; show resources, violations and costs",
    "  python -m stackplan preview --stack dev\n"
    "  python -m stackplan preview --stack stacks/Pulumi.prod.yaml --json --out plan.json\n"
    "  python -m stackplan preview --all --format sarif --out stackplan.sarif\n",
    _preview_arguments, lazy("dbx_ai_infra.cli.commands.stacks", "cmd_preview"))


def _check_arguments(p: argparse.ArgumentParser) -> None:
    stacks_arg(p.add_mutually_exclusive_group())
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
    p.add_argument("--terraform", metavar="PATH",
                   help="Terraform code as written: a .tf file or a module directory (variables, tfvars, locals, "
                        "count/for_each, local modules), read as the plan Terraform would make: no plan, provider or "
                        "credentials needed")
    var_file_arg(p)
    p.add_argument("--exceptions", metavar="FILE",
                   help="with --terraform, --terraform-plan, --cluster-json or --workspace: accepted findings (YAML "
                        "or JSON, the stack's exceptions shape: rule, resource as the report names it, reason, "
                        "expires)")
    p.add_argument("--cluster-policy", metavar="POLICY.json",
                   help="with --cluster-json: also evaluate a cluster policy definition")
    common(p)
    format_arg(p, "check", "audit", "drift")
    p.add_argument("--soft-fail", action="store_true",
                   help="exit 0 whatever the policies find (the report still shows it); invalid input still exits 2")
    p.add_argument("--fail-on-unknown", action="store_true",
                   help="exit 1 when a rule could not judge a resource (a field it reads is unknown here: a data "
                        "source, a variable with no value), for a strict gate; by default it is reported as not "
                        "judged and fails nothing")


def _check_problem(args: argparse.Namespace) -> str | None:
    """check's one source of clusters (a Terraform plan is read like an export: it becomes ``cluster_json``), drift's
    one stack, the options that go with a live read or an export, and a format for the report it makes."""
    given = [flag for flag, value in (("--terraform", args.terraform), ("--terraform-plan", args.terraform_plan),
                                      ("--cluster-json", args.cluster_json), ("--workspace", args.workspace)) if value]
    if len(given) > 1:
        return (f"{' and '.join(given)} are {'two' if len(given) == 2 else 'several'} sources of clusters. Fix: pass "
                "one of them.")
    if args.var_file and not args.terraform:
        return "--var-file goes with --terraform. Fix: add --terraform PATH."
    if args.terraform_plan:
        args.cluster_json = args.terraform_plan  # a plan is read like an export (dbx_ai_infra.sources.exports)
    stacks = bool(args.stack or args.all)
    if args.terraform and stacks:
        return "--terraform is checked on its own, not against a stack. Fix: drop --stack/--all, or --terraform."
    if args.cluster_json and args.workspace:
        return "--cluster-json and --workspace are two sources of clusters. Fix: pass one of them."
    if stacks and (args.cluster_json or args.workspace) and (args.all or len(set(args.stack)) > 1):
        return ("drift compares one stack with a workspace. Fix: pass one --stack with --workspace or "
                "--cluster-json.")
    if not stacks and not args.cluster_json and not args.workspace and not args.terraform:
        return ("nothing to check. Fix: pass --stack NAME, --all, --terraform PATH, --cluster-json FILE or "
                "--workspace.")
    if (args.profile or args.save_export) and not args.workspace:
        return "--profile and --save-export go with --workspace. Fix: add --workspace."
    kind = ("drift" if stacks else "audit") if (args.cluster_json or args.workspace or args.terraform) else "check"
    fmt = "json" if args.json else args.format
    if not formats.accepts(fmt, kind):
        return (f"--format {fmt} is for {', '.join(formats.kinds_of(fmt))} reports, not "
                f"{'a workspace audit' if kind == 'audit' else 'drift'}. Fix: pass one of "
                f"{', '.join(formats.choices(kind))}.")
    return None


def _check_sources(args: argparse.Namespace) -> str | None:
    """What `_check_problem` leaves for after ``--out`` is checked: ``--cluster-policy`` goes with an export."""
    if args.cluster_policy and not (args.cluster_json or args.workspace):
        return "--cluster-policy goes with --cluster-json or --workspace. Fix: add --cluster-json FILE."
    if args.cluster_policy and args.format in formats.FINDING_FORMATS:
        return (f"--format {args.format} does not carry --cluster-policy results yet. Fix: use --format table or "
                "--json for the cluster-policy evaluation.")
    return None


def _check(args: argparse.Namespace) -> int:
    """Stacks, a workspace (export or live read), or the drift between a stack and a workspace."""
    if args.stack and (args.cluster_json or args.workspace):
        return lazy("dbx_ai_infra.cli.commands.workspace", "cmd_drift")(args)
    if args.cluster_json or args.workspace or getattr(args, "terraform", None):
        return lazy("dbx_ai_infra.cli.commands.workspace", "cmd_audit")(args)
    return lazy("dbx_ai_infra.cli.commands.stacks", "cmd_check")(args)


def _check_all(args: argparse.Namespace) -> str | None:
    return _check_problem(args) or _check_sources(args)


CHECK = Command(
    "check", "evaluate the policies on stacks or on exported cluster JSON",
    "  python -m stackplan check --stack prod\n"
    "  python -m stackplan check --stack dev --stack prod --format github\n"
    "  python -m stackplan check --cluster-json clusters.json --cluster-policy policy.json\n",
    _check_arguments, _check, _check_all)


def _cost_arguments(p: argparse.ArgumentParser) -> None:
    sources = p.add_mutually_exclusive_group(required=True)
    stacks_arg(sources)
    sources.add_argument("--terraform-plan", metavar="FILE",
                         help="price a Terraform plan's JSON (terraform show -json PLANFILE) instead of a stack; "
                              "--against another plan's JSON diffs the two")
    sources.add_argument("--terraform", metavar="PATH",
                         help="price Terraform code as written (a .tf file or a module directory) instead of a "
                              "stack; --against another one (or a plan's JSON) diffs the two")
    sources.add_argument("--cluster-json", metavar="FILE|DIR",
                         help="price a workspace export (what check --cluster-json reads, or check --workspace "
                              "--save-export DIR wrote): its clusters, jobs, pools and serving endpoints, GPU, "
                              "serverless GPU and provisioned throughput")
    var_file_arg(p)
    p.add_argument("--against", metavar="BASE",
                   help="a stack name, a stack file, a plan JSON saved earlier, or a directory of base plans "
                        "(STACK.json each; a stack with none there is new)")
    format_arg(p, "cost")
    prices_arg(p)
    region_arg(p)
    p.add_argument("--json", action="store_true", help="write JSON instead of a table (= --format json)")
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    p.add_argument("--policy-config", metavar="FILE", help="policy config JSON, as Pulumi takes it")
    p.add_argument("--fail-on-unknown", action="store_true",
                   help="exit 1 when the cost cannot be known whole: a resource unpriced or not evaluated, or (with "
                        "--against) a change whose delta is unknown; by default the total says it is incomplete "
                        "and fails nothing")


COST = Command(
    "cost", "price stacks; with --against, what the change adds or removes",
    "  python -m stackplan cost --stack prod\n"
    "  python -m stackplan cost --stack prod --against dev --format markdown --out cost.md\n"
    "  python -m stackplan cost --all --against base-plans/ --format markdown --out report.md\n",
    _cost_arguments, lazy("dbx_ai_infra.cli.commands.stacks", "cmd_cost"), exit_codes=COST_EXIT_CODES)
