"""The declarations of ``audit`` (the rules over what runs in a workspace: an export or a live read) and ``drift``
(where a workspace differs from a stack): their arguments and usage checks, and which module does their work
(`audit_work`; drift's is `dbx_ai_infra.cli.commands.drift`). ``check --cluster-json|--workspace`` (with
``--stack``: drift) stays their documented alias (`dbx_ai_infra.cli.commands.stacks_cli`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from dbx_ai_infra.cli.commands.args import Command, Run, common, format_arg, lazy
from dbx_ai_infra.reports import formats
from dbx_ai_infra.sources.workspace import CONNECT_TIMEOUT_S, HTTP_TIMEOUT_S, RETRY_BUDGET_S

#: A usage check: when it fails (a predicate of the arguments), and its message (or how to word it from them).
Check = tuple[Callable[[argparse.Namespace], bool], "str | Callable[[argparse.Namespace], str]"]


def workspace_args(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """A workspace as a source: a live read (``--workspace``, ``--profile``, ``--save-export``) or an export
    (``--cluster-json``)."""
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


def baseline_args(p: argparse.ArgumentParser) -> None:
    """A baseline: today's findings recorded, or an earlier record's findings reported as baselined."""
    p.add_argument("--write-baseline", metavar="FILE",
                   help="also record today's findings in FILE (a baseline, for --baseline in later runs)")
    p.add_argument("--baseline", metavar="FILE",
                   help="report the findings FILE holds as baselined (they fail nothing) and fail only on new ones; "
                        "list the baselined ones that are gone as fixed")


def findings_args(p: argparse.ArgumentParser) -> None:
    """What a run that judges findings takes: a baseline, accepted exceptions, and how it fails."""
    baseline_args(p)
    p.add_argument("--exceptions", metavar="FILE",
                   help="accepted findings (YAML or JSON, the stack's exceptions shape: rule, resource as the report "
                        "names it, reason, expires)")


def fail_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--soft-fail", action="store_true",
                   help="exit 0 whatever the policies find (the report still shows it); invalid input still exits 2")
    p.add_argument("--fail-on-unknown", action="store_true",
                   help="exit 1 when a rule could not judge a resource (a field it reads is unknown here: a data "
                        "source, a variable with no value), for a strict gate; by default it is reported as not "
                        "judged and fails nothing")


def _audit_arguments(p: argparse.ArgumentParser) -> None:
    workspace_args(p)
    p.add_argument("--cluster-policy", metavar="POLICY.json", help="also evaluate a cluster policy definition")
    findings_args(p)
    common(p)
    format_arg(p, "audit")
    fail_args(p)


def first_problem(args: argparse.Namespace, checks: tuple[Check, ...]) -> str | None:
    """The message of the first check whose predicate holds, or None."""
    for holds, message in checks:
        if holds(args):
            return message(args) if callable(message) else message
    return None


#: What goes with a live read only (audit, drift and check's alias of them).
LIVE_READ_CHECK: Check = (lambda a: bool((a.profile or a.save_export) and not a.workspace),
                          "--profile and --save-export go with --workspace. Fix: add --workspace.")

#: A cluster policy's evaluation is reported as a table or JSON only (audit and check's alias of it).
CLUSTER_POLICY_FORMAT_CHECK: Check = (
    lambda a: bool(a.cluster_policy and a.format in formats.FINDING_FORMATS),
    lambda a: f"--format {a.format} does not carry --cluster-policy results yet. Fix: use --format table or --json "
              "for the cluster-policy evaluation.")

#: The workspace source's usage checks, shared by audit and drift: one source, and what goes with a live read.
SOURCE_CHECKS: tuple[Check, ...] = (
    (lambda a: bool(a.cluster_json and a.workspace),
     "--cluster-json and --workspace are two sources of clusters. Fix: pass one of them."),
    (lambda a: not (a.cluster_json or a.workspace),
     "no workspace to read. Fix: pass --cluster-json FILE|DIR (an export) or --workspace (a live read)."),
    LIVE_READ_CHECK,
)

AUDIT_CHECKS: tuple[Check, ...] = (*SOURCE_CHECKS, CLUSTER_POLICY_FORMAT_CHECK)


def _audit_problem(args: argparse.Namespace) -> str | None:
    return first_problem(args, AUDIT_CHECKS)


def audit_work(args: argparse.Namespace) -> Run:
    """The work of an audit, by what it reads: Terraform code (``check --terraform``), findings a team accepts
    (``--exceptions``: the stack spec's shape), else a workspace or a Terraform plan. Each is its own module, so an
    audit of an export loads neither the Terraform reader nor the stack spec's models."""
    if getattr(args, "terraform", None):
        return lazy("dbx_ai_infra.cli.commands.terraform", "cmd_terraform")
    if getattr(args, "exceptions", None):
        return lazy("dbx_ai_infra.cli.commands.accepted", "cmd_audit")
    return lazy("dbx_ai_infra.cli.commands.workspace", "cmd_audit")


def _audit(args: argparse.Namespace) -> int:
    return audit_work(args)(args)


AUDIT = Command(
    "audit", "evaluate the policies on what runs in a workspace: an export or a live read",
    "  python -m stackplan audit --cluster-json clusters.json\n"
    "  python -m stackplan audit --cluster-json export/ --cluster-policy policy.json\n"
    "  python -m stackplan audit --workspace --profile prod --save-export export/ --format sarif --out audit.sarif\n",
    _audit_arguments, _audit, _audit_problem)


def _drift_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stack", action="append", required=True, metavar="NAME|FILE",
                   help="the stack the workspace is compared with: a name (prod) or the path of a stack YAML file")
    workspace_args(p)
    p.add_argument("--json", action="store_true", help="write JSON instead of a table")
    p.add_argument("--out", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    p.add_argument("--policy-config", metavar="FILE",
                   help="policy config JSON: its limits bound the stack as they do in check")
    format_arg(p, "drift")


DRIFT_CHECKS: tuple[Check, ...] = (
    (lambda a: len(set(a.stack)) > 1,
     "drift compares one stack with a workspace. Fix: pass one --stack with --workspace or --cluster-json."),
    *SOURCE_CHECKS,
)


def _drift_problem(args: argparse.Namespace) -> str | None:
    return first_problem(args, DRIFT_CHECKS)


DRIFT = Command(
    "drift", "where a workspace (an export or a live read) differs from a stack",
    "  python -m stackplan drift --stack prod --cluster-json examples/workspace-export\n"
    "  python -m stackplan drift --stack prod --workspace --profile prod --format sarif --out drift.sarif\n",
    _drift_arguments, lazy("dbx_ai_infra.cli.commands.drift", "cmd_drift"), _drift_problem)
