"""``--format github``: GitHub Actions workflow commands, one annotation per violation
(`dbx_ai_infra.reports.located.github_commands`)."""

from __future__ import annotations

from dbx_ai_infra.reports.formats._located import located_of
from dbx_ai_infra.reports.located import github_commands
from dbx_ai_infra.reports.reportdoc import Report


def render(report: Report) -> str:
    found = located_of(report)
    return github_commands(found.located, found.errors)
