"""The policies' front door: the rule lists (`dbx_ai_infra.policies.ruleset`), a team's own rules
(`dbx_ai_infra.policies.team`), the policy config (`dbx_ai_infra.policies.config`) and the offline evaluators
(`dbx_ai_infra.policies.evaluate`), each in the module of its job, named here for the callers that import them from one
place (the pack, the engine, the command line, team rules)."""

from __future__ import annotations

from dbx_ai_infra.policies.config import (
    DEFAULT_CONFIG,
    ENFORCEMENT_LEVELS,
    Level,
    PolicyConfig,
    load_policy_config,
    merged_policy_config,
    validate_threshold,
)
from dbx_ai_infra.policies.evaluate import (
    audit_export,
    evaluate_export,
    evaluate_plan,
    evaluate_resource,
    evaluate_stack,
    messages_for_views,
    rule_messages,
    stack_findings,
    views_of,
)
from dbx_ai_infra.policies.ruleset import (
    ALL_RULES,
    RETIRED,
    RULES_BY_NAME,
    STACK_RULES,
    TEAM_RULES,
    resource_rules,
    stack_rules,
)
from dbx_ai_infra.policies.team import use_team_rules
from dbx_ai_infra.policies.team_process import forget_team_rules, load_team_rules

__all__ = [
    "ALL_RULES",
    "DEFAULT_CONFIG",
    "ENFORCEMENT_LEVELS",
    "Level",
    "PolicyConfig",
    "RETIRED",
    "RULES_BY_NAME",
    "STACK_RULES",
    "TEAM_RULES",
    "audit_export",
    "evaluate_export",
    "evaluate_plan",
    "evaluate_resource",
    "evaluate_stack",
    "forget_team_rules",
    "load_policy_config",
    "load_team_rules",
    "merged_policy_config",
    "messages_for_views",
    "resource_rules",
    "rule_messages",
    "stack_findings",
    "stack_rules",
    "use_team_rules",
    "validate_threshold",
    "views_of",
]
