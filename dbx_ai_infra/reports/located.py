"""Policy violations in the formats CI systems read: SARIF 2.1.0, JUnit XML and GitHub Actions workflow commands.

Every format takes `Located` violations: a violation with the file behind it and, for a stack, the line of the stack
field that decides it (`violation_lines`, below); a cluster JSON has no lines, its violations name the cluster.

SARIF (code scanning on GitHub, GitLab, Azure DevOps): one run, the tool's rules (every enabled policy, with its
description, remediation and default level), one result per violation with its physical location (file, line) and its
logical location (the resource's name and URN), a stable fingerprint, and a ``suppressions`` entry with the reason
for a violation a stack exception accepts. Valid against the OASIS schema (``tests/schemas``).

JUnit: one ``<testsuite>`` per policy that was enabled, one ``<testcase>`` per violation (a mandatory violation is a
``<failure>``, an advisory or excepted one passes with its message in ``<system-out>``), and a passing
``<testcase>`` for a policy with no violation, so a CI test tab lists every rule that ran. GitLab, Azure DevOps and
Jenkins read this shape (``testsuites/testsuite/testcase/failure``).

GitHub: one ``::error`` (mandatory), ``::warning`` (advisory) or ``::notice`` (excepted) workflow command per violation,
annotated on the input file and line; values are escaped as the Actions toolkit does (``%``, CR, LF; and ``:`` ``,``
in properties).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.plan import NOT_JUDGED, Plan, Violation
from dbx_ai_infra.dbxtypes.stack_files import section_lines
from dbx_ai_infra.dbxtypes.text import printable
from dbx_ai_infra.dbxtypes.vocabulary import SECTIONS, section_of_urn, workload_key
from dbx_ai_infra.policies.registry import RULES_BY_NAME
from dbx_ai_infra.reports.baseline import fingerprint
from dbx_ai_infra.sources.drift import DRIFT_STACK_FIELDS

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "dbx-ai-infra stackplan"
TOOL_URI = "https://github.com/dbx-ai-infra/dbx-ai-infra#policies"


@dataclass(frozen=True)
class Located:
    """A violation and where it comes from: the input file and, when known, the line."""

    violation: Violation
    source: str
    line: int | None = None
    #: Where in a JSON input the object is (``clusters[3]``, ``jobs[0]``): an export has no lines to point at.
    element: str | None = None


@dataclass(frozen=True)
class RuleInfo:
    """What SARIF says of a rule: enough of `dbx_ai_infra.policies.rule.Rule` that this module needs no policy
    import."""

    name: str
    description: str
    remediation: str
    enforcement: str
    enabled: bool = True


def _uri(source: str) -> str:
    """A repository-relative URI when the file lies under the working directory (what code scanning maps to the
    checkout), else the path as given; always with forward slashes."""
    path = Path(source)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            return path.as_posix()
    return path.as_posix().replace(os.sep, "/")


def place(f: Located) -> str:
    """The violation's object, with its place in a JSON export: ``clusters[3] nightly-etl``."""
    return f"{f.element} {f.violation.resource_name}" if f.element else f.violation.resource_name


def _level(v: Violation) -> str:
    if v.enforcement == NOT_JUDGED:  # what a rule could not judge: said, never an error or a warning
        return "note"
    if v.mandatory:
        return "error"
    return "note" if v.excepted or v.baseline == "unchanged" else "warning"


def _unique(seen: dict[str, int], value: str) -> str:
    """``value``, or ``value/N`` for its N-th repeat in one log (two results never share a fingerprint)."""
    count = seen.get(value, 0)
    seen[value] = count + 1
    return value if count == 0 else f"{value}/{count}"


def sarif_log(violations: Sequence[Located], rules: Sequence[RuleInfo], *, version: str) -> dict[str, Any]:
    """The violations as a SARIF 2.1.0 log (a JSON object)."""
    index = {r.name: i for i, r in enumerate(rules)}
    driver: dict[str, Any] = {
        "name": TOOL_NAME,
        "version": version,
        "informationUri": TOOL_URI,
        "rules": [{
            "id": r.name,
            "shortDescription": {"text": r.description},
            "help": {"text": r.remediation},
            "defaultConfiguration": {"level": "error" if r.enforcement == "mandatory" else "warning",
                                     "enabled": r.enabled},
            "properties": {"enforcement": r.enforcement},
        } for r in rules],
    }
    results = []
    seen: dict[str, int] = {}
    for f in violations:
        v = f.violation
        region = {"startLine": f.line} if f.line else None
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(f.source)}}
        if region:
            physical["region"] = region
        result: dict[str, Any] = {
            "ruleId": v.policy,
            "level": _level(v),
            "message": {"text": f"{place(f)}: {v.message}"},
            "locations": [{
                "physicalLocation": physical,
                "logicalLocations": [{"name": v.resource_name, "fullyQualifiedName": v.urn, "kind": "resource"}]
                + ([{"name": f.element, "kind": "element"}] if f.element else []),
            }],
            # stable across runs and line moves, unique per result: what is wrong (the baseline's fingerprint: the
            # rule, the resource, the field and the statement without its figures) in this file
            "partialFingerprints": {"stackplanFinding/v2": _unique(seen, hashlib.sha256(
                f"{fingerprint(v)}\0{_uri(f.source)}".encode()).hexdigest()[:32])},
            "properties": {"enforcement": v.enforcement},
        }
        if v.policy in index:
            result["ruleIndex"] = index[v.policy]
        if v.baseline is not None:  # check --baseline: SARIF's own words for a violation the baseline holds, or not
            result["baselineState"] = v.baseline
        if v.exception is not None:
            result["properties"]["exception"] = v.exception.to_json()
            if v.excepted:
                result["suppressions"] = [{"kind": "inSource", "status": "accepted",
                                           "justification": v.exception.reason}]
        results.append(result)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }]}


def command_data(text: str) -> str:
    """Text as the data of a workflow command (after ``::``); other control characters escaped (an escape sequence
    in a name would reach the CI log raw)."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"), one_line=True)


def _property(text: str) -> str:
    return command_data(text).replace(":", "%3A").replace(",", "%2C")


_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def github_commands(violations: Sequence[Located], errors: Sequence[tuple[str, str]] = ()) -> str:
    """One workflow command per violation: ``::error file=F,line=N,title=policy::resource: message``; and one
    ``::error`` per input that could not be checked (``errors``: file, message)."""
    commands = [f"::error file={_property(file)},title=invalid input::{command_data(message)}"
                for file, message in errors]
    for f in violations:
        v = f.violation
        at = f",line={f.line}" if f.line else ""
        commands.append(f"::{_COMMAND[_level(v)]} file={_property(f.source)}{at},title={_property(v.policy)}::"
                        f"{command_data(place(f) + ': ' + v.shown_message)}")
    return "".join(command + "\n" for command in commands)


@dataclass(frozen=True)
class LocatedViolations:
    located: list[Located]
    #: (stack file, error) of each stack that could not be run.
    errors: list[tuple[str, str]]
    #: JUnit's suite name.
    suite: str
    #: The inputs the violations come from (JUnit reports a policy without a violation once per input: one path each).
    sources: list[str]


def violation_lines(plan: Plan, violations: list[Violation]) -> dict[tuple[str, str], int]:
    """Each violation's (policy, URN) -> the line of the stack field behind it: the first of the rule's
    ``stack_fields`` that the stack sets, in the resource's section or at the top; else the section the resource is
    built from; else ``config:`` (a default no line states)."""
    if not plan.stack_file or not Path(plan.stack_file).is_file():
        return {}
    lines = section_lines(Path(plan.stack_file))
    fields = {**{r.name: r.stack_fields for r in RULES_BY_NAME.values()}, **DRIFT_STACK_FIELDS}
    # a workload's resources are named <stack>-<workload>[-...]: the longest workload name that prefixes one
    names = sorted((line.workload for line in plan.sizing or [] if line.section), key=len, reverse=True)
    found = {}
    for v in violations:
        section = section_of_urn(v.urn) or ""
        if section in SECTIONS:
            name = next((n for n in names if v.resource_name == f"{plan.stack}-{n}"
                         or v.resource_name.startswith(f"{plan.stack}-{n}-")), section)
            section = workload_key(name)
        if section == "serving":  # an endpoint's fields live under serving.endpoints.<name>
            endpoint = v.resource_name.removeprefix(f"{plan.stack}-serving-").removesuffix("-permissions")
            section = f"serving.endpoints.{endpoint}"
        candidates = [k for f in fields.get(v.policy, ()) for k in (f"{section}.{f}", f)]
        found[(v.policy, v.urn)] = next((lines[k] for k in candidates if k in lines), lines.get(section, lines[""]))
    return found
