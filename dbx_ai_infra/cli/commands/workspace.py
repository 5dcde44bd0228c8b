"""``audit --cluster-json|--workspace`` (alias ``check --cluster-json|--workspace``) and ``check --terraform-plan``:
the rules over what runs in a workspace (an export or a live read) or what a Terraform plan would make; with
``--cluster-policy``, each cluster against a policy definition.

The other audits' work lives beside it, each loaded only by the run that needs it (`audit_work` in
`dbx_ai_infra.cli.commands.workspace_cli` picks one): Terraform code (``check --terraform``) in
`dbx_ai_infra.cli.commands.terraform`, accepted findings (``--exceptions``, the stack spec's shape) in
`dbx_ai_infra.cli.commands.accepted`, and ``drift`` (a stack through the pipeline) in
`dbx_ai_infra.cli.commands.drift`. An audit of an export loads neither the Terraform reader, nor the stack spec,
nor the engine."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import Any

from dbx_ai_infra.cli.commands import common
from dbx_ai_infra.dbxtypes.errors import InputError, clip
from dbx_ai_infra.dbxtypes.plan import NOT_JUDGED
from dbx_ai_infra.dbxtypes.shape import shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER
from dbx_ai_infra.engine.exits import EXIT_OK, EXIT_VIOLATIONS
from dbx_ai_infra.engine.inputs import read_json
from dbx_ai_infra.guardrails import DefinitionError, evaluate_shape, parse_definition
from dbx_ai_infra.reports import formats
from dbx_ai_infra.reports.reportdoc import AuditReport
from dbx_ai_infra.sources.audit import ExportAudit, audit_export_path, audit_items
from dbx_ai_infra.sources.exports import export_items, require_terraform_plan
from dbx_ai_infra.sources.workspace import read_workspace, save_export

#: Where an audit's findings come from: (the source as the report names it, the audit) from the arguments, the policy
#: config and what the report asks of the audit (``places``, ``clusters``: `dbx_ai_infra.sources.audit.audit_items`).
Audited = Callable[[argparse.Namespace, Any, dict[str, bool]], tuple[str, ExportAudit]]
#: What a run does to the findings before the baselines see them (``--exceptions``:
#: `dbx_ai_infra.cli.commands.accepted.accept`).
Accept = Callable[[argparse.Namespace, ExportAudit], None]


def read_live(args: argparse.Namespace) -> tuple[str, list[Any]]:
    """``audit --workspace``: ``workspace <host>`` and what was read through databricks-sdk (saved with
    ``--save-export``)."""
    host, doc = read_workspace(args.profile, progress=sys.stderr.isatty())
    if args.save_export:
        for path in save_export(doc, args.save_export):
            print(f"wrote {path}", file=sys.stderr)
    return f"workspace {host}", export_items(doc, f"workspace {host}")


def cluster_policy_results(clusters: list[Mapping[str, Any]], policy_path: str) -> list[dict[str, Any]]:
    """Each cluster against the ``--cluster-policy`` definition: allowed or refused, and why."""
    doc = read_json(policy_path, "cluster policy")
    if isinstance(doc, dict) and isinstance(doc.get("policies"), list) and "definition" not in doc:
        names = [str(p.get("name")) for p in doc["policies"] if isinstance(p, dict) and p.get("name")]
        raise InputError.single(
            policy_path, "policies", f"is a list of {len(doc['policies'])} policies (the List policies response).",
            "pass one policy: its object or its definition, e.g. `jq '.policies[0]'`"
            + (f"; the names here: {clip(', '.join(names))}" if names else "") + ".")
    # Accept a bare definition, or a policy object as the Cluster Policies API returns it.
    definition = doc.get("definition", doc) if isinstance(doc, dict) else doc
    try:
        definition = parse_definition(definition)
    except DefinitionError as exc:
        raise InputError(policy_path, str(exc)) from None
    results = []
    for index, cluster in enumerate(clusters):
        outcome = evaluate_shape(definition, shapes_of_resource(CLUSTER, cluster, source="api")[0])
        results.append({
            "cluster": cluster.get("cluster_name") or cluster.get("cluster_id") or f"#{index}",
            "allowed": outcome.allowed,
            "violations": [{"path": v.path, "limit": v.limit, "message": v.message} for v in outcome.violations],
            "unchecked": list(outcome.unchecked),
        })
    return results


def audit_workspace(args: argparse.Namespace, config: Any, wanted: dict[str, bool]) -> tuple[str, ExportAudit]:
    """A live read (``--workspace``), or an export or a Terraform plan read like one (``check --terraform-plan``)."""
    if args.workspace:
        source, items = read_live(args)
        return source, audit_items(items, config, **wanted)
    source = getattr(args, "terraform_plan", None) or args.cluster_json
    audit = audit_export_path(source, config, **wanted)
    for note in audit.notes:
        print(f"note: {note}", file=sys.stderr)
    return source, audit


def run_audit(args: argparse.Namespace, audited: Audited = audit_workspace, accept: Accept | None = None) -> int:
    """An audit's run: its findings (``audited``), those accepted (``accept``), the baselines, the report and the
    exit code."""
    if getattr(args, "terraform_plan", None):  # a file that is no Terraform plan is exit 2 before any work
        require_terraform_plan(args.terraform_plan)
    if getattr(args, "exceptions", None) and accept is None:  # `audit_work` sends these runs to the module reading it
        raise TypeError("an audit with --exceptions runs through dbx_ai_infra.cli.commands.accepted")
    config = common.policy_config(args)
    fmt = common.fmt(args)
    common.check_baseline_out(args)
    wanted = {"places": fmt in formats.FINDING_FORMATS, "clusters": bool(args.cluster_policy)}
    source, audit = audited(args, config, wanted)
    if accept is not None:
        accept(args, audit)
    common.write_baseline(args, audit.violations, {})  # a workspace export's findings: source "workspace"
    audit.violations = common.with_baseline(args, audit.violations, {})
    report = AuditReport(source, audit, config, cluster_policy_results(audit.clusters, args.cluster_policy)
                         if args.cluster_policy else None)
    common.emit(args, formats.render(fmt, report))
    failed = any(v.mandatory for v in audit.violations) or \
        any(not r["allowed"] for r in report.cluster_policy or []) or \
        (getattr(args, "fail_on_unknown", False) and any(v.enforcement == NOT_JUDGED and not v.excepted
                                                          for v in audit.violations))
    return EXIT_VIOLATIONS if failed and not args.soft_fail else EXIT_OK


def cmd_audit(args: argparse.Namespace) -> int:
    """``audit --cluster-json FILE|DIR`` or ``audit --workspace`` (and their alias ``check --cluster-json|
    --workspace``); ``check --terraform-plan FILE``."""
    return run_audit(args)
