"""The declarations of ``preview``, ``check`` and ``cost``: their arguments and usage checks (the work is in
`dbx_ai_infra.cli.commands.stacks`, ``cost``'s in `dbx_ai_infra.cli.commands.cost`; for ``check`` of Terraform, where
`dbx_ai_infra.cli.commands.workspace_cli.audit_work` sends it).
``check --cluster-json|--workspace`` (with ``--stack``: drift) is the documented alias of ``audit`` and ``drift``
(`dbx_ai_infra.cli.commands.workspace_cli`)."""

from __future__ import annotations

import argparse
import sys
from typing import cast

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
from dbx_ai_infra.cli.commands.workspace_cli import (
    CLUSTER_POLICY_FORMAT_CHECK,
    LIVE_READ_CHECK,
    Check,
    audit_work,
    baseline_args,
    fail_args,
    first_problem,
    workspace_args,
)
from dbx_ai_infra.reports import formats

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
    baseline_args(p)
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
    common(p)
    format_arg(p, "check", "audit", "drift")
    fail_args(p)
    aliases = p.add_argument_group(
        "aliases", "a workspace is audit's and drift's: check --cluster-json|--workspace is `stackplan audit`, with "
                   "--stack `stackplan drift` (the same output and exit code; a note on stderr says so)")
    workspace_args(aliases)
    aliases.add_argument("--cluster-policy", metavar="POLICY.json",
                         help="with --cluster-json: also evaluate a cluster policy definition")


def _export(args: argparse.Namespace) -> str | None:
    """The export check reads: ``--cluster-json``, or a Terraform plan (read like an export,
    `dbx_ai_infra.sources.exports`)."""
    return cast("str | None", args.cluster_json or args.terraform_plan)


def _stacks(args: argparse.Namespace) -> bool:
    return bool(args.stack or args.all)


def _kind(args: argparse.Namespace) -> str:
    """The report the arguments ask for: drift (a stack and a workspace), audit (a workspace or Terraform), check."""
    if _export(args) or args.workspace:
        return "drift" if _stacks(args) else "audit"
    return "audit" if args.terraform else "check"


def _sources(args: argparse.Namespace) -> list[str]:
    return [flag for flag, value in (("--terraform", args.terraform), ("--terraform-plan", args.terraform_plan),
                                     ("--cluster-json", args.cluster_json), ("--workspace", args.workspace)) if value]


def _format_problem(args: argparse.Namespace) -> bool:
    return not formats.accepts(common_fmt(args), _kind(args))


def common_fmt(args: argparse.Namespace) -> str:
    return "json" if args.json else str(args.format)


#: check's usage checks, in order: one source of clusters, drift's one stack, what goes with a live read or an
#: export, and a format for the report it makes.
CHECK_CHECKS: tuple[Check, ...] = (
    (lambda a: len(_sources(a)) > 1,
     lambda a: f"{' and '.join(_sources(a))} are {'two' if len(_sources(a)) == 2 else 'several'} sources of "
               "clusters. Fix: pass one of them."),
    (lambda a: bool(a.var_file and not a.terraform), "--var-file goes with --terraform. Fix: add --terraform PATH."),
    (lambda a: bool(a.terraform and _stacks(a)),
     "--terraform is checked on its own, not against a stack. Fix: drop --stack/--all, or --terraform."),
    (lambda a: _kind(a) == "drift" and (a.all or len(set(a.stack)) > 1),
     "drift compares one stack with a workspace. Fix: pass one --stack with --workspace or --cluster-json."),
    (lambda a: not (_stacks(a) or _sources(a)),
     "nothing to check. Fix: pass --stack NAME, --all, --terraform PATH, --cluster-json FILE or --workspace."),
    LIVE_READ_CHECK,
    (_format_problem,
     lambda a: f"--format {common_fmt(a)} is for {', '.join(formats.kinds_of(common_fmt(a)))} reports, not "
               f"{'a workspace audit' if _kind(a) == 'audit' else 'drift'}. Fix: pass one of "
               f"{', '.join(formats.choices(_kind(a)))}."),
    (lambda a: bool(a.cluster_policy and not (_export(a) or a.workspace)),
     "--cluster-policy goes with --cluster-json or --workspace. Fix: add --cluster-json FILE."),
    CLUSTER_POLICY_FORMAT_CHECK,
)


def _check_problem(args: argparse.Namespace) -> str | None:
    return first_problem(args, CHECK_CHECKS)


def _alias_note(args: argparse.Namespace) -> str:
    """The line that says which command a workspace's check is (on stderr: the report stays as it was)."""
    flag = "--workspace" if args.workspace else "--cluster-json"
    if _kind(args) == "drift":
        return f"note: `check --stack STACK {flag}` is `stackplan drift --stack STACK {flag}`"
    return f"note: `check {flag}` is `stackplan audit {flag}`"


def _check(args: argparse.Namespace) -> int:
    """Stacks or Terraform (check's own), or a workspace: audit's and drift's, run as their alias."""
    kind = _kind(args)
    if kind == "check":
        return lazy("dbx_ai_infra.cli.commands.stacks", "cmd_check")(args)
    work = lazy("dbx_ai_infra.cli.commands.drift", "cmd_drift") if kind == "drift" else audit_work(args)
    code = work(args)
    if args.cluster_json or args.workspace:  # after the report: a run that fails or is interrupted says only that
        print(_alias_note(args), file=sys.stderr)
    return code


CHECK = Command(
    "check", "evaluate the policies on stacks or Terraform (code or a plan); a workspace: see audit and drift",
    "  python -m stackplan check --stack prod\n"
    "  python -m stackplan check --stack dev --stack prod --format github\n"
    "  python -m stackplan check --terraform-plan plan.json --format sarif --out plan.sarif\n",
    _check_arguments, _check, _check_problem)


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
    _cost_arguments, lazy("dbx_ai_infra.cli.commands.cost", "cmd_cost"), exit_codes=COST_EXIT_CODES)
