"""``--format sarif``: SARIF 2.1.0 for code scanning (`dbx_ai_infra.reports.located.sarif_log`)."""

from __future__ import annotations

import json

from dbx_ai_infra import version
from dbx_ai_infra.reports.formats._located import located_of, rules_of
from dbx_ai_infra.reports.located import sarif_log
from dbx_ai_infra.reports.reportdoc import Report


def render(report: Report) -> str:
    found = located_of(report)
    log = sarif_log(found.located, rules_of(report, found.located), version=version())
    log["runs"][0]["invocations"] = [{
        "executionSuccessful": not found.errors,
        "toolExecutionNotifications": [{
            "level": "error", "message": {"text": error},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": file}}}]} for file, error in found.errors],
    }]
    return json.dumps(log, indent=2, allow_nan=False) + "\n"
