"""The `Rule` record and the views a rule's `check` receives (shapes from `dbx_ai_infra.dbxtypes.shape`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

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
Check = Callable[[View, Mapping[str, Any]], list[str]]


class Thresholds(BaseModel):
    """A rule's thresholds, typed: one field per threshold, its type and bounds in the annotation
    (``Annotated[int, Field(ge=1)]``), its default the rule's default, its ``description`` what the policy config's
    schema and the docs say of it. A rule names its subclass as ``Rule(settings=...)``; its defaults and JSON schema
    are read from it, so each threshold is declared once."""

    model_config = ConfigDict(frozen=True, extra="forbid")


#: The JSON-schema keys a threshold's schema keeps, in the order the policy config and the docs show them.
_SCHEMA_KEYS = ("type", "items", "minimum", "description")


def threshold_schema(settings: type[Thresholds]) -> dict[str, dict[str, Any]]:
    """Each threshold's JSON schema (``type``, ``items``, ``minimum``, ``description``) from its typed field."""
    properties = settings.model_json_schema()["properties"]
    return {key: {k: prop[k] for k in _SCHEMA_KEYS if k in prop} for key, prop in properties.items()}


@dataclass(frozen=True)
class Rule:
    """One policy.

    ``check(view, config)`` is a pure function returning violation messages, each ending with a ``Fix: ...`` hint.
    ``config`` holds this rule's thresholds (``thresholds`` merged with any overrides). The registry calls ``check``
    once per cluster definition (a ``ClusterShape``) for Clusters and Jobs, once per pool (a ``PoolShape``), and
    once per resource (a ``ResourceView``) for the other types in ``resource_types``.
    """

    name: str
    description: str
    enforcement: Enforcement
    resource_types: tuple[str, ...]
    check: Check
    remediation: str
    severity: Literal["low", "medium", "high", "critical"] = "high"
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
    scope: Literal["resource", "plan"] = "resource"
    #: The fields the rule's outcome depends on (dotted paths in the resource's API JSON, ``autoscale.min_workers``;
    #: ``job.tags``: the job's own, for a job cluster). Where one is unknown (Terraform's ``<known after apply>``: a
    #: data source, a variable with no value, an expression not evaluated), the evaluators report the rule as not
    #: judged on that resource (`dbx_ai_infra.policies.evaluate.unknown_fields`): never a finding from an unknown, never
    #: a pass. ``field(argument)`` reads an argument of the data source that selects the field (``spark_version(gpu)``).
    reads: tuple[str, ...] = ()
    #: Whether the rule is about a view at all (the role rules: GPU compute; auto-termination: an all-purpose
    #: cluster): one it is not about is not reported as not judged. None: every view of its resource types.
    concerns: Callable[[View], bool] | None = None
    #: For a rule whose typed ``settings`` live in another process (a team rule, `dbx_ai_infra.policies.team_process`):
    #: checks a policy config's values for it there, returning the first problem's message or None.
    settings_check: Callable[[Mapping[str, Any]], str | None] | None = field(default=None, repr=False,
                                                                             compare=False)

    def __post_init__(self) -> None:
        if self.enforcement not in ("mandatory", "advisory"):
            raise ValueError(f"rule {self.name}: enforcement must be mandatory or advisory, got {self.enforcement!r}")
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
