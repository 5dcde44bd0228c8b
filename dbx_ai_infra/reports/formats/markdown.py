"""``--format markdown``: a pull-request comment (the templates under ``dbx_ai_infra/templates/``)."""

from __future__ import annotations

from dbx_ai_infra.reports.formats._pages import page
from dbx_ai_infra.reports.reportdoc import Report


def render(report: Report) -> str:
    return page(report, html=False)
