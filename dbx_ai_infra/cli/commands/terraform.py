"""``check --terraform PATH``: the rules over Terraform code as written, read as the plan Terraform would make, each
finding at its file and line; the blocks not evaluated counted and listed. Its own module: the Terraform reader
(`dbx_ai_infra.sources.hcl`) is loaded by this run only."""

from __future__ import annotations

import argparse
from typing import Any

from dbx_ai_infra.cli.commands.accepted import accept
from dbx_ai_infra.cli.commands.workspace import run_audit
from dbx_ai_infra.sources.audit import ExportAudit, audit_items
from dbx_ai_infra.sources.hcl import terraform_module_read
from dbx_ai_infra.sources.tfexpand import Skipped, not_evaluated_violations


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


def audit_code(args: argparse.Namespace, config: Any, wanted: dict[str, bool]) -> tuple[str, ExportAudit]:
    """Terraform code as written, read as the plan Terraform would make."""
    code = terraform_module_read(args.terraform, args.var_file)
    audit = audit_items(code.items, config, **wanted)
    for item in code.items:  # located by file and line: the address needs no label beside it
        if item.name in code.lines:
            audit.files[item.urn], audit.lines[item.urn] = code.lines[item.name]
            audit.labels.pop(item.urn, None)
    _not_evaluated(audit, code.not_evaluated)
    return args.terraform, audit


def cmd_terraform(args: argparse.Namespace) -> int:
    """``check --terraform PATH`` (with ``--exceptions``: its accepted findings marked)."""
    return run_audit(args, audit_code, accept if getattr(args, "exceptions", None) else None)
