"""``--format json`` (and ``--json``): the documents scripts read; their shapes are a public contract."""

from __future__ import annotations

import json
from typing import Any

from stackplan.multi import StackRun
from stackplan.reportdoc import AdviceReport, AuditReport, DriftReport, Report, StacksReport


def _error_doc(run: StackRun) -> dict[str, Any]:
    return {"stack": run.stack, "stack_file": run.source, "error": run.error}


def _stack_doc(kind: str, run: StackRun) -> dict[str, Any]:
    if run.plan is None:
        return _error_doc(run)
    as_json = run.plan.to_json()
    if kind != "cost":
        return as_json
    return {"stack": run.plan.stack, "cost": as_json.get("cost"), "violations": as_json.get("violations"),
            "diff": run.diff}


def document(report: Report) -> Any:
    """The JSON value of a report."""
    if isinstance(report, StacksReport):
        docs = [_stack_doc(report.kind, r) for r in report.runs]
        return {"stacks": docs} if report.several else docs[0]
    if isinstance(report, AuditReport):
        doc: dict[str, Any] = {"source": report.source, "checked": report.audit.counts,
                               "violations": [v.to_json() for v in report.audit.violations]}
        if report.cluster_policy is not None:
            doc["cluster_policy"] = report.cluster_policy
        return doc
    if isinstance(report, DriftReport):
        return {"stack": report.plan.stack, "stack_file": report.plan.stack_file, "against": report.against,
                "counts": report.counts, "drift": [v.to_json() for v in report.found]}
    assert isinstance(report, AdviceReport)
    return report.doc


def render(report: Report) -> str:
    text = json.dumps(document(report), indent=2, allow_nan=False)
    return text + "\n" if isinstance(report, AdviceReport) else text
