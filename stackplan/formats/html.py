"""``--format html``: a standalone page (inline CSS and SVG, nothing fetched from the network)."""

from __future__ import annotations

from stackplan.reportdoc import Report

from ._pages import page


def render(report: Report) -> str:
    return page(report, html=True)
