"""What the finding formats (SARIF, JUnit, GitHub) share: a report's findings, each at the file and line behind it,
the stacks that could not be run, and the rules that ran."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbxtypes.plan import Plan, Violation
from stackplan.findings import Located, RuleInfo
from stackplan.reportdoc import AuditReport, DriftReport, Report, StacksReport


@dataclass(frozen=True)
class Findings:
    located: list[Located]
    #: (stack file, error) of each stack that could not be run.
    errors: list[tuple[str, str]]
    #: JUnit's suite name.
    suite: str
    #: The inputs the findings come from (JUnit reports a policy without a finding once per input: one path each).
    sources: list[str]


def finding_lines(plan: Plan, violations: list[Violation]) -> dict[tuple[str, str], int]:
    """Each finding's (policy, URN) -> the line of the stack field behind it: the first of the rule's
    ``stack_fields`` that the stack sets, in the resource's section or at the top; else the section the resource is
    built from; else ``config:`` (a default no line states)."""
    from dbxtypes.vocabulary import SECTIONS, section_of_urn, workload_key
    from policies.registry import RULES_BY_NAME
    from stackplan.drift import DRIFT_STACK_FIELDS
    from stackspec import section_lines

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


def findings_of(report: Report) -> Findings:
    """Every finding of a report, located."""
    if isinstance(report, StacksReport):
        located = []
        for run in report.runs:
            if run.plan is None:
                continue
            violations = run.plan.violations or []
            lines = finding_lines(run.plan, violations)
            located += [Located(v, run.source, lines.get((v.policy, v.urn))) for v in violations]
        errors = [(r.source, r.error or "") for r in report.runs if r.error is not None]
        return Findings(located, errors, f"stackplan {report.kind} {', '.join(r.stack for r in report.runs)}",
                        [r.source for r in report.runs])
    if isinstance(report, AuditReport):
        audit = report.audit
        return Findings([Located(v, audit.files.get(v.urn, report.source), element=audit.labels.get(v.urn))
                         for v in audit.violations], [], f"stackplan check {report.source}", [report.source])
    assert isinstance(report, DriftReport)
    plan = report.plan
    stack_urns = {r.urn for r in plan.resources}
    lines = finding_lines(plan, [v for v in report.found if v.urn in stack_urns])
    source = plan.stack_file or plan.stack
    return Findings([Located(v, source, lines.get((v.policy, v.urn))) if v.urn in stack_urns
                     else Located(v, report.files.get(v.urn, report.against)) for v in report.found],
                    [], f"stackplan drift {plan.stack} {source}", [source])


def policy_config_of(report: Report) -> Any:
    return getattr(report, "policy_config", None)


def rules_of(report: Report, found: list[Located]) -> list[RuleInfo]:
    """SARIF's rules: every policy of the pack (a disabled one marked so), and the drift and own-policy findings
    that occur."""
    from policies.registry import RULES_BY_NAME, load_policy_config
    from stackplan.audit import OWN_POLICY
    from stackplan.drift import DRIFT_RULES

    levels = load_policy_config(policy_config_of(report))
    rules = [RuleInfo(r.name, r.description, r.remediation, levels.level(r) if levels.level(r) != "disabled"
                      else r.enforcement, enabled=levels.level(r) != "disabled") for r in RULES_BY_NAME.values()]
    rules += [RuleInfo(name, text, fix, "advisory") for name, text, fix in DRIFT_RULES
              if any(f.violation.policy == name for f in found)]
    if any(f.violation.policy == OWN_POLICY for f in found):
        rules.append(RuleInfo(OWN_POLICY, "A cluster breaks the cluster policy it names (the policy is in the "
                              "export).", "Edit the cluster to fit its policy, or change the policy.", "advisory"))
    return rules


def enabled_rules(report: Report) -> list[str]:
    """JUnit's suites: the policies that ran."""
    from policies.registry import RULES_BY_NAME, load_policy_config

    levels = load_policy_config(policy_config_of(report))
    return [r.name for r in RULES_BY_NAME.values() if levels.level(r) != "disabled"]
