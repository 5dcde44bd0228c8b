"""``--format html``: a standalone page (inline CSS and SVG, nothing fetched from the network)."""

from __future__ import annotations

from stackplan_reports.formats._pages import page
from stackplan_reports.reportdoc import Report


def render(report: Report) -> str:
    return page(report, html=True)
