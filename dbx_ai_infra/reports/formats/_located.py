"""What the located formats (SARIF, JUnit, GitHub) share: a report's violations, each at the file and line behind it,
the stacks that could not be run, and the rules that ran."""

from __future__ import annotations

from typing import Any

from dbx_ai_infra.reports.located import Located, LocatedViolations, RuleInfo
from dbx_ai_infra.reports.reportdoc import Report


def located_of(report: Report) -> LocatedViolations:
    """Every violation of a report, located (each report kind says where its violations are). The format registry
    (`FORMATS`' kinds) gives the located formats no advise report."""
    located = getattr(report, "located", None)  # a LocatedReport's; an advise report has proposals instead
    if located is None:
        raise ValueError(f"a {report.kind} report has no located violations")
    result: LocatedViolations = located()
    return result


def policy_config_of(report: Report) -> Any:
    return getattr(report, "policy_config", None)


def rules_of(report: Report, found: list[Located]) -> list[RuleInfo]:
    """SARIF's rules: every policy of the pack (a disabled one marked so), and the drift and own-policy violations
    that occur."""
    from dbx_ai_infra.policies.registry import RULES_BY_NAME, load_policy_config
    from dbx_ai_infra.sources.audit import OWN_POLICY
    from dbx_ai_infra.sources.drift import DRIFT_RULES

    levels = load_policy_config(policy_config_of(report))
    rules = [RuleInfo(r.name, r.description, r.remediation, levels.level(r) if levels.level(r) != "disabled"
                      else r.enforcement, enabled=levels.level(r) != "disabled") for r in RULES_BY_NAME.values()]
    rules += [RuleInfo(name, text, fix, "advisory") for name, text, fix in DRIFT_RULES
              if any(f.violation.policy == name for f in found)]
    from dbx_ai_infra.sources.tfexpand import NOT_EVALUATED, NOT_EVALUATED_FIX, NOT_EVALUATED_TEXT

    if any(f.violation.policy == NOT_EVALUATED for f in found):
        rules.append(RuleInfo(NOT_EVALUATED, NOT_EVALUATED_TEXT, NOT_EVALUATED_FIX, "advisory"))
    if any(f.violation.policy == OWN_POLICY for f in found):
        rules.append(RuleInfo(OWN_POLICY, "A cluster breaks the cluster policy it names (the policy is in the "
                              "export).", "Edit the cluster to fit its policy, or change the policy.", "advisory"))
    return rules


def enabled_rules(report: Report) -> list[str]:
    """JUnit's suites: the policies that ran."""
    from dbx_ai_infra.policies.registry import RULES_BY_NAME, load_policy_config

    levels = load_policy_config(policy_config_of(report))
    return [r.name for r in RULES_BY_NAME.values() if levels.level(r) != "disabled"]
