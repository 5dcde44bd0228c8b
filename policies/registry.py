"""The rule list, the policy config, and the offline evaluators (resource, plan, Clusters API JSON).

The CrossGuard pack (``policies/pack.py``) and these evaluators run the same code path, `rule_messages`, so a plan
evaluated offline and the same resources analysed by the pack over gRPC give the same violations.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from dbxtypes.advise import ADVISE_ORDER, ADVISE_THRESHOLDS
from dbxtypes.documents import read_document
from dbxtypes.errors import InputError, Problem, clip, problems_from_pydantic
from dbxtypes.plan import Plan, Violation, resources_of
from dbxtypes.shape import (
    ClusterShape,
    Source,
    as_number,
    is_gpu_compute,
    pool_shape,
    shapes_of_resource,
    source_props,
    tag_role,
)
from dbxtypes.vocabulary import CLUSTER, INSTANCE_POOL, JOB, ROLE_TAG
from policies import team
from policies.common import gpu_node, node_cloud
from policies.exports import (
    CLUSTER_POLICY_EXPORT,
    clusters_of,
    export_items,
    item_shapes,
    job_runs_on,
    summary,
    summary_add,
)
from policies.rule import ResourceView, Rule, View
from policies.rules import (
    avoid_retiring_node_types,
    configure_single_node,
    configure_single_node_shuffle_partitions,
    configure_worker_bounds,
    disallow_all_privileges_account_users,
    disallow_all_spot_inference,
    disallow_autoscaled_or_spot_training,
    disallow_node_type_with_pool,
    disallow_plaintext_secrets,
    disallow_scale_to_zero_in_production,
    flag_unrecognised_export_fields,
    prefer_auto_zone,
    prefer_interconnect_for_multi_node_training,
    require_api_conformance,
    require_autotermination,
    require_gpu_memory_fit,
    require_matching_cloud_attributes,
    require_matching_runtime,
    require_pinned_pip_libraries,
    require_registered_model,
    require_serving_inference_table,
    require_serving_rate_limit,
    require_serving_workload_type_fit,
    require_supported_runtime,
    require_tags,
    require_training_checkpoints,
    require_volumes_for_caches,
    stack_budget,
    tag_autoscaled_gpu_compute,
)

#: Every rule, mandatory ones first; the pack lists its policies in this order.
ALL_RULES: tuple[Rule, ...] = (
    require_api_conformance.RULE,
    disallow_all_spot_inference.RULE,
    disallow_autoscaled_or_spot_training.RULE,
    configure_worker_bounds.RULE,
    require_matching_cloud_attributes.RULE,
    require_matching_runtime.RULE,
    disallow_node_type_with_pool.RULE,
    require_autotermination.RULE,
    configure_single_node.RULE,
    require_tags.RULE,
    require_pinned_pip_libraries.RULE,
    disallow_plaintext_secrets.RULE,
    disallow_all_privileges_account_users.RULE,
    require_serving_workload_type_fit.RULE,
    disallow_scale_to_zero_in_production.RULE,
    require_volumes_for_caches.RULE,
    configure_single_node_shuffle_partitions.RULE,
    require_training_checkpoints.RULE,
    require_gpu_memory_fit.RULE,
    avoid_retiring_node_types.RULE,
    prefer_interconnect_for_multi_node_training.RULE,
    prefer_auto_zone.RULE,
    require_supported_runtime.RULE,
    require_serving_inference_table.RULE,
    require_serving_rate_limit.RULE,
    flag_unrecognised_export_fields.RULE,
    tag_autoscaled_gpu_compute.RULE,
)
#: Rules that judge a stack as a whole (its priced plan), not one resource: the pipeline calls them once per stack
#: (`stackplan.pipeline.budget_findings`), never per resource; their names, levels and exceptions work as any rule's.
STACK_RULES: tuple[Rule, ...] = (stack_budget.RULE, require_registered_model.RULE)
#: A team's own resource rules, loaded from ``--rules DIR`` for this run (`use_team_rules`): judged like the built-in
#: ones, after them.
TEAM_RULES: list[Rule] = []
_BY_NAME: dict[str, Rule] = {r.name: r for r in (*ALL_RULES, *STACK_RULES)}
assert len(_BY_NAME) == len(ALL_RULES) + len(STACK_RULES), "duplicate rule names"
#: Every rule by name: the resource rules (`ALL_RULES`), the stack rules, then the team's.
RULES_BY_NAME: Mapping[str, Rule] = MappingProxyType(_BY_NAME)


def resource_rules() -> tuple[Rule, ...]:
    """The rules judged per resource, in order: the built-in ones, then the team's (`TEAM_RULES`)."""
    return (*ALL_RULES, *TEAM_RULES)


def load_team_rules(directory: str) -> list[Rule]:
    """A team's rule modules: every ``*.py`` in ``directory`` (sorted), each defining ``RULE``, a `policies.rule.Rule`
    written against the documented API. They are code the user trusts: loading one runs it. A module that does not
    load, has no ``RULE``, or reuses a rule name is `InputError` naming the file and the fix."""
    root = Path(directory)
    if not root.is_dir():
        raise InputError.single(directory, "--rules", "is not a directory.", "pass the directory of rule modules.")
    rules: list[Rule] = []
    fix = "define RULE = policies.rule.Rule(name=..., check=..., ...) in the module (README: your own rules)."
    for path in sorted(root.glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"stackplan_team_rules.{path.stem}", path)
        if spec is None or spec.loader is None:
            raise InputError.single(str(path), "", "is not a Python module.", fix)
        module = importlib.util.module_from_spec(spec)
        try:  # its prints to stderr, its exits caught (team.running)
            team.load(functools.partial(spec.loader.exec_module, module), str(path))
        except team.TeamRuleFailure as failed:
            what = failed.what.removeprefix("raised ")  # an exception by its name; an exit as what it called
            raise InputError.single(str(path), "", f"does not load: {what if what != failed.what else 'it ' + what}",
                                    "fix the module (it runs as Python: the rules are code you trust).") from None
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise InputError.single(str(path), "RULE", "is missing or not a policies.rule.Rule.", fix)
        built_in = {r.name for r in (*ALL_RULES, *STACK_RULES)}
        if rule.name in built_in or rule.name in {r.name for r in rules}:
            raise InputError.single(str(path), "RULE.name", f"{rule.name!r} is a rule already.",
                                    "give the rule a name of its own.")
        rules.append(team.guarded(rule, str(path)))
    if not rules:
        raise InputError.single(directory, "--rules", "holds no rule module (*.py defining RULE).", fix)
    return rules


def forget_team_rules() -> None:
    """Judge the built-in rules only again (a process that loaded team rules and goes on: the tests)."""
    global _CONFIG_MODEL
    for rule in TEAM_RULES:
        _BY_NAME.pop(rule.name, None)
    TEAM_RULES.clear()
    _CONFIG_MODEL = _config_model()


def use_team_rules(rules: Iterable[Rule]) -> None:
    """Judge these rules too, in this process (names, levels, policy configs, reports and exceptions take them)."""
    global _CONFIG_MODEL
    for rule in rules:  # a rule loaded again (the same directory twice in one process) replaces its first load
        TEAM_RULES[:] = [r for r in TEAM_RULES if r.name != rule.name]
        TEAM_RULES.append(rule)
        _BY_NAME[rule.name] = rule
    _CONFIG_MODEL = _config_model()

#: Default thresholds (each belongs to one rule, see ``Rule.thresholds``).
DEFAULT_CONFIG: Mapping[str, Any] = MappingProxyType({k: v for r in ALL_RULES for k, v in r.thresholds.items()})

ENFORCEMENT_LEVELS = ("advisory", "mandatory", "disabled")


# --------------------------------------------------------------------------------------------------------------------
# Policy config
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PolicyConfig:
    """Validated policy config: enforcement overrides and threshold overrides, keyed by policy name."""

    enforcement: Mapping[str, str] = field(default_factory=dict)
    thresholds: Mapping[str, Mapping[str, int | float]] = field(default_factory=dict)
    #: The ``advise`` section's overrides (`dbxtypes.advise.ADVISE_THRESHOLDS` names).
    advise: Mapping[str, float | None] = field(default_factory=dict)

    def advise_thresholds(self) -> dict[str, float | None]:
        """Every threshold of ``stackplan advise``: defaults overlaid by this config."""
        return {**{k: t.default for k, t in ADVISE_THRESHOLDS.items()}, **self.advise}

    def as_document(self) -> dict[str, Any]:
        """This config in the policy config file's shape (what `load_policy_config` reads back)."""
        doc: dict[str, Any] = {name: {"enforcementLevel": level} for name, level in self.enforcement.items()}
        for name, values in self.thresholds.items():
            doc.setdefault(name, {}).update(values)
        if self.advise:
            doc["advise"] = dict(self.advise)
        return doc

    def level(self, rule: Rule) -> str:
        """The effective enforcement level of a rule: ``mandatory``, ``advisory`` or ``disabled``."""
        return self.enforcement.get(rule.name, rule.enforcement)

    def thresholds_for(self, rule: Rule) -> dict[str, int | float]:
        """The rule's thresholds: defaults overlaid by this config."""
        return {**rule.thresholds, **self.thresholds.get(rule.name, {})}

    def limits(self) -> dict[str, int | float]:
        """Every threshold by name, defaults overlaid by this config: the limits the stack spec validates against
        (``stackspec.spec_from_config(..., limits=...)``), so one policy config moves the spec and the rules. The
        spec refuses only what a mandatory policy would: an advisory or disabled policy's limits are infinite."""
        out: dict[str, int | float] = {}
        for rule in ALL_RULES:
            thresholds = self.thresholds_for(rule)
            out.update(thresholds if self.level(rule) == "mandatory" else dict.fromkeys(thresholds, math.inf))
        return out


Level = Literal["advisory", "mandatory", "disabled"]


def validate_threshold(rule: Rule, key: str, value: Any, where: str = "policy config") -> int | float:
    """A threshold value checked against the rule's schema (a number, an integer where the schema says so, and no
    smaller than its minimum); raises `InputError` naming the rule, the setting and the fix."""
    if key not in rule.thresholds:
        known = ", ".join(sorted(rule.thresholds)) or "none"
        raise InputError.single(where, f"{rule.name}.{key}", "is not a setting of this policy.",
                                f"use one of: {known}.")
    schema = rule.threshold_schema.get(key, {})
    if schema.get("type") == "array":  # a list of names (production_stacks)
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise InputError.single(where, f"{rule.name}.{key}", f"must be a list of names, got {clip(value)}.",
                                    f"write e.g. {json.dumps(list(rule.thresholds[key]) or ['prod'])}.")
        return tuple(value)  # type: ignore[return-value]
    if schema.get("type") == "string":  # a date (require-supported-runtime's as_of)
        if not isinstance(value, str):
            raise InputError.single(where, f"{rule.name}.{key}", f"must be text, got {clip(value)}.",
                                    "write it in quotes.")
        if key == "as_of" and value:
            try:
                date.fromisoformat(value)
            except ValueError:
                raise InputError.single(where, f"{rule.name}.{key}", f"is not a date: {clip(value)}.",
                                        "write YYYY-MM-DD, or leave it empty for today.") from None
        return value  # type: ignore[return-value]
    integer = schema.get("type") == "integer"
    number = as_number(value) if not isinstance(value, str) else None
    if number is None or (integer and not float(number).is_integer()):
        raise InputError.single(where, f"{rule.name}.{key}", f"must be {'an integer' if integer else 'a number'}, "
                                f"got {clip(value)}.", "write a number.")
    if "minimum" in schema and number < schema["minimum"]:
        raise InputError.single(where, f"{rule.name}.{key}", f"must be at least {schema['minimum']}, got "
                                f"{clip(value)}.", "raise the value.")
    return int(number) if float(number).is_integer() else number


class _Settings(BaseModel):
    """A policy's settings: its level and its thresholds (checked by `validate_threshold`)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    enforcementLevel: Level | None = None  # noqa: N815 - Pulumi's key

    @model_validator(mode="before")
    @classmethod
    def _level_alone(cls, value: Any) -> Any:
        """A policy's value may be just its level: ``"disabled"`` means ``{"enforcementLevel": "disabled"}``."""
        return {"enforcementLevel": value} if isinstance(value, str) else value


def _config_model() -> type[BaseModel]:
    """A pydantic model of the policy config: one optional field per policy (a level or its settings), and ``all``."""
    fields: dict[str, Any] = {"all": (_Settings | None, Field(None)),
                              "advise": (dict[str, Any] | None, Field(None))}
    for rule in RULES_BY_NAME.values():
        fields[rule.name.replace("-", "_")] = (_Settings | None, Field(None, alias=rule.name))
    return create_model("PolicyConfigFile", __config__=ConfigDict(extra="forbid", populate_by_name=False), **fields)


_CONFIG_MODEL = _config_model()


def merged_policy_config(base: str | Path | Mapping[str, Any] | PolicyConfig | None, section: Any, where: str
                         ) -> dict[str, Any]:
    """A stack's ``policy`` section (checked on its own first, so a problem names the stack file) over a
    ``--policy-config``: per policy, the section's level and thresholds win; ``advise`` settings merge; ``all``
    is the section's when it sets one."""
    load_policy_config(section, where)  # a problem names the stack file and its policy section
    raw: Any = read_document(base, "policy config") if isinstance(base, (str, Path)) else \
        base.as_document() if isinstance(base, PolicyConfig) else dict(base or {})
    if not isinstance(raw, Mapping):
        load_policy_config(base)  # raises the file's own error
        raw = {}

    def settings(value: Any) -> dict[str, Any]:
        return {"enforcementLevel": value} if isinstance(value, str) else dict(value or {})

    merged = {k: (settings(v) if k != "advise" else dict(v or {})) for k, v in raw.items()}
    for key, value in section.items():
        merged[key] = {**merged.get(key, {}), **settings(value)} if key not in ("all",) else settings(value)
    return merged


def load_policy_config(path_or_dict: str | Path | Mapping[str, Any] | PolicyConfig | None = None,
                       where: str = "policy config") -> PolicyConfig:
    """Read a policy config in Pulumi's shape, from a dict or a JSON (or YAML) file.

    ``{"<policy-name>": {"enforcementLevel": "advisory"|"mandatory"|"disabled", "<threshold>": N}}``; a policy's value
    may also be just the level (``{"<policy-name>": "disabled"}``), and the key ``all`` sets the level of every
    policy (named policies still win). A policy given without ``enforcementLevel`` keeps its own level. Validated by
    a pydantic model of the pack; an unknown policy name, setting or level raises `InputError` naming it.
    """
    if path_or_dict is None:
        return PolicyConfig()
    if isinstance(path_or_dict, PolicyConfig):
        return path_or_dict
    if isinstance(path_or_dict, (str, Path)):
        where = str(path_or_dict)
        data = read_document(path_or_dict, "policy config")
    else:
        data = path_or_dict
    if not isinstance(data, Mapping):
        raise InputError.single(where, "", f"expected an object keyed by policy name, got {type(data).__name__}.",
                                f"write {{\"<policy-name>\": {{\"enforcementLevel\": \"advisory\"}}}}; policies: "
                                f"{', '.join(RULES_BY_NAME)}.")
    try:
        parsed = _CONFIG_MODEL.model_validate(data)
    except ValidationError as exc:
        problems = problems_from_pydantic(exc, fix="use a level (advisory, mandatory, disabled) or an object.")
        for problem in problems:
            if problem.message.startswith("is not a known key"):
                problems[problems.index(problem)] = Problem(problem.field, "is not a policy of this pack.",
                                                            f"use one of: {', '.join(RULES_BY_NAME)}.")
        raise InputError(where, problems) from None

    enforcement: dict[str, str] = {}
    thresholds: dict[str, dict[str, int | float]] = {}
    everything: _Settings | None = parsed.all  # type: ignore[attr-defined]
    if everything is not None:
        if everything.model_extra:
            raise InputError.single(where, "all", f"accepts only enforcementLevel, got "
                                    f"{sorted(everything.model_extra)}.",
                                    "set thresholds per policy.")
        if everything.enforcementLevel is not None:
            enforcement.update({r.name: everything.enforcementLevel for r in RULES_BY_NAME.values()})
    for rule in RULES_BY_NAME.values():
        value = getattr(parsed, rule.name.replace("-", "_"))
        if value is None:
            continue
        if value.enforcementLevel is not None:
            enforcement[rule.name] = value.enforcementLevel
        for key, setting in (value.model_extra or {}).items():
            thresholds.setdefault(rule.name, {})[key] = validate_threshold(rule, key, setting, where)
    return PolicyConfig(enforcement=MappingProxyType(enforcement),
                        thresholds=MappingProxyType({k: MappingProxyType(v) for k, v in thresholds.items()}),
                        advise=MappingProxyType(_advise_settings(parsed.advise, where)))  # type: ignore[attr-defined]


def _advise_settings(raw: Mapping[str, Any] | None, where: str) -> dict[str, float | None]:
    """The ``advise`` section: each key one of `ADVISE_THRESHOLDS`, a number no smaller than its minimum (``null``
    only for the SLA, which has no default)."""
    out: dict[str, float | None] = {}
    for key, value in (raw or {}).items():
        spec = ADVISE_THRESHOLDS.get(key)
        if spec is None:
            raise InputError.single(where, f"advise.{key}", "is not a setting of stackplan advise.",
                                    f"use one of: {', '.join(ADVISE_THRESHOLDS)}.")
        if value is None and spec.default is None:
            out[key] = None
            continue
        number = as_number(value) if not isinstance(value, (str, bool)) else None
        if number is None or not math.isfinite(number) or (spec.integer and not float(number).is_integer()):
            raise InputError.single(where, f"advise.{key}", f"must be {'an integer' if spec.integer else 'a number'},"
                                    f" got {clip(value)}.", f"write a number ({spec.description})")
        if number < spec.minimum:
            raise InputError.single(where, f"advise.{key}", f"must be at least {spec.minimum:g}, got {clip(value)}.",
                                    "raise the value.")
        if spec.maximum is not None and number > spec.maximum:
            raise InputError.single(where, f"advise.{key}", f"must be at most {spec.maximum:g}, got {clip(value)}.",
                                    "lower the value.")
        out[key] = float(number)
    effective = {**{k: t.default for k, t in ADVISE_THRESHOLDS.items()}, **out}
    for low, high in ADVISE_ORDER:
        below, above = effective[low], effective[high]
        if below is not None and above is not None and below >= above:
            given = low if low in out else high
            raise InputError.single(where, f"advise.{given}", f"puts {low} ({below:g}) at or above {high} "
                                    f"({above:g}).", f"keep {low} below {high}.")
    return out


# --------------------------------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------------------------------

def views_of(resource_type: str, props: Mapping[str, Any] | None, source: Source = "pulumi",
             cloud: str | None = None) -> list[View]:
    """What the rules see of one resource: a `ClusterShape` per cluster definition of a Cluster or Job, a
    `PoolShape` for an instance pool, else one `ResourceView`. ``cloud`` is the plan's cloud, when known."""
    if resource_type == CLUSTER:
        return list(shapes_of_resource(resource_type, props, source, cloud=cloud, node_cloud=node_cloud,
                                       gpu_node=gpu_node))
    if resource_type == JOB:  # its cluster definitions, and the job as a whole (for rules about the job itself)
        job = source_props(props, source)
        shapes: list[View] = list(shapes_of_resource(JOB, job, source, cloud=cloud, node_cloud=node_cloud,
                                                     gpu_node=gpu_node))
        return [*shapes, ResourceView(resource_type=JOB, props=job, source=source)]
    if resource_type == INSTANCE_POOL:
        return [pool_shape(props, source)]
    return [ResourceView(resource_type=resource_type, props=source_props(props, source), source=source)]


def messages_for_views(rule: Rule, views: Iterable[View], thresholds: Mapping[str, Any]) -> list[str]:
    """A rule's messages over the views of one resource; a job cluster's messages start with its label. A view of a
    source the rule does not judge (`Rule.sources`: an export-only rule on a Pulumi input) gets none."""
    out = []
    for view in views:
        if view.resource_type not in rule.resource_types or view.source not in rule.sources:
            continue
        for message in rule.check(view, thresholds):
            out.append(f"{view.label}: {message}" if view.label else message)
    return out


def rule_messages(rule: Rule, resource_type: str, props: Mapping[str, Any] | None,
                  thresholds: Mapping[str, Any] | None = None, source: Source = "pulumi") -> list[str]:
    """One rule's violation messages for one resource (the pack's validate calls this)."""
    if resource_type not in rule.resource_types:
        return []
    return messages_for_views(rule, views_of(resource_type, props, source),
                              rule.thresholds if thresholds is None else thresholds)


class _Enabled:
    """The rules a config leaves enabled, with their level and thresholds, in ``ALL_RULES`` order; per resource
    type, the ones that judge it (worked out once per type, not once per resource)."""

    def __init__(self, cfg: PolicyConfig) -> None:
        self.rules = [(rule, cfg.level(rule), cfg.thresholds_for(rule)) for rule in resource_rules()
                      if cfg.level(rule) != "disabled"]
        self._by_type: dict[tuple[str, str], list[tuple[Rule, str, Mapping[str, Any]]]] = {}

    def for_type(self, resource_type: str, source: Source = "pulumi") -> list[tuple[Rule, str, Mapping[str, Any]]]:
        found = self._by_type.get((resource_type, source))
        if found is None:
            found = self._by_type[(resource_type, source)] = [
                e for e in self.rules if resource_type in e[0].resource_types and source in e[0].sources]
        return found


def evaluate_resource(resource_type: str, props: Mapping[str, Any] | None, *, urn: str, name: str,
                      config: Any = None, source: Source = "pulumi", cloud: str | None = None,
                      enabled: _Enabled | None = None, views: list[View] | None = None) -> list[Violation]:
    """Every enabled rule against one resource, in ``ALL_RULES`` order (its shapes are read once). ``enabled`` is
    `_Enabled` of the config, computed once by the callers that evaluate many resources; ``views`` are the
    resource's `views_of`, where the caller has read them already."""
    if enabled is None:
        enabled = _Enabled(load_policy_config(config))
    rules = enabled.for_type(resource_type, source)
    if not rules:
        return []
    if views is None:
        views = views_of(resource_type, props, source, cloud)
    out = []
    try:
        for rule, level, thresholds in rules:  # `messages_for_views`, inline: it runs for every rule of every resource
            types, sources, check = rule.resource_types, rule.sources, rule.check
            for view in views:
                if view.resource_type not in types or view.source not in sources:
                    continue
                for message in check(view, thresholds):
                    out.append(Violation(policy=rule.name, enforcement=level, urn=urn,  # type: ignore[arg-type]
                                         resource_name=name,
                                         message=f"{view.label}: {message}" if view.label else message))
    except team.TeamRuleFailure as failed:  # a team's rule broke: exit 2 naming it, its file and this resource
        raise failed.on(name) from None
    return out


def evaluate_plan(plan: Plan | Mapping[str, Any], config: Any = None) -> list[Violation]:
    """Violations of a plan (or of any JSON with its ``resources``), in resource order then rule order.

    Each resource is judged on its own, as the CrossGuard pack judges it (the pack does not know the plan's cloud:
    neither does this)."""
    enabled = _Enabled(load_policy_config(config))
    resources = plan.resources if isinstance(plan, Plan) else resources_of(plan)
    out: list[Violation] = []
    for res in resources:
        out.extend(evaluate_resource(res.type, res.inputs, urn=res.urn, name=res.name, source="pulumi",
                                     enabled=enabled))
    return out


#: Keys of which a cluster object has at least one.
def cluster_objects(obj: Any, source: str = "cluster JSON") -> list[Mapping[str, Any]]:
    """The cluster objects of an export (see `policies.exports`); raises `InputError` naming the first item that is
    no Databricks object."""
    return clusters_of(export_items(obj, source))


def evaluate_export(items: Iterable[Any], config: Any = None) -> list[Violation]:
    """Violations of a workspace export's items (`policies.exports.ExportItem`): clusters, jobs (their job and task
    clusters) and instance pools, read as API JSON. Role rules judge only AI compute (`dbxtypes.shape.is_gpu_compute`
    or a ``workload_type`` tag); other clusters meet the generic rules."""
    return audit_export(items, config)[0]


#: ``on_item(position, item, shapes)``: called for each item as it is judged, with its cluster definitions.
OnItem = Callable[[int, Any, list[ClusterShape]], None]


def audit_export(items: Iterable[Any], config: Any = None, *, used_by: Mapping[str, str] | None = None,
                 on_item: OnItem | None = None) -> tuple[list[Violation], dict[str, int]]:
    """`evaluate_export` and `policies.exports.summary` of the same items, each cluster definition read once (and
    dropped once judged: only the findings and the counts are kept). ``used_by`` (`policies.exports.job_runs_on`
    of all the items) lets ``items`` be a stream read once; without it the items are listed to work it out."""
    if used_by is None:
        items = list(items)
        used_by = job_runs_on(items)
    enabled = _Enabled(load_policy_config(config))
    counts = summary([])
    out: list[Violation] = []
    for position, item in enumerate(items):
        if item.resource_type == CLUSTER_POLICY_EXPORT:
            summary_add(counts, item, [])
            if on_item is not None:
                on_item(position, item, [])
            continue
        props, name = item.props, item.name
        if item.resource_type == CLUSTER and item.props.get("cluster_id") in used_by:
            # a GPU all-purpose cluster that jobs run on is judged as the batch workload they make it (training),
            # unless its own tags name a role; a CPU one stays generic
            props, name = _as_job_cluster(item.props), f"{name} (runs {used_by[item.props['cluster_id']]})"
        views = views_of(item.resource_type, props, "api")
        shapes = [v for v in views if isinstance(v, ClusterShape)] if props is item.props else item_shapes(item)
        summary_add(counts, item, shapes)
        out.extend(evaluate_resource(item.resource_type, props, urn=item.urn, name=name, source="api",
                                     enabled=enabled, views=views))
        if on_item is not None:
            on_item(position, item, shapes)
    return out, counts


def _as_job_cluster(props: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = props.get("custom_tags")
    tags: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    nodes = (props.get("node_type_id"), props.get("driver_node_type_id"))
    if tag_role(tags) or not is_gpu_compute(props, nodes, gpu_node):
        return props
    return {**props, "custom_tags": {**tags, ROLE_TAG: "training"}}


def evaluate_cluster_json(obj: Any, config: Any = None, source: str = "cluster JSON") -> list[Violation]:
    """Violations of an export given as JSON data (a cluster, a list, ``{"clusters": [...]}``, jobs, pools; see
    `policies.exports`). Each violation names the object (``cluster_name``, the job's name, ...) and gets the urn
    ``cluster:<id or name or index>`` (``job:...``, ``instance-pool:...``). Raises `InputError` for anything else."""
    return evaluate_export(export_items(obj, source), config)
