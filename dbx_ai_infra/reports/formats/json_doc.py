"""``--format json`` (and ``--json``): the documents scripts read; their shapes are a public contract, each kept by
its report document (`dbx_ai_infra.reports.reportdoc`, ``to_json``)."""

from __future__ import annotations

import json

from dbx_ai_infra.reports.reportdoc import Report


def render(report: Report) -> str:
    text = json.dumps(report.to_json(), indent=2, allow_nan=False)
    return text + "\n" if report.json_newline else text
