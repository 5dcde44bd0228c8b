"""``--exceptions FILE`` of an audit (``audit``, ``check --terraform|--terraform-plan``): the findings a team accepts,
in the stack's ``exceptions`` shape (`dbx_ai_infra.stackspec.models.ExceptionSpec`), marked as reported. Its own
module: reading that shape loads the stack spec's models, which an audit without ``--exceptions`` never needs."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from dbx_ai_infra.cli.commands.workspace import run_audit
from dbx_ai_infra.engine.exceptions import apply_exceptions
from dbx_ai_infra.policies.registry import RULES_BY_NAME
from dbx_ai_infra.sources.audit import ExportAudit
from dbx_ai_infra.stackspec.load import load_exceptions_file


def accept(args: argparse.Namespace, audit: ExportAudit) -> None:
    """The exceptions file's accepted findings marked on ``audit``'s (resources named as reported), its notes on
    stderr."""
    audit.violations, notes = apply_exceptions(
        audit.violations, load_exceptions_file(args.exceptions), rules=list(RULES_BY_NAME),
        resources=audit.names, today=datetime.now(UTC).date(), source=args.exceptions, field="exceptions",
        of="the plan or export")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def cmd_audit(args: argparse.Namespace) -> int:
    """An audit of a workspace or a Terraform plan with ``--exceptions``."""
    return run_audit(args, accept=accept)
