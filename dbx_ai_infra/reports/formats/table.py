"""``--format table``: what a person reads in a terminal (rich tables, as wide as the window)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dbx_ai_infra.dbxtypes.text import printable
from dbx_ai_infra.reports.reportdoc import AdviceReport, AuditReport, DriftReport, Report, StacksReport


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _stacks(report: StacksReport) -> str:
    from dbx_ai_infra.engine.multi import ordered
    from dbx_ai_infra.reports.render import diff_table, plan_table, violations_table

    parts = []
    runs = ordered(report.runs) if report.kind == "cost" and report.several else report.runs
    for r in runs:
        if r.plan is None:
            parts.append(printable(r.error_line))
        elif report.kind == "check":
            parts.append(printable(f"Checked stack {r.plan.stack} ({r.plan.stack_file}): "
                                   f"{_count(len(r.plan.resources), 'resource')}.\n")
                         + violations_table(r.plan.violations or []))
        else:
            parts.append(plan_table(r.plan) + (diff_table(r.diff) if r.diff else ""))
    return "\n".join(parts)


def _audit(report: AuditReport) -> str:
    from dbx_ai_infra.policies.items import summary_text
    from dbx_ai_infra.reports.render import violations_table

    text = printable(f"Checked {report.source}: {summary_text(report.audit.counts)}.\n") + \
        violations_table(report.audit.violations)
    for r in report.cluster_policy or []:
        lines = [f"Cluster policy: {r['cluster']}: {'allowed' if r['allowed'] else 'refused'}\n",
                 *(f"  - {v['message']}\n" for v in r["violations"]),
                 *(f"  - not checked: {u}\n" for u in r["unchecked"])]
        text += "".join(map(printable, lines))
    return text


def _drift(report: DriftReport) -> str:
    from dbx_ai_infra.reports.render import violations_table

    plan, counts = report.plan, report.counts
    head = printable(f"Drift of stack {plan.stack} ({plan.stack_file}) against {report.against}: "
                     f"{_count(counts['drift-changed'], 'changed field')}, "
                     f"{_count(counts['drift-missing'], 'missing resource')}, "
                     f"{counts['drift-unowned-gpu']} GPU compute owned by no stack.\n")
    return head + (violations_table(report.found, "Drift") if report.found else "No drift.\n")


def _advise(report: AdviceReport) -> str:
    from dbx_ai_infra.reports.advise_report import advise_table
    from dbx_ai_infra.reports.render import current_width

    return advise_table(report.doc, current_width())


#: Each report kind's table (one drawer a kind: a new kind is a line here).
_TABLES: dict[str, Callable[[Any], str]] = {"preview": _stacks, "check": _stacks, "cost": _stacks, "audit": _audit,
                                            "drift": _drift, "advise": _advise}


def render(report: Report) -> str:
    return _TABLES[report.kind](report)
