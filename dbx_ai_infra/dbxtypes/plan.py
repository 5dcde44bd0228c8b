"""The typed plan: `Plan`, `Resource`, `Violation` and `Cost`, with ``to_json`` / ``from_json``.

The JSON is the one `python -m stackplan preview --json` has always written (docs/ARCHITECTURE.md); its JSON Schema,
generated from these models by `plan_json_schema`, ships as ``docs/plan.schema.json``. Models are built by the
offline engine (resources), the policies (violations) and pricing (cost); renderers read attributes, never
``.get(...) or {}``. ``to_json`` leaves out what was never set, so an entry keeps exactly the keys it always had.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .errors import InputError, problems_from_pydantic
from .vocabulary import Cloud

#: A finding's level; ``not-judged``: the rule could not judge the resource, a field it reads being unknown here
#: (Terraform's ``<known after apply>``): reported, never a finding, never a pass; fails only with
#: ``--fail-on-unknown``.
Enforcement = Literal["mandatory", "advisory", "not-judged"]
NOT_JUDGED: Literal["not-judged"] = "not-judged"
#: The largest magnitude of any number in a plan: no money, count or hour of a real plan comes near it, and a value
#: past it (``-1e308`` in a plan given to ``--against``) broke the decimal arithmetic of costs.
MAX_PLAN_NUMBER = 1e15
#: A JSON number as it was written: an int stays an int (so a plan's JSON round-trips to the same text).
Number = Annotated[int | float, Field(ge=-MAX_PLAN_NUMBER, le=MAX_PLAN_NUMBER)]


class _Model(BaseModel):
    #: ``defer_build``: a model's validator and serializer are built when it is first used, not when this module is
    #: imported (an audit of an export makes violations only: it never builds a plan's cost models).
    model_config = ConfigDict(extra="forbid", defer_build=True)

    def to_json(self) -> dict[str, Any]:
        """The JSON document (plain dicts and lists); fields never set are left out."""
        return self.model_dump(mode="json", exclude_unset=True)


class Resource(_Model):
    """One registered resource, as the Pulumi engine hands it to policies: camelCase ``inputs``, whole numbers as
    ints."""

    urn: str
    id: str | None = None
    type: str
    name: str
    parent: str | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    #: The URNs Pulumi waits for before creating it: its explicit ``depends_on`` (a component's expanded to the
    #: component's resources) and the resources whose outputs its inputs use; sorted.
    dependencies: list[str] = Field(default_factory=list)
    #: The resource's custom timeouts as the program set them (Pulumi ``CustomTimeouts``: ``create``, ``update``,
    #: ``delete``, e.g. ``"90m"``); absent where it sets none (the provider's own apply).
    custom_timeouts: dict[str, str] | None = None


class AcceptedException(_Model):
    """A stack's accepted exception (``dbx-ai-infra:exceptions``) that matched a finding. An expired one no longer
    hides the finding: it fails like the violation it hid."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str
    expires: str | None = None  # ISO date, the last day the exception holds
    expired: bool = False


class Violation(_Model):
    """One policy finding on one resource. ``message`` ends with a ``Fix: ...`` hint."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    policy: str
    enforcement: Enforcement
    urn: str
    resource_name: str
    message: str
    exception: AcceptedException | None = None
    #: With ``check --baseline``: ``unchanged`` (the baseline holds it: reported, fails nothing) or ``new``.
    baseline: Literal["new", "unchanged"] | None = None

    @property
    def excepted(self) -> bool:
        """Accepted by a stack exception that has not expired: reported, but it fails nothing."""
        return self.exception is not None and not self.exception.expired

    @property
    def mandatory(self) -> bool:
        """A mandatory finding that fails the run (one under a live exception, or in the baseline, does not)."""
        return self.enforcement == "mandatory" and not self.excepted and self.baseline != "unchanged"

    @property
    def level(self) -> str:
        """The word reports show: mandatory, advisory, excepted, baselined, or mandatory (exception expired)."""
        if self.baseline == "unchanged" and self.exception is None:
            return "baselined"
        if self.exception is None:
            return self.enforcement
        if self.exception.expired:
            return f"{self.enforcement} (exception expired)"
        return "excepted"

    @property
    def shown_message(self) -> str:
        """The message, with the exception's reason when one matched."""
        if self.exception is None:
            return self.message
        if self.exception.expired:
            state = f"exception expired after {self.exception.expires}"
        else:
            state = "excepted" + (f" until {self.exception.expires}" if self.exception.expires else "")
        return f"{self.message} [{state}: {self.exception.reason}]"


class Monthly(_Model):
    min: Number | None
    expected: Number | None
    max: Number | None


class NodeCount(_Model):
    min: Number
    max: Number


class CostEntry(_Model):
    """The cost of one resource (a cluster, a job, a pool) or of one job cluster (``cluster`` is its label).

    Money is ``None`` on an unpriced entry, whose ``unpriced`` says why."""

    name: str | None = None
    type: str | None = None
    cluster: str | None = None
    workload_type: str | None = None
    node_type_id: str | None = None
    driver_node_type_id: str | None = None
    instance_pool: str | None = None
    compute_kind: str | None = None
    availability: str | None = None
    first_on_demand: Number | None = None
    nodes: NodeCount | None = None
    spot_nodes: NodeCount | None = None
    max_capacity: Number | None = None
    #: Serverless GPU: the GPUs priced (all the job's serverless GPU tasks).
    gpus: Number | None = None
    #: Provisioned throughput: the model units priced.
    model_units: Number | None = None
    hours_per_month: Number | None = None
    #: Why those hours: a usage assumption by name, or "always on" for an inference cluster that never terminates.
    hours_basis: str | None = None
    burst_hours_per_month: Number | None = None
    extra_workers_expected: Number | None = None
    hourly: Number | None = None
    hourly_max: Number | None = None
    monthly: Monthly = Field(default_factory=lambda: Monthly(min=None, expected=None, max=None))
    all_on_demand_monthly_expected: Number | None = None
    saving_monthly_expected: Number | None = None
    #: The DBU part of ``hourly`` (at the minimum size) and of ``monthly.expected``: what the Databricks bill holds
    #: (the cloud bills the VMs). Clusters and jobs only.
    dbu_hourly: Number | None = None
    dbu_monthly_expected: Number | None = None
    #: The spot factor of the spot workers (spot $/h over on-demand $/h of their node type), and which factor priced
    #: the spot nodes: a node type's own row (its region, what the price is, its date) or the cloud's estimate.
    spot_factor: Number | None = None
    spot_basis: str | None = None
    unpriced: str | None = None
    clusters: list[CostEntry] | None = None

    @property
    def priced(self) -> bool:
        return self.unpriced is None

    @property
    def hourly_only(self) -> bool:
        """Priced by the hour, its month unknown (its role, hence its usage hours, is unknown): ``hourly`` is known,
        the monthly figures are None and ``unpriced`` says why. The hourly totals count it; the monthly ones leave it
        out and name it."""
        return self.unpriced is not None and self.hourly is not None

    @property
    def parts(self) -> list[CostEntry]:
        """A job's job clusters, or the entry itself."""
        return self.clusters or [self]


class CostTotal(_Model):
    """The sums over the priced resources. ``complete`` is false when a resource's month is not priced: it is left
    out of the monthly figures here, and ``unpriced`` names it, so a total is never read as the whole stack's when it
    is not. ``hourly`` and ``hourly_max`` also count the resources priced by the hour only (`CostEntry.hourly_only`);
    ``hourly_complete`` is false when they leave a resource out, and ``hourly_unpriced`` names those (a subset of
    ``unpriced``)."""

    hourly: Number
    hourly_max: Number
    monthly: Monthly
    all_on_demand_monthly_expected: Number
    saving_monthly_expected: Number
    complete: bool = True
    unpriced: list[str] = Field(default_factory=list)
    hourly_complete: bool = True
    hourly_unpriced: list[str] = Field(default_factory=list)

    @property
    def hourly_only(self) -> list[str]:
        """The resources the hourly figures count but the monthly ones leave out (their month unknown)."""
        gone = set(self.hourly_unpriced)
        return [name for name in self.unpriced if name not in gone]

    def leave_out(self, name: str) -> None:
        """Leave a resource out of every figure (unpriced, or not evaluated), naming it."""
        self.unpriced.append(name)
        self.hourly_unpriced.append(name)
        self.complete = self.hourly_complete = False


class UnpricedItem(_Model):
    urn: str
    name: str | None
    reason: str
    #: The resource's $/hour at its base size when it is priced by the hour only (its month unknown), else None.
    hourly: Number | None = None


class PriceSource(_Model):
    """Where a figure the cost used comes from."""

    figure: str
    value: Any
    source: str
    date: str | None = None
    estimate: bool = False


class Cost(_Model):
    """The cost object of a plan (see ``dbx_ai_infra.pricing.model`` for the model and worked examples)."""

    currency: str
    tier: str
    cloud: Cloud
    #: The cloud's spot factor (`CostEntry.spot_factor` says what priced each spot row).
    spot_factor: Number
    #: The region whose list prices the cost uses (VM prices and Model Serving $/DBU where the data has that region's;
    #: the notes name what was priced at the reference region instead).
    region: str | None = None
    resources: dict[str, CostEntry]
    total: CostTotal
    unpriced: list[UnpricedItem]
    by_workload: dict[str, Number]
    sources: list[PriceSource]
    assumptions: dict[str, Number | None]
    notes: list[str]


class SmallerNode(_Model):
    node_type_id: str
    gpu_memory_gb: Number
    #: Why it was not chosen: None, it does not hold the need; else the reason it was passed over although it does
    #: (a serving workload type databricks-sdk's enum does not list).
    passed_over: str | None = None


class SizingLine(_Model):
    """Why a workload got its node: the sizing rule and formula with its numbers, the node picked with its GPU
    memory, the next smaller node of the family that did not fit, and how the model is spread across GPUs."""

    workload: str
    rule: str
    formula: str | None
    need_gb: Number | None
    node_type_id: str
    gpu: str
    gpu_count: int
    gpu_memory_gb: Number
    sharded: str | None
    pinned: bool
    next_smaller: SmallerNode | None
    #: The CPU driver node type, when the workload's driver is a CPU node.
    driver_node_type_id: str | None = None
    #: The workload's role section (training | inference | dev); None for a serving endpoint.
    section: str | None = None

    @property
    def label(self) -> str:
        """The workload as a reviewer reads it: its name, with its role when the name is not the role
        (``chat (inference)``)."""
        return self.workload if self.section in (None, self.workload) else f"{self.workload} ({self.section})"

    @property
    def text(self) -> str:
        """One line for a reviewer: ``training: 7B x 2 B x 4 / 3 = 18.67 GB -> g5.xlarge (1 x NVIDIA A10G, 24 GB);
        next smaller: none``."""
        how = self.formula or self.rule
        node = f"{self.node_type_id} ({self.gpu_count} x {self.gpu}, {self.gpu_memory_gb:g} GB)"
        smaller = ("none in the family" if self.next_smaller is None else
                   f"{self.next_smaller.node_type_id} ({self.next_smaller.gpu_memory_gb:g} GB) "
                   + (f"fits, but {self.next_smaller.passed_over}" if self.next_smaller.passed_over else
                      "did not fit"))
        extra = f"; {self.sharded}" if self.sharded else ""
        pin = " (pinned)" if self.pinned else ""
        driver = f"; driver {self.driver_node_type_id} (CPU)" if self.driver_node_type_id else ""
        return f"{self.label}: {how} -> {node}{pin}{extra}{driver}; next smaller: {smaller}"


class Advice(_Model):
    """An advisory finding about a resource, with its priced monthly effect (negative saves money). ``id`` is a
    stable word users can filter on (``cheaper-single-gpu``)."""

    id: str
    severity: Literal["advisory"] = "advisory"
    urn: str
    resource_name: str
    message: str
    monthly_cost_delta: Number | None = None


class Plan(_Model):
    """What a stack registers, and what the policies and prices say of it."""

    stack: str
    project: str
    stack_file: str | None = None
    cloud: Cloud
    #: The workspace's region the plan is priced at (the stack's ``dbx-ai-infra:region``, a Terraform plan's or an
    #: audit's ``--region``); None: the cloud's reference region.
    region: str | None = None
    resources: list[Resource]
    outputs: dict[str, Any] = Field(default_factory=dict)
    #: The stack's usage assumptions (USAGE_DEFAULTS keys) for monthly costs.
    assumptions: dict[str, Number | None] | None = None
    violations: list[Violation] | None = None
    cost: Cost | None = None
    #: Per sized workload, the arithmetic behind its node (`SizingLine`).
    sizing: list[SizingLine] | None = None
    #: Advisory findings with a priced effect (`Advice`), such as a cheaper single-GPU node.
    advice: list[Advice] | None = None
    #: The stack's cost limits (``dbx-ai-infra:budget``), as the policy ``databricks-stack-budget`` reads them.
    budget: dict[str, Number | None] | None = None

    @classmethod
    def from_json(cls, doc: Any, source: str = "plan") -> Plan:
        """A plan from its JSON document (a dict, or JSON text); raises `InputError` naming the field and the fix."""
        if isinstance(doc, (str, bytes)):
            try:
                doc = json.loads(doc)
            except json.JSONDecodeError as exc:
                raise InputError.single(source, "", f"not valid JSON ({exc.msg} at line {exc.lineno})",
                                        "pass a file written by `preview --json`.") from None
        if not isinstance(doc, Mapping):
            raise InputError.single(source, "", f"holds a {type(doc).__name__}, not a plan object",
                                    "pass a file written by `preview --json`.")
        try:
            return cls.model_validate(doc)
        except ValidationError as exc:
            raise InputError(source, problems_from_pydantic(exc, fix="pass a file written by `preview --json`."),
                             ) from None

    def resource(self, urn: str) -> Resource | None:
        return next((r for r in self.resources if r.urn == urn), None)

    @property
    def has_mandatory(self) -> bool:
        return any(v.mandatory for v in self.violations or ())

    @property
    def stack_urn(self) -> str:
        """The URN of the stack itself (Pulumi's root resource): what a stack-level finding is about."""
        return f"urn:pulumi:{self.stack}::{self.project}::pulumi:pulumi:Stack::{self.project}-{self.stack}"


@cache
def _resources() -> TypeAdapter[list[Resource]]:
    """The validator of a plan's resources, built at its first use."""
    return TypeAdapter(list[Resource])


def resources_of(doc: Any, source: str = "plan") -> list[Resource]:
    """The ``resources`` of a plan's JSON (or of any object with such a list), validated; raises `InputError`."""
    if not isinstance(doc, Mapping) or "resources" not in doc:
        raise InputError.single(source, "resources", "is missing.", "pass a plan with a 'resources' list.")
    try:
        return _resources().validate_python(doc["resources"])
    except ValidationError as exc:
        raise InputError(source, problems_from_pydantic(exc, prefix="resources")) from None


def coerce_plan(plan: Plan | Mapping[str, Any], source: str = "plan") -> Plan:
    """A `Plan` from a plan or its JSON (hand-written plans may leave out ``project``)."""
    if isinstance(plan, Plan):
        return plan
    if isinstance(plan, Mapping):
        plan = {"stack": "", "project": "", **plan}
    return Plan.from_json(plan, source)


def plan_json_schema() -> dict[str, Any]:
    """The JSON Schema of a plan document (``docs/plan.schema.json``)."""
    schema = Plan.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "dbx-ai-infra plan (python -m stackplan preview --json)"
    return schema


if __name__ == "__main__":  # `make schema` writes docs/plan.schema.json
    print(json.dumps(plan_json_schema(), indent=2, sort_keys=True))
