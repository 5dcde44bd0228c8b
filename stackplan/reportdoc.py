"""The typed report documents: what each command hands the format registry (`stackplan.formats`).

A command builds one document; a format renders the kinds of document it accepts. The kind names are the
registry's vocabulary: ``preview``, ``check`` and ``cost`` (stacks), ``audit`` (a workspace export or a live read),
``drift`` (a stack against a workspace) and ``advise``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from dbxtypes.plan import Plan, Violation

from .audit import ExportAudit
from .multi import StackRun

#: Which drift finding counts how what: the drift report's counts, in this order.
DRIFT_KINDS = ("drift-changed", "drift-missing", "drift-unowned-gpu")


@dataclass
class StacksReport:
    """``preview``, ``check`` or ``cost`` of one or more stacks."""

    kind: Literal["preview", "check", "cost"]
    runs: list[StackRun]
    #: More than one stack was asked for (``--stack`` repeated, ``--all``): the documents hold a list.
    several: bool
    policy_config: Any = None
    #: ``cost --against``: the base (a stack, a plan file, or a directory of base plans).
    against: str | None = None


@dataclass
class AuditReport:
    """``check --cluster-json`` or ``check --workspace``: the rules over what runs in a workspace."""

    kind: ClassVar[str] = "audit"
    source: str
    audit: ExportAudit
    policy_config: Any = None
    #: ``--cluster-policy``: each cluster of the export against the policy definition.
    cluster_policy: list[dict[str, Any]] | None = None


@dataclass
class DriftReport:
    """``check --stack S --cluster-json|--workspace``: where the workspace differs from the stack."""

    kind: ClassVar[str] = "drift"
    plan: Plan
    against: str
    found: list[Violation]
    #: The export file each workspace object was read from (by URN).
    files: dict[str, str] = field(default_factory=dict)
    policy_config: Any = None

    @property
    def counts(self) -> dict[str, int]:
        return {k: sum(1 for v in self.found if v.policy == k) for k in DRIFT_KINDS}


@dataclass
class AdviceReport:
    """``advise``: findings from how the stack's compute ran, with priced proposals (``doc``: its JSON)."""

    kind: ClassVar[str] = "advise"
    doc: dict[str, Any]


Report = StacksReport | AuditReport | DriftReport | AdviceReport
