"""The offline evaluators: every rule over a resource, a plan, a workspace export or Clusters API JSON, and every
stack rule over a stack (`evaluate_stack`).

The CrossGuard pack (``dbx_ai_infra/policies/pack.py``) and these evaluators run the same code path, `rule_messages`,
so a plan evaluated offline and the same resources analysed by the pack over gRPC give the same violations.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.dbxtypes.plan import NOT_JUDGED, Plan, Violation, resources_of
from dbx_ai_infra.dbxtypes.shape import (
    ClusterShape,
    Source,
    is_gpu_compute,
    pool_shape,
    shapes_of_resource,
    source_props,
    tag_role,
)
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLUSTER,
    INSTANCE_POOL,
    JOB,
    ROLE_TAG,
    UNKNOWN_ARGUMENT,
    UNKNOWN_VALUE,
    SelectedValue,
)
from dbx_ai_infra.policies.access import access_links, with_access
from dbx_ai_infra.policies.common import gpu_node, node_cloud
from dbx_ai_infra.policies.config import PolicyConfig, load_policy_config
from dbx_ai_infra.policies.items import (
    CLUSTER_POLICY_EXPORT,
    is_plan_item,
    item_ids,
    item_shapes,
    job_runs_on,
    summary,
    summary_add,
)
from dbx_ai_infra.policies.rule import ResourceView, Rule, StackFinding, StackView, View
from dbx_ai_infra.policies.ruleset import resource_rules, stack_rules
from dbx_ai_infra.policies.team_process import RemoteCheck, TeamBatch

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


def _unknown(value: Any) -> bool:
    """A value known only after apply, or holding one (a map of tags merged with an unknown one). A value a data
    source selects (`SelectedValue`) is judged by the data source's arguments, by the rules that read them."""
    if isinstance(value, SelectedValue):
        return False
    if isinstance(value, str):
        return value == UNKNOWN_VALUE
    if isinstance(value, Mapping):
        return any(_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_unknown(v) for v in value)
    return False


def _holds_unknown(value: Any) -> bool:
    """Whether `UNKNOWN_VALUE` (a `SelectedValue` is one) is anywhere in ``value``: one walk of the whole value, where
    `unknown_fields` walks each rule's paths (the plain JSON types first: the abstract-class checks cost more than
    the walk)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif isinstance(item, str):
            if item == UNKNOWN_VALUE:
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def may_be_unknown(view: View) -> bool:
    """Whether any field of ``view`` can be unknown to a rule (`unknown_fields` finds none where this is False): its
    props or its job hold `UNKNOWN_VALUE`, or its access is unknown. Read once per view, not once per rule: a
    workspace export's 5,000 clusters hold none, and every rule's paths were walked for nothing (issue 53, item 5)."""
    return getattr(view, "access", None) == UNKNOWN_VALUE or _holds_unknown(view.props) or \
        _holds_unknown(getattr(view, "job", None))


def unknown_fields(view: View, paths: Iterable[str]) -> list[str]:
    """The fields of ``paths`` (`Rule.reads`) that are unknown in ``view``: the field, a value inside it, or the
    block that holds it (``autoscale`` unknown: ``autoscale.min_workers`` is). ``field(argument)`` reads the argument
    of the data source that selects the field (``spark_version(gpu)``: a `SelectedValue`'s ``gpu``), unknown when the
    configuration computes it (a variable with no value: issue 51, never judged silently)."""
    return [field for field in (_unknown_read(view, read) for read in paths) if field is not None]


def _unknown_read(view: View, read: str) -> str | None:
    """What `unknown_fields` says of one read, or None when it is known."""
    path, _, argument = read.partition("(")
    argument = argument.rstrip(")")
    steps = path.split(".")
    if steps[0] == "access":  # the plan's Permissions (`dbx_ai_infra.policies.access.with_access`)
        if getattr(view, "access", None) == UNKNOWN_VALUE:
            return "access (a Permissions resource whose target is known only after apply may name it)"
        return None
    if steps[0] == "job":
        value = _value_at(getattr(view, "job", None) or {}, steps[1:])
    else:
        value = _value_at(view.props, steps)
    if argument:
        if isinstance(value, SelectedValue) and value.arguments.get(argument) == UNKNOWN_ARGUMENT:
            return f"{path} (the argument {argument} of {value.source})"
        return None
    return path if _unknown(value) else None


def _value_at(value: Any, steps: list[str]) -> Any:
    """The value at ``steps`` below ``value``; an unknown value on the way stops there (the block is unknown), and a
    list on the way (served entities) gives the field of each element."""
    for step in steps:
        if isinstance(value, str) and _unknown(value):
            break
        if isinstance(value, list):
            value = [e.get(step) if isinstance(e, Mapping) else None for e in value]
            continue
        value = value.get(step) if isinstance(value, Mapping) else None
    return value


def not_judged_message(fields: list[str], export: bool = False) -> str:
    """What a not-judged entry says: which fields are unknown, and how to make them known (``export``: of an object
    a workspace returned, whose answer did not hold them)."""
    verb = "is" if len(fields) == 1 else "are"
    if export:
        return (f"not judged: {', '.join(fields)} {verb} not in what the workspace returned (a list response, such "
                "as serving-endpoints list, holds no sizes), so this rule can neither pass nor fail it. Fix: export "
                "the object itself (databricks serving-endpoints get NAME -o json), or read the workspace live "
                "(check --workspace reads each endpoint whole); --fail-on-unknown fails the run on it.")
    return (f"not judged: {', '.join(fields)} {verb} unknown here (known only at apply: a data source, another "
            "resource's attribute, a variable with no value, or an expression not evaluated), so this rule can "
            "neither pass nor fail it. Fix: give the variables values (--var-file, TF_VAR_<name>) or check the plan "
            "(check --terraform-plan); --fail-on-unknown fails the run on it.")


def one_finding(found: list[tuple[str, str]]) -> list[str]:
    """A rule's findings on one resource as one message (one finding per rule per resource): ``found`` holds
    (view label, message) pairs; the same message on several views (each job cluster of a job) is said once,
    naming every place; different messages follow one another, separated by `` | ``."""
    if not found:
        return []
    places: dict[str, list[str]] = {}
    for label, message in found:
        where = places.setdefault(message, [])
        if label not in where:
            where.append(label)
    parts = [f"{', '.join(w for w in where if w)}: {message}" if any(where) else message
             for message, where in places.items()]
    return [" | ".join(parts)]


def messages_for_views(rule: Rule, views: Iterable[View], thresholds: Mapping[str, Any], *,
                       one: bool = False) -> list[str]:
    """A rule's messages over the views of one resource; a job cluster's messages start with its label. A view of a
    source the rule does not judge (`Rule.sources`: an export-only rule on a Pulumi input) gets none. ``one``: as
    one finding per rule per resource (`one_finding`), as the offline evaluators and the pack report them."""
    found: list[tuple[str, str]] = []
    config = rule.configured(thresholds)
    for view in views:
        if rule.judges(view):
            found += [(view.label, message) for message in rule.check(view, config)]
    if one:
        return one_finding(found)
    return [f"{label}: {message}" if label else message for label, message in found]


def rule_messages(rule: Rule, resource_type: str, props: Mapping[str, Any] | None,
                  thresholds: Mapping[str, Any] | None = None, source: Source = "pulumi", *,
                  one: bool = False) -> list[str]:
    """One rule's violation messages for one resource (the pack's validate calls this with ``one``)."""
    if resource_type not in rule.resource_types:
        return []
    return messages_for_views(rule, views_of(resource_type, props, source),
                              rule.thresholds if thresholds is None else thresholds, one=one)


class _Enabled:
    """The rules a config leaves enabled, with their level and settings (`Rule.configured`), in ``ALL_RULES`` order;
    per resource type, the ones that judge it (worked out once per type, not once per resource)."""

    def __init__(self, cfg: PolicyConfig) -> None:
        self.rules = [(rule, cfg.level(rule), rule.configured(cfg.thresholds_for(rule))) for rule in resource_rules()
                      if cfg.level(rule) != "disabled"]
        self._by_type: dict[tuple[str, str], list[tuple[Rule, str, Any]]] = {}

    def for_type(self, resource_type: str, source: Source = "pulumi") -> list[tuple[Rule, str, Any]]:
        found = self._by_type.get((resource_type, source))
        if found is None:
            found = self._by_type[(resource_type, source)] = [
                e for e in self.rules if resource_type in e[0].resource_types and source in e[0].sources]
        return found


def evaluate_resource(resource_type: str, props: Mapping[str, Any] | None, *, urn: str, name: str,
                      config: Any = None, source: Source = "pulumi", cloud: str | None = None,
                      enabled: _Enabled | None = None, views: list[View] | None = None,
                      batch: TeamBatch | None = None, known: bool = False) -> list[Violation]:
    """Every enabled rule against one resource, in ``ALL_RULES`` order (its shapes are read once). ``enabled`` is
    `_Enabled` of the config, computed once by the callers that evaluate many resources; ``views`` are the
    resource's `views_of`, where the caller has read them already. A team rule's calls go to ``batch`` (its
    violations are added to the list returned when the batch is flushed), else are judged before returning.
    ``known``: the caller read the resource from a text that holds no unknown value
    (`dbx_ai_infra.dbxtypes.vocabulary.json_text_may_hold_unknown`), so its views are not walked for one."""
    if enabled is None:
        enabled = _Enabled(load_policy_config(config))
    rules = enabled.for_type(resource_type, source)
    if not rules:
        return []
    if views is None:
        views = views_of(resource_type, props, source, cloud)
    out: list[Violation] = []
    own = batch is None
    if batch is None:
        batch = TeamBatch()
    target = _Target(urn, name, source, out, batch)
    checked = [(view, not known and may_be_unknown(view)) for view in views]  # each walked once, not once per rule
    for rule, level, config in rules:
        _judge_rule(rule, level, config, checked, target)
    if own:
        batch.flush()
    return out


@dataclass(frozen=True)
class _Target:
    """The resource `evaluate_resource` judges: its URN and name, its source, where its violations go and where a
    team rule's calls wait."""

    urn: str
    name: str
    source: Source
    out: list[Violation]
    batch: TeamBatch


def _judge_rule(rule: Rule, level: str, config: Any, views: list[tuple[View, bool]], target: _Target) -> None:
    """One rule over one resource's views (`messages_for_views`, inline: it runs for every rule of every resource):
    its finding, the views a team rule judges in its process, and what it could not judge. Each view comes with
    `may_be_unknown` of it, read once for all the rules: only such a view's fields are looked up."""
    types, sources, takes, check = rule.resource_types, rule.sources, rule.takes, rule.check
    found: list[tuple[str, str]] = []
    unjudged: list[tuple[str, str]] = []
    judged: list[View] = []
    for view, maybe in views:
        if view.resource_type not in types or view.source not in sources or not isinstance(view, takes):
            continue  # `Rule.judges`, inline
        unknown = _not_judged(rule, view, target.source) if maybe else None
        if unknown is not None:
            unjudged.append((view.label, unknown))
        elif isinstance(check, RemoteCheck):  # a team rule: in its process, with other resources' calls
            judged.append(view)
        else:
            found += [(view.label, message) for message in check(view, config)]
    if found:
        target.out.append(Violation(policy=rule.name, enforcement=level, urn=target.urn,  # type: ignore[arg-type]
                                    resource_name=target.name, message=one_finding(found)[0]))
    if judged:
        _team_calls(target.batch, rule, level, config, judged, target.out, target.urn, target.name)
    if unjudged:
        target.out.append(Violation(policy=rule.name, enforcement=NOT_JUDGED, urn=target.urn,
                                    resource_name=target.name, message=one_finding(unjudged)[0]))


def _not_judged(rule: Rule, view: View, source: Source) -> str | None:
    """Why ``rule`` cannot judge ``view`` (a field it reads is unknown, on a view it is about), or None."""
    unknown = unknown_fields(view, rule.reads) if rule.reads else None
    if not unknown or (rule.concerns is not None and not rule.concerns(view)):
        return None
    export = source == "api" and not getattr(view, "terraform", False)  # a workspace's answer
    return not_judged_message(unknown, export)


def _team_calls(batch: TeamBatch, rule: Rule, level: str, thresholds: Mapping[str, Any], views: list[View],
                out: list[Violation], urn: str, name: str) -> None:
    """A team rule's calls over one resource's views, to ``batch``; its finding goes to ``out`` once answered."""
    judged = [view for view in views if rule.judges(view)]
    finding = _Finding(out, rule.name, level, urn, name, len(judged))
    assert isinstance(rule.check, RemoteCheck)
    for view in judged:
        batch.add(rule.check, view, thresholds, name, functools.partial(finding.add, view.label))


class _Finding:
    """One rule's finding on one resource (`one_finding`), made once every view it judges has answered (a team
    rule's answers come when its batch is flushed), added to ``out`` then."""

    def __init__(self, out: list[Violation], policy: str, level: str, urn: str, name: str, views: int) -> None:
        self.out, self.policy, self.level, self.urn, self.name, self.left = out, policy, level, urn, name, views
        self.found: list[tuple[str, str]] = []

    def add(self, label: str, messages: Iterable[str]) -> None:
        self.found += [(label, message) for message in messages]
        self.left -= 1
        if not self.left and self.found:
            self.out.append(Violation(policy=self.policy, enforcement=self.level,  # type: ignore[arg-type]
                                      urn=self.urn, resource_name=self.name, message=one_finding(self.found)[0]))


def evaluate_plan(plan: Plan | Mapping[str, Any], config: Any = None) -> list[Violation]:
    """Violations of a plan (or of any JSON with its ``resources``), in resource order then rule order.

    Each resource is judged on its own, as the CrossGuard pack judges it (the pack does not know the plan's cloud:
    neither does this)."""
    enabled = _Enabled(load_policy_config(config))
    resources = plan.resources if isinstance(plan, Plan) else resources_of(plan)
    links = access_links((res.type, res.inputs) for res in resources)  # a plan states every Permissions it makes
    per_resource: list[list[Violation]] = []
    batch = TeamBatch()
    for res in resources:
        views = with_access(res.type, (res.id, res.urn), views_of(res.type, res.inputs, "pulumi"), links)
        per_resource.append(evaluate_resource(res.type, res.inputs, urn=res.urn, name=res.name, source="pulumi",
                                              enabled=enabled, views=views, batch=batch))
    batch.flush()
    return [v for found in per_resource for v in found]


def evaluate_stack(stack: StackView, config: Any = None, rules: Iterable[Rule] | None = None
                   ) -> tuple[list[Violation], list[str]]:
    """Every enabled stack rule (``rules``, else `stack_rules`, in order) over one stack: the violations, each on the
    stack or on the resource its finding names, at the rule's configured level, and the notes the rules say. With a
    change (`StackView.change`: ``cost --against``) only the rules that judge cost (`Rule.judges_cost`) are run."""
    cfg = load_policy_config(config)
    violations: list[Violation] = []
    notes: list[str] = []
    for rule in stack_rules() if rules is None else rules:
        level = cfg.level(rule)
        if level == "disabled" or (stack.change is not None and not rule.judges_cost):
            continue
        for finding in stack_findings(rule, stack, cfg.thresholds_for(rule)):
            if finding.note:
                notes.append(finding.message)
            else:
                violations.append(_stack_violation(rule, level, stack, finding))
    return violations, notes


def stack_findings(rule: Rule, stack: StackView, thresholds: Mapping[str, Any]) -> list[StackFinding]:
    """What one stack rule says of ``stack`` (a plain message is a finding on the stack)."""
    if rule.stack_check is None:
        raise ValueError(f"rule {rule.name} is no stack rule (scope {rule.scope!r})")
    return [found if isinstance(found, StackFinding) else StackFinding(found)
            for found in rule.stack_check(stack, rule.configured(thresholds))]


def _stack_violation(rule: Rule, level: str, stack: StackView, finding: StackFinding) -> Violation:
    """A stack rule's finding as a violation: on its resource, else on the stack."""
    on = finding.resource
    return Violation(policy=rule.name, enforcement="advisory" if level == "advisory" else "mandatory",
                     urn=on.urn if on is not None else stack.plan.stack_urn,
                     resource_name=on.name if on is not None else stack.plan.stack, message=finding.message)


def evaluate_export(items: Iterable[Any], config: Any = None) -> list[Violation]:
    """Violations of a workspace export's items (`dbx_ai_infra.policies.items.ExportItem`): clusters, jobs (their job
    and task clusters) and instance pools, read as API JSON. Role rules judge only AI compute
    (`dbx_ai_infra.dbxtypes.shape.is_gpu_compute` or a ``workload_type`` tag); other clusters meet the generic rules."""
    return audit_export(items, config)[0]


#: ``on_item(position, item, shapes)``: called for each item as it is judged, with its cluster definitions.
OnItem = Callable[[int, Any, list[ClusterShape]], None]


def audit_export(items: Iterable[Any], config: Any = None, *, used_by: Mapping[str, str] | None = None,
                 on_item: OnItem | None = None) -> tuple[list[Violation], dict[str, int]]:
    """`evaluate_export` and `dbx_ai_infra.policies.items.summary` of the same items, each cluster definition read once
    (and dropped once judged: only the findings and the counts are kept). ``used_by``
    (`dbx_ai_infra.policies.items.job_runs_on` of all the items) lets ``items`` be a stream read once; without it the
    items are listed to work it out."""
    if used_by is None:
        items = list(items)
        used_by = job_runs_on(items)
    # a Terraform plan states every Permissions of its configuration; a workspace export holds none: not known
    links = access_links((i.resource_type, i.props) for i in items) \
        if isinstance(items, list) and any(is_plan_item(i) for i in items) else None
    enabled = _Enabled(load_policy_config(config))
    counts = summary([])
    per_item: list[list[Violation]] = []
    batch = TeamBatch()
    for position, item in enumerate(items):
        if getattr(item, "unchanged", False):  # a plan's no-op: not created or changed by what is being checked
            counts["unchanged"] += 1
            if on_item is not None:
                on_item(position, item, [])
            continue
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
        views = with_access(item.resource_type, (item.name, *item_ids(item)), views_of(item.resource_type, props,
                                                                                      "api"), links)
        if is_plan_item(item):  # written in the provider's schema (`require_api_conformance.terraform_fields`)
            views = [dataclasses.replace(v, terraform=True) for v in views]
        shapes = [v for v in views if isinstance(v, ClusterShape)] if props is item.props else item_shapes(item)
        summary_add(counts, item, shapes)
        per_item.append(evaluate_resource(item.resource_type, props, urn=item.urn, name=name, source="api",
                                          enabled=enabled, views=views, batch=batch,
                                          known=item.known and props is item.props))
        if on_item is not None:
            on_item(position, item, shapes)
    batch.flush()
    return [v for found in per_item for v in found], counts


def _as_job_cluster(props: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = props.get("custom_tags")
    tags: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    nodes = (props.get("node_type_id"), props.get("driver_node_type_id"))
    if tag_role(tags) or not is_gpu_compute(props, nodes, gpu_node):
        return props
    return {**props, "custom_tags": {**tags, ROLE_TAG: "training"}}
