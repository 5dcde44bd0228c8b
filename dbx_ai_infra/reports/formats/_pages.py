"""What the Markdown and HTML formats share: the report templates (`dbx_ai_infra.reports.pages`) for stacks, the advise
report for advise."""

from __future__ import annotations

from dbx_ai_infra.reports.reportdoc import AdviceReport, Report, StacksReport

#: Each stack report's title (the templates' heading), by command.
TITLES = {"preview": "Stack preview", "check": "Policy check", "cost": "Cost review"}
#: The title of a report of several stacks.
COMBINED_TITLES = {"preview": "Stack preview", "check": "Policy check", "cost": "Stack review"}


def page(report: Report, *, html: bool) -> str:
    if isinstance(report, AdviceReport):  # one of two page kinds: advise's own report, or the stacks' templates
        from dbx_ai_infra.reports.advise_report import render_report

        return render_report(report.doc, html=html)
    assert isinstance(report, StacksReport)  # the formats' registry offers markdown and html for no other kind
    from dbx_ai_infra.reports.pages import render_combined, render_html, render_markdown

    if report.several:
        from dbx_ai_infra.engine.multi import ordered

        return render_combined(ordered(report.runs), html=html, against=report.against,
                               title=COMBINED_TITLES[report.kind])
    run = report.runs[0]
    assert run.plan is not None
    title = f"{TITLES[report.kind]}: stack {run.plan.stack}"
    return (render_html if html else render_markdown)(run.plan, run.diff, title=title)
