"""``--format html``: a standalone page (inline CSS and SVG, nothing fetched from the network)."""

from __future__ import annotations

from dbx_ai_infra.reports.formats._pages import page
from dbx_ai_infra.reports.reportdoc import Report


def render(report: Report) -> str:
    return page(report, html=True)
