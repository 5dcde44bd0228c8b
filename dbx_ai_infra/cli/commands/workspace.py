"""``audit --cluster-json|--workspace`` (alias ``check --cluster-json|--workspace``) and ``check --terraform|
--terraform-plan``: the rules over what runs in a workspace or what Terraform would make; ``drift`` (alias ``check
--stack STACK --cluster-json|--workspace``): where the workspace differs from the stack; with ``--cluster-policy``,
each cluster against a policy definition."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from dbx_ai_infra.cli.commands import common
from dbx_ai_infra.dbxtypes.errors import InputError, clip
from dbx_ai_infra.dbxtypes.plan import NOT_JUDGED
from dbx_ai_infra.dbxtypes.shape import shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER
from dbx_ai_infra.engine.exceptions import apply_exceptions
from dbx_ai_infra.engine.exits import EXIT_OK, EXIT_VIOLATIONS
from dbx_ai_infra.engine.inputs import read_json
from dbx_ai_infra.engine.pipeline import build_plan
from dbx_ai_infra.guardrails import DefinitionError, evaluate_shape, parse_definition
from dbx_ai_infra.policies.registry import RULES_BY_NAME
from dbx_ai_infra.reports import formats
from dbx_ai_infra.reports.reportdoc import AuditReport, DriftReport
from dbx_ai_infra.sources.audit import ExportAudit, audit_export_path, audit_items, read_export
from dbx_ai_infra.sources.drift import drift
from dbx_ai_infra.sources.exports import export_items, require_terraform_plan
from dbx_ai_infra.sources.hcl import terraform_module_read
from dbx_ai_infra.sources.tfexpand import Skipped, not_evaluated_violations
from dbx_ai_infra.sources.workspace import read_workspace, save_export
from dbx_ai_infra.stackspec.load import load_exceptions_file


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


def _not_evaluated(audit: ExportAudit, skipped: list[Skipped]) -> None:
    """The blocks of Terraform code not evaluated (count/for_each not known here, a module not read): counted, and
    one advisory finding each at its file and line, so every format lists them (SARIF as notes)."""
    audit.counts["not_evaluated"] = len(skipped)
    for finding, block in zip(not_evaluated_violations(skipped), skipped, strict=True):
        audit.violations.append(finding)
        audit.names.add(block.address)
        if block.file:
            audit.files[finding.urn] = block.file
            if block.line:
                audit.lines[finding.urn] = block.line


def cmd_audit(args: argparse.Namespace) -> int:
    """``audit --cluster-json FILE|DIR`` or ``audit --workspace`` (and their alias ``check --cluster-json|
    --workspace``); ``check --terraform PATH`` or ``--terraform-plan FILE``."""
    if getattr(args, "terraform_plan", None):  # a file that is no Terraform plan is exit 2 before any work
        require_terraform_plan(args.terraform_plan)
    config = common.policy_config(args)
    fmt = common.fmt(args)
    common.check_baseline_out(args)
    wanted = {"places": fmt in formats.FINDING_FORMATS, "clusters": bool(args.cluster_policy)}
    if args.workspace:
        source, items = read_live(args)
        audit = audit_items(items, config, **wanted)
    elif getattr(args, "terraform", None):  # Terraform code as written, read as the plan Terraform would make
        source = args.terraform
        code = terraform_module_read(args.terraform, args.var_file)
        audit = audit_items(code.items, config, **wanted)
        for item in code.items:  # located by file and line: the address needs no label beside it
            if item.name in code.lines:
                audit.files[item.urn], audit.lines[item.urn] = code.lines[item.name]
                audit.labels.pop(item.urn, None)
        _not_evaluated(audit, code.not_evaluated)
    else:  # an export, or a Terraform plan read like one (check --terraform-plan)
        source = getattr(args, "terraform_plan", None) or args.cluster_json
        audit = audit_export_path(source, config, **wanted)
        for note in audit.notes:
            print(f"note: {note}", file=sys.stderr)
    if getattr(args, "exceptions", None):  # accepted findings, the stack's exceptions shape, named as reported


        audit.violations, notes = apply_exceptions(
            audit.violations, load_exceptions_file(args.exceptions), rules=list(RULES_BY_NAME),
            resources=audit.names, today=datetime.now(UTC).date(), source=args.exceptions, field="exceptions",
            of="the plan or export")
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
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


def cmd_drift(args: argparse.Namespace) -> int:
    """``drift --stack STACK --workspace|--cluster-json`` (and its alias ``check --stack STACK --workspace|
    --cluster-json``, where a Terraform plan is read like an export): where the workspace differs from the stack."""
    config = common.policy_config(args)
    export = getattr(args, "terraform_plan", None) or args.cluster_json
    against, items = read_live(args) if args.workspace else (export, read_export(export))
    plan = build_plan(args.stack[0], policy_config=config, with_policies=False)
    found = drift(plan, items)
    plan.violations = found
    report = DriftReport(plan, against, found, {i.urn: i.source for i in items}, config)
    common.emit(args, formats.render(common.fmt(args), report))
    return EXIT_OK
