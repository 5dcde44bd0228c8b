"""``--format markdown``: a pull-request comment (the templates under ``templates/``)."""

from __future__ import annotations

from stackplan_reports.formats._pages import page
from stackplan_reports.reportdoc import Report


def render(report: Report) -> str:
    return page(report, html=False)
