"""``--format github``: GitHub Actions workflow commands, one annotation per finding
(`stackplan.findings.github_commands`)."""

from __future__ import annotations

from stackplan.findings import github_commands
from stackplan.reportdoc import Report

from ._findings import findings_of


def render(report: Report) -> str:
    found = findings_of(report)
    return github_commands(found.located, found.errors)
