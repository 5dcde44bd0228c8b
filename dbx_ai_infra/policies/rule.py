"""The `Rule` record and the views a rule's `check` receives (shapes from `dbx_ai_infra.dbxtypes.shape`), and the view
of a whole stack a stack rule's `Rule.stack_check` receives (`StackView`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from dbx_ai_infra.dbxtypes.plan import Plan, Resource
from dbx_ai_infra.dbxtypes.shape import ClusterShape, PoolShape, Source

Enforcement = Literal["mandatory", "advisory"]


@dataclass(frozen=True)
class ResourceView:
    """A resource that is neither a cluster definition nor a pool (grants, library), normalised to snake_case."""

    resource_type: str
    props: Mapping[str, Any]
    source: Source = "pulumi"
    label: str = ""
    #: A job's access controls from a ``Permissions`` resource of the same plan (see ``ClusterShape.access``).
    access: tuple[Mapping[str, Any], ...] | str | None = None
    #: Read from Terraform (see ``ClusterShape.terraform``).
    terraform: bool = False


#: What a rule's ``check`` receives: a cluster definition, an instance pool, or another resource.
View = ClusterShape | PoolShape | ResourceView
#: A kind of view (`Rule.takes`).
ViewKind = type[ClusterShape] | type[PoolShape] | type[ResourceView]
#: Every kind of view, by name (how a team rule's process names the kinds its rule takes).
VIEW_KINDS: Mapping[str, ViewKind] = MappingProxyType({k.__name__: k for k in (ClusterShape, PoolShape, ResourceView)})
#: ``check(view, config)``: ``view`` is of a kind the rule takes (`Rule.takes`), so a check annotates it as such;
#: ``config`` is the rule's typed settings (`Rule.configured`), so a check annotates it as its ``Settings``.
Check = Callable[[Any, Any], list[str]]


@dataclass(frozen=True)
class ServedModel:
    """One serving endpoint of a stack and the model version it serves (``serving.endpoints``)."""

    endpoint: str
    entity: str  #: catalog.schema.model
    version: str
    #: The stack declares the version registered (``serving.endpoints.<name>.model_registered``).
    declared: bool

    @property
    def catalog(self) -> str:
        return self.entity.split(".", 1)[0]


@dataclass(frozen=True)
class StackView:
    """A whole stack as a stack rule (``Rule.scope`` ``"stack"``) judges it, built by each front end from what it
    sees: the offline pipeline from the stack file and its plan (`dbx_ai_infra.engine.pipeline`), ``cost --against``
    with the change, the CrossGuard pack from the resources and its config (`dbx_ai_infra.policies.pack`)."""

    #: The stack's plan: its resources, its cost where it was priced (`Plan.cost`), its budget (`Plan.budget`).
    plan: Plan
    #: What the stack's serving endpoints serve (the stack file's; the pack does not see it: none).
    served: tuple[ServedModel, ...] = ()
    #: A change being judged (``cost --against``): the cost diff from the base (`dbx_ai_infra.pricing.diff_costs`);
    #: only the rules that judge cost (`Rule.judges_cost`) are called with one.
    change: Mapping[str, Any] | None = None
    #: Why the stack could not be priced where it is judged (the pack's config names a region it has no prices
    #: for): a rule that needs the price fails closed with it.
    unpriceable: str | None = None


@dataclass(frozen=True)
class StackFinding:
    """What a stack rule says: a message on the stack, or on one of its resources; a ``note`` is said to the user
    (stderr) and is no violation."""

    message: str
    resource: Resource | None = None
    note: bool = False


#: A stack rule's check: its findings over a `StackView`, given its settings (`Rule.configured`; a plain message is on
#: the stack).
StackCheck = Callable[[StackView, Any], Sequence[str | StackFinding]]


def _judged_per_stack(view: View, config: Any) -> list[str]:
    """The resource check of a rule that judges no resource (a stack rule): nothing."""
    return []


class Thresholds(BaseModel):
    """A rule's thresholds, typed: one field per threshold, its type and bounds in the annotation
    (``Annotated[int, Field(ge=1)]``), its default the rule's default, its ``description`` what the policy config's
    schema and the docs say of it. A rule names its subclass as ``Rule(settings=...)``; its defaults and JSON schema
    are read from it, so each threshold is declared once. Its check receives an instance holding the thresholds the
    policy config sets (`Rule.configured`) and reads each as an attribute, of its declared type
    (``config.max_workers_cap``); a check written against a mapping (``config["max_workers_cap"]``,
    ``config.get(...)``: a team rule's, before typed thresholds) reads the same values."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __getitem__(self, key: str) -> Any:
        if key not in type(self).model_fields:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in type(self).model_fields else default


#: The JSON-schema keys a threshold's schema keeps, in the order the policy config and the docs show them.
_SCHEMA_KEYS = ("type", "items", "minimum", "description")


def threshold_schema(settings: type[Thresholds]) -> dict[str, dict[str, Any]]:
    """Each threshold's JSON schema (``type``, ``items``, ``minimum``, ``description``) from its typed field."""
    properties = settings.model_json_schema()["properties"]
    return {key: {k: prop[k] for k in _SCHEMA_KEYS if k in prop} for key, prop in properties.items()}


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One policy.

    ``check(view, config)`` is a pure function returning violation messages, each ending with a ``Fix: ...`` hint.
    ``config`` holds every one of this rule's thresholds (the defaults of its typed ``settings``, overlaid by the policy
    config), as an instance of ``settings`` (`configured`): a check reads ``config.<threshold>``, typed, and states no
    default of its own. The evaluators
    call ``check`` once per cluster definition (a ``ClusterShape``) for Clusters and Jobs, once per pool (a
    ``PoolShape``), and once per resource (a ``ResourceView``, a Job's own too) for the other types in
    ``resource_types``: each view of a kind the rule ``takes`` (`judges`). A stack rule (``scope`` ``"stack"``)
    judges no resource: its ``stack_check(stack, config)`` is called once per stack, with a `StackView`.
    """

    name: str
    #: What the rule asks, in a sentence or two: the pack's policy description, the reports' and the policy index's.
    description: str
    enforcement: Enforcement
    #: What the policy index (docs/reference/policies.md, generated from the rules by docs/gen_reference.py) says of
    #: the rule beyond ``description``: where it comes from, what it leaves out, how it is read (Markdown; a link is
    #: relative to docs/reference/). The index is the rules' one table, so a rule's documentation is its module.
    details: str = ""
    resource_types: tuple[str, ...] = ()
    check: Check = _judged_per_stack
    remediation: str
    severity: Literal["low", "medium", "high", "critical"] = "high"
    #: Where a built-in rule is listed (the pack's policies, the reports, the policy index), ascending: mandatory
    #: rules first; a new rule takes a free number (a test holds them unique). A team's rules are listed after the
    #: built-in ones, in the order of their files.
    order: int = 0
    #: The rule's typed thresholds (a `Thresholds` subclass); ``thresholds`` and ``threshold_schema`` are read from
    #: it. A team rule may still give those two as plain mappings instead (the form before typed thresholds).
    settings: type[Thresholds] | None = None
    thresholds: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: JSON-schema snippets for the thresholds (``type``, ``minimum``, ``description``); the default comes from
    #: ``thresholds``.
    threshold_schema: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))
    #: The stack fields that decide this rule's outcome, most telling first: a finding points at the first one the
    #: stack sets, in the resource's section (``min_workers``) or at the top (``tags``); else at the section.
    stack_fields: tuple[str, ...] = ()
    #: What the rule judges: ``pulumi`` (what the project generates) and ``api`` (documents of a workspace); an
    #: export-only rule says ``("api",)`` and is never called on a plan.
    sources: tuple[Source, ...] = ("pulumi", "api")
    #: ``resource``: judged from the resource alone. ``plan``: judged with what the rest of the plan says of it (its
    #: views' ``access``, from the plan's Permissions): the offline evaluators hand it the plan's links, and the
    #: CrossGuard pack runs it as a stack validation, which sees every resource.
    #: ``stack``: judged once per stack, over the whole (priced) stack (`stack_check`, a `StackView`: the budget,
    #: the model versions a stack's endpoints serve), by the pipeline, ``cost`` and the pack alike
    #: (`dbx_ai_infra.policies.evaluate.evaluate_stack`). ``stacks``: judged over several stacks at once, by a run
    #: of several (`dbx_ai_infra.engine.multi`).
    scope: Literal["resource", "plan", "stack", "stacks"] = "resource"
    #: A stack rule's check (``scope`` ``"stack"``).
    stack_check: StackCheck | None = None
    #: A stack rule about what the stack costs: ``cost`` fails on it (its other findings are check's to fail on),
    #: and it judges a change as well (``cost --against``: `StackView.change` set); the others judge a stack once.
    judges_cost: bool = False
    #: A stack rule the CrossGuard pack judges (a stack validation): what it reads from the pack's config besides its
    #: thresholds (JSON-schema snippets; the budget's limits), since the pack sees only the resources, not the stack
    #: file. None: the pack cannot judge it (it reads what only the stack file says: the registered-model rule), so
    #: it is no policy of the pack, rather than one that passes on what it cannot see.
    pack_settings: Mapping[str, Mapping[str, Any]] | None = None
    #: The fields the rule's outcome depends on (dotted paths in the resource's API JSON, ``autoscale.min_workers``;
    #: ``job.tags``: the job's own, for a job cluster). Where one is unknown (Terraform's ``<known after apply>``: a
    #: data source, a variable with no value, an expression not evaluated), the evaluators report the rule as not
    #: judged on that resource (`dbx_ai_infra.policies.evaluate.unknown_fields`): never a finding from an unknown, never
    #: a pass. ``field(argument)`` reads an argument of the data source that selects the field (``spark_version(gpu)``).
    reads: tuple[str, ...] = ()
    #: The kinds of view ``check`` takes (a cluster definition, a pool, another resource): the evaluators hand it
    #: no other, so a check starts with its own question, not with an ``isinstance`` guard.
    takes: tuple[ViewKind, ...] = (ClusterShape, PoolShape, ResourceView)
    #: Whether the rule is about a view at all (the role rules: GPU compute; auto-termination: an all-purpose
    #: cluster): one it is not about is not reported as not judged. None: every view it takes (`judges`); asked
    #: only of those, so it too takes the rule's kinds.
    concerns: Callable[[Any], bool] | None = None
    #: For a rule whose typed ``settings`` live in another process (a team rule, `dbx_ai_infra.policies.team_process`):
    #: checks a policy config's values for it there, returning the first problem's message or None.
    settings_check: Callable[[Mapping[str, Any]], str | None] | None = field(default=None, repr=False,
                                                                             compare=False)

    def configured(self, thresholds: Mapping[str, Any]) -> Any:
        """What ``check`` and ``stack_check`` receive as ``config``: the rule's typed ``settings`` holding
        ``thresholds`` (its defaults overlaid by the policy config, each value already checked against its field),
        made once per evaluation, not once per view; a rule of plain ``thresholds`` mappings gets the mapping."""
        return thresholds if self.settings is None else self.settings.model_validate(dict(thresholds))

    def judges(self, view: View) -> bool:
        """Whether ``check`` is called on ``view``: of the rule's resource types, sources and kinds of view."""
        return view.resource_type in self.resource_types and view.source in self.sources and \
            isinstance(view, self.takes)

    def __post_init__(self) -> None:
        if self.enforcement not in ("mandatory", "advisory"):
            raise ValueError(f"rule {self.name}: enforcement must be mandatory or advisory, got {self.enforcement!r}")
        problem = next((message for wrong, message in _SCOPE_PROBLEMS if wrong(self)), None)
        if problem is not None:
            raise ValueError(f"rule {self.name}: {problem}")
        if self.settings is not None:
            defaults, schema = self.settings().model_dump(), threshold_schema(self.settings)
            # given again only as a copy of the rule (dataclasses.replace passes every field)
            if (self.thresholds and dict(self.thresholds) != defaults) or \
                    (self.threshold_schema and dict(self.threshold_schema) != schema):
                raise ValueError(f"rule {self.name}: declare thresholds once, as settings= (typed) or as thresholds= "
                                 "with threshold_schema=, not both")
            object.__setattr__(self, "thresholds", MappingProxyType(defaults))
            object.__setattr__(self, "threshold_schema", MappingProxyType(schema))
        if set(self.threshold_schema) - set(self.thresholds):
            unknown = sorted(set(self.threshold_schema) - set(self.thresholds))
            raise ValueError(f"rule {self.name}: schema for unknown thresholds {unknown}")


#: What a rule's kind (`Rule.scope`) asks of its other fields: (the rule is wrong, what it must do).
_SCOPE_PROBLEMS: tuple[tuple[Callable[[Rule], bool], str], ...] = (
    (lambda rule: (rule.scope == "stack") != (rule.stack_check is not None),
     "a stack rule (scope stack) has a stack_check, and only a stack rule"),
    (lambda rule: rule.scope in ("stack", "stacks") and bool(rule.resource_types),
     "a rule of scope stack or stacks judges no resource: no resource_types"),
    (lambda rule: rule.scope in ("resource", "plan") and rule.check is _judged_per_stack,
     "a rule of scope resource or plan has a check (of each view of its resource_types)"),
)
