"""``--format github``: GitHub Actions workflow commands, one annotation per finding
(`stackplan_reports.findings.github_commands`)."""

from __future__ import annotations

from stackplan_reports.findings import github_commands
from stackplan_reports.formats._findings import findings_of
from stackplan_reports.reportdoc import Report


def render(report: Report) -> str:
    found = findings_of(report)
    return github_commands(found.located, found.errors)
