"""``--format sarif``: SARIF 2.1.0 for code scanning (`stackplan_reports.findings.sarif_log`)."""

from __future__ import annotations

import json

from stackplan import version
from stackplan_reports.findings import sarif_log
from stackplan_reports.formats._findings import findings_of, rules_of
from stackplan_reports.reportdoc import Report


def render(report: Report) -> str:
    found = findings_of(report)
    log = sarif_log(found.located, rules_of(report, found.located), version=version())
    log["runs"][0]["invocations"] = [{
        "executionSuccessful": not found.errors,
        "toolExecutionNotifications": [{
            "level": "error", "message": {"text": error},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": file}}}]} for file, error in found.errors],
    }]
    return json.dumps(log, indent=2, allow_nan=False) + "\n"
