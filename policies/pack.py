"""The CrossGuard pack: every `Rule` wrapped as a `pulumi_policy.ResourceValidationPolicy`.

``policies/__main__.py`` passes `build_policies()` to ``PolicyPack``; tests call `build_policies` directly (it does
not start a server). The policies' ``validate`` calls `policies.registry.rule_messages`, the same function the offline
evaluator uses.

Thresholds: the ``config_schema`` of each policy declares its thresholds with their defaults (taken from the config
given to `build_policies`); config the CLI sends at run time (``Configure``, from ``--policy-pack-config``) overrides
them per policy.

Unknown values during ``pulumi preview`` (an ``instancePoolId`` or ``policyId`` that is another resource's output,
say): reading one through the SDK's proxy raises ``UnknownValueError``, and the SDK would then skip the whole rule for
that resource with an advisory "can't run policy during preview". Every cluster here has such an id, so the rules
would never run in a preview of a new stack. `known_props` copies the properties with each unknown value replaced by
`UNKNOWN` (a value that is set but not known yet); rules then judge what is known, and a rule that needs the unknown
value gives no verdict on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from policies.registry import (
    load_policy_config,
    load_team_rules,
    resource_rules,
    rule_messages,
    use_team_rules,
    validate_threshold,
)
from policies.rule import Rule
from pulumi_private import UnknownValueError

PACK_NAME = "dbx-ai-infra-policies"
PACK_DESCRIPTION = ("Databricks AI infrastructure rules: spot and on-demand capacity, sizing, runtimes, tags, "
                    "secrets and grants.")


UNKNOWN = "<unknown during preview>"


def known_props(value: Any) -> Any:
    """A plain copy of SDK-proxied properties, unknown values replaced by `UNKNOWN`."""
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key in value:
            try:
                out[key] = known_props(value[key])
            except UnknownValueError:
                out[key] = UNKNOWN
        return out
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        items = []
        for index in range(len(value)):
            try:
                items.append(known_props(value[index]))
            except UnknownValueError:
                items.append(UNKNOWN)
        return items
    return value


def _config_schema(rule: Rule, defaults: Mapping[str, Any]) -> PolicyConfigSchema | None:
    if not rule.thresholds:
        return None
    properties = {
        key: {**rule.threshold_schema.get(key, {"type": "number"}),
              "default": list(defaults[key]) if isinstance(defaults[key], tuple) else defaults[key]}
        for key in rule.thresholds
    }
    return PolicyConfigSchema(properties=properties)


def _make_validate(rule: Rule, defaults: Mapping[str, Any]):
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if args.resource_type not in rule.resource_types:
            return
        thresholds = dict(defaults)
        for key, value in (args.get_config() or {}).items():
            if key in rule.thresholds:
                thresholds[key] = validate_threshold(rule, key, value, f"policy config of {rule.name}")
        props = known_props(args.props)
        for message in rule_messages(rule, args.resource_type, props, thresholds, source="pulumi"):
            report_violation(message, args.urn)

    validate.__name__ = f"validate_{rule.name.replace('-', '_')}"
    return validate


#: The environment variable that names a directory of the team's own rule modules for the pack (the Pulumi CLI's
#: policy pack config is keyed by the pack's declared policies, so it cannot name a directory).
TEAM_RULES_ENV = "DBX_AI_INFRA_RULES"


def team_rules_from_environment() -> None:
    """Load the team's rules from ``$DBX_AI_INFRA_RULES`` (a directory, as ``--rules DIR``), when it is set."""
    import os

    directory = os.environ.get(TEAM_RULES_ENV)
    if directory:
        use_team_rules(load_team_rules(directory))


def build_policies(config: Any = None) -> list[ResourceValidationPolicy]:
    """One ``ResourceValidationPolicy`` per resource rule: the built-in ones, then the team's (`resource_rules`).

    ``config`` is anything `policies.registry.load_policy_config` accepts; it sets enforcement levels (a disabled
    rule stays listed, with level ``disabled``) and the threshold defaults.
    """
    cfg = load_policy_config(config)
    policies = []
    for rule in resource_rules():
        defaults = cfg.thresholds_for(rule)
        policies.append(ResourceValidationPolicy(
            name=rule.name,
            description=rule.description,
            validate=_make_validate(rule, defaults),
            enforcement_level=EnforcementLevel(cfg.level(rule)),
            config_schema=_config_schema(rule, defaults),
            severity=Severity(rule.severity),
            remediation_steps=rule.remediation,
        ))
    return policies
