"""``--format github``: GitHub Actions workflow commands, one annotation per finding
(`dbx_ai_infra.reports.findings.github_commands`)."""

from __future__ import annotations

from dbx_ai_infra.reports.findings import github_commands
from dbx_ai_infra.reports.formats._findings import findings_of
from dbx_ai_infra.reports.reportdoc import Report


def render(report: Report) -> str:
    found = findings_of(report)
    return github_commands(found.located, found.errors)
