"""``--format markdown``: a pull-request comment (the templates under ``templates/``)."""

from __future__ import annotations

from stackplan.reportdoc import Report

from ._pages import page


def render(report: Report) -> str:
    return page(report, html=False)
