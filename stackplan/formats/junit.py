"""``--format junit``: JUnit XML for CI test tabs (`stackplan.findings.junit_xml`)."""

from __future__ import annotations

from stackplan.findings import junit_xml
from stackplan.reportdoc import Report

from ._findings import enabled_rules, findings_of


def render(report: Report) -> str:
    found = findings_of(report)
    return junit_xml(found.located, enabled_rules(report), suite=found.suite, sources=found.sources,
                     errors=found.errors)
