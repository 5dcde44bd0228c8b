"""The CrossGuard pack: every `Rule` wrapped as a `pulumi_policy.ResourceValidationPolicy`.

``policies/__main__.py`` passes `build_policies()` to ``PolicyPack``; tests call `build_policies` directly (it does
not start a server). The policies' ``validate`` calls `dbx_ai_infra.policies.registry.rule_messages`, the same function
the offline
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

import os
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from dbx_ai_infra.dbxtypes.clouds import region_problem
from dbx_ai_infra.dbxtypes.plan import Plan
from dbx_ai_infra.dbxtypes.shape import shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import PERMISSIONS, ROLE_OF_SECTION, ROLE_TAG, USAGE_DEFAULTS, WORKLOAD_TAG
from dbx_ai_infra.policies.access import access_links, with_access
from dbx_ai_infra.policies.common import node_cloud
from dbx_ai_infra.policies.registry import (
    load_policy_config,
    load_team_rules,
    messages_for_views,
    resource_rules,
    rule_messages,
    stack_findings,
    stack_rules,
    use_team_rules,
    validate_threshold,
    views_of,
)
from dbx_ai_infra.policies.rule import Rule, StackView
from dbx_ai_infra.policies.rules import stack_budget
from dbx_ai_infra.pricing import load_prices, price_plan
from dbx_ai_infra.pulumi_private import UnknownValueError

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


def _thresholds(rule: Rule, defaults: Mapping[str, Any], given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The rule's thresholds: ``defaults`` overlaid by the config the CLI sent (each value checked)."""
    thresholds = dict(defaults)
    for key, value in (given or {}).items():
        if key in rule.thresholds:
            thresholds[key] = validate_threshold(rule, key, value, f"policy config of {rule.name}")
    return thresholds


#: The inputs of a Permissions resource that name its target by id.
PERMISSION_TARGETS = ("clusterId", "jobId")


def _plan_resource(resource: Any) -> tuple[str, str, dict[str, Any]]:
    """A resource of a stack validation as a plan-scoped rule reads it: its URN (its id here), type and known
    inputs; a Permissions' target id is the URN of the resource it depends on for it (an id unknown in a preview,
    or the known id of a resource the stack already has: either way the dependency says which)."""
    inputs = known_props(resource.props)
    if resource.resource_type == PERMISSIONS:
        for key in PERMISSION_TARGETS:
            targets = (resource.property_dependencies or {}).get(key) or []
            if len(targets) == 1:
                inputs[key] = targets[0].urn
    return resource.urn, resource.resource_type, inputs


#: The two kinds of policy the pack makes of a rule.
_Policy = TypeVar("_Policy", ResourceValidationPolicy, StackValidationPolicy)


def _policy(kind: type[_Policy], rule: Rule, level: str, validate: Any, schema: PolicyConfigSchema | None) -> _Policy:
    """``rule`` as one of the pack's policies (``kind``: a resource or a stack validation), each field read from the
    rule: its name, description, level, severity and remediation, with ``schema`` as its config schema; ``validate``
    is named after the rule (the name the SDK's errors show)."""
    validate.__name__ = f"validate_{rule.name.replace('-', '_')}"
    return kind(name=rule.name, description=rule.description, validate=validate,
                enforcement_level=EnforcementLevel(level), config_schema=schema, severity=Severity(rule.severity),
                remediation_steps=rule.remediation)


def _plan_policy(rule: Rule, level: str, defaults: Mapping[str, Any]) -> StackValidationPolicy:
    """A rule of ``scope`` plan as a stack validation: it sees every resource, so each cluster and job is judged
    with the access controls the stack's Permissions give it (`dbx_ai_infra.policies.access`)."""
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        resources = [_plan_resource(r) for r in args.resources]
        links = access_links((rtype, inputs) for _, rtype, inputs in resources)
        thresholds = _thresholds(rule, defaults, args.get_config())
        for urn, rtype, inputs in resources:
            if rtype not in rule.resource_types:
                continue
            views = with_access(rtype, (urn,), views_of(rtype, inputs, "pulumi"), links)
            for message in messages_for_views(rule, views, thresholds, one=True):
                report_violation(message, urn)

    return _policy(StackValidationPolicy, rule, level, validate, _config_schema(rule, defaults))


def _make_validate(rule: Rule, defaults: Mapping[str, Any]):
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if args.resource_type not in rule.resource_types:
            return
        thresholds = _thresholds(rule, defaults, args.get_config())
        props = known_props(args.props)
        for message in rule_messages(rule, args.resource_type, props, thresholds, source="pulumi", one=True):
            report_violation(message, args.urn)

    return validate


#: The environment variable that names a directory of the team's own rule modules for the pack (the Pulumi CLI's
#: policy pack config is keyed by the pack's declared policies, so it cannot name a directory).
TEAM_RULES_ENV = "DBX_AI_INFRA_RULES"


def team_rules_from_environment() -> None:
    """Load the team's rules from ``$DBX_AI_INFRA_RULES`` (a directory, as ``--rules DIR``), when it is set."""
    directory = os.environ.get(TEAM_RULES_ENV)
    if directory:
        use_team_rules(load_team_rules(directory))


def pack_assumptions(usage: Mapping[str, Any], resources: Sequence[Mapping[str, Any]], cloud: str
                     ) -> dict[str, Any]:
    """The stack's ``usage`` section as the cost model reads it: its figures, and a workload's own
    (``usage.<workload>``, a role's entry the default of its workloads) as ``<assumption>.<workload>`` for each
    workload the resources' ``dbx_workload`` and ``workload_type`` tags name (the pack does not see the stack's
    workloads map)."""
    flat = {k: v for k, v in usage.items() if k in USAGE_DEFAULTS}
    own = {k: v for k, v in usage.items() if isinstance(v, Mapping)}
    section_of = {role: section for section, role in ROLE_OF_SECTION.items()}
    for r in resources:
        for shape in shapes_of_resource(str(r["type"]), r["inputs"], cloud=cloud):
            workload, role = shape.tags.get(WORKLOAD_TAG), shape.tags.get(ROLE_TAG)
            if not isinstance(workload, str) or role not in section_of:
                continue
            merged = {**own.get(section_of[role], {}), **own.get(workload, {})}
            flat.update({f"{k}.{workload}": v for k, v in merged.items() if k in USAGE_DEFAULTS})
    return flat


def stack_view(resources: Sequence[Mapping[str, Any]], stack: str, settings: Mapping[str, Any]) -> StackView:
    """A stack as the pack sees it (``resources``: ``{urn, id, type, name, inputs}``), for the stack rules: its plan,
    with the budget of ``settings`` (the pack config) and, when it sets one, its cost, priced with the shipped price
    book and the usage assumptions of ``settings``. What the pack cannot know there: the stack's own price overrides
    (its ``pricing`` section), a base to judge an increase against (``cost --against`` does that), and the stack
    file's declarations (what its endpoints serve)."""
    budget = {k: settings[k] for k in stack_budget.MONTHLY_LIMITS if settings.get(k) is not None}
    clouds = [node_cloud(str(r["inputs"].get(k))) for r in resources for k in ("nodeTypeId", "node_type_id")
              if r["inputs"].get(k)]
    cloud = next((c for c in clouds if c), None)
    doc = {"stack": stack, "project": "dbx-ai-infra", "cloud": cloud or "aws", "budget": budget or None,
           "resources": [{"urn": r["urn"], "id": r.get("id"), "type": r["type"], "name": r["name"],
                          "inputs": r["inputs"]} for r in resources]}
    if not budget or cloud is None:  # nothing to price for, or no cluster with a node type: nothing GPU compute prices
        return StackView(Plan.from_json(doc, "pack"))
    region = settings.get("region")
    problem = region_problem(cloud, region) if region is not None else None
    if problem:  # a region the pack cannot price at: what needs the price cannot be judged, so it fails (closed)
        return StackView(Plan.from_json(doc, "pack"), unpriceable=(
            f"the budget cannot be judged: the policy config's region {region!r} {problem}. Fix: set region to the "
            f"stack's region, or remove it to price at the reference region."))
    defaults = {k: a.default for k, a in USAGE_DEFAULTS.items()}
    doc["assumptions"] = {**defaults, **pack_assumptions(settings.get("usage") or {}, resources, cloud)}
    plan = Plan.from_json(doc, "pack")
    plan.cost = price_plan(plan, load_prices(region=region))
    return StackView(plan)


def budget_violations(resources: Sequence[Mapping[str, Any]], stack: str, settings: Mapping[str, Any]) -> list[str]:
    """The budget policy's messages for a stack's resources in the pack (`stack_view`)."""
    return [f.message for f in stack_findings(stack_budget.RULE, stack_view(resources, stack, settings), {})]


#: Inputs that hold another resource's id, which a preview of a new stack does not know yet.
REFERENCE_INPUTS = ("instancePoolId", "driverInstancePoolId", "policyId")


def _with_references(resource: Any) -> dict[str, Any]:
    """A resource of a stack validation as the cost model reads it, with its URN as its id; an id input unknown in a
    preview (a pool the same run creates) is the URN of the one resource it depends on, so a cluster on a new pool
    is priced on that pool (else it would be unpriced, and a budget would fail closed on it)."""
    inputs = known_props(resource.props)
    for key in REFERENCE_INPUTS:
        targets = (resource.property_dependencies or {}).get(key) or []
        if inputs.get(key) == UNKNOWN and len(targets) == 1:
            inputs[key] = targets[0].urn
    return {"urn": resource.urn, "id": resource.urn, "type": resource.resource_type, "name": resource.name,
            "inputs": inputs}


def _stack_policy(rule: Rule, level: str, defaults: Mapping[str, Any]) -> StackValidationPolicy:
    """A stack rule as a stack validation: the stack as the pack sees it (`stack_view`, with the rule's settings
    from the pack config), judged by the rule alone; a finding on a resource names its URN."""
    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        resources = [_with_references(r) for r in args.resources]
        stack = args.resources[0].urn.split("::")[0].removeprefix("urn:pulumi:") if args.resources else "stack"
        settings = args.get_config() or {}
        view = stack_view(resources, stack, settings)
        for finding in stack_findings(rule, view, _thresholds(rule, defaults, settings)):
            if not finding.note:
                report_violation(finding.message, finding.resource.urn if finding.resource is not None else None)

    return _policy(StackValidationPolicy, rule, level, validate, _stack_schema(rule, defaults))


def _stack_schema(rule: Rule, defaults: Mapping[str, Any]) -> PolicyConfigSchema | None:
    """A stack rule's pack config: its thresholds (`_config_schema`) and what else it reads there
    (`Rule.pack_settings`)."""
    thresholds = _config_schema(rule, defaults)
    properties = {**(thresholds.properties if thresholds is not None else {}),
                  **{key: dict(schema) for key, schema in (rule.pack_settings or {}).items()}}
    return PolicyConfigSchema(properties=properties) if properties else None


def build_policies(config: Any = None) -> list[ResourceValidationPolicy | StackValidationPolicy]:
    """One ``ResourceValidationPolicy`` per resource rule: the built-in ones, then the team's (`resource_rules`); and
    each stack rule the pack can judge (`Rule.pack_settings`: the stack budget, which prices the stack, its limits in
    the pack config) as a ``StackValidationPolicy``.

    ``config`` is anything `dbx_ai_infra.policies.registry.load_policy_config` accepts; it sets enforcement levels (a
    disabled rule stays listed, with level ``disabled``) and the threshold defaults.
    """
    cfg = load_policy_config(config)
    policies: list[ResourceValidationPolicy | StackValidationPolicy] = []
    for rule in resource_rules():
        defaults = cfg.thresholds_for(rule)
        if rule.scope == "plan":
            policies.append(_plan_policy(rule, cfg.level(rule), defaults))
            continue
        policies.append(_policy(ResourceValidationPolicy, rule, cfg.level(rule), _make_validate(rule, defaults),
                                _config_schema(rule, defaults)))

    policies += [_stack_policy(rule, cfg.level(rule), cfg.thresholds_for(rule)) for rule in stack_rules()
                 if rule.pack_settings is not None]
    return policies
