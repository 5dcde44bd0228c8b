"""The typed report documents: what each command hands the format registry (`dbx_ai_infra.reports.formats`).

A command builds one document; a format renders the kinds of document it accepts. The kind names are the
registry's vocabulary: ``preview``, ``check`` and ``cost`` (stacks), ``audit`` (a workspace export or a live read),
``drift`` (a stack against a workspace) and ``advise``. Each document carries its own JSON (`to_json`, what
``--format json`` writes) and, where it has any, its violations located at the file and line behind each
(`located`, what SARIF, JUnit and GitHub annotations write), so a format asks the document, never its class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from dbx_ai_infra.dbxtypes.plan import Plan, Violation
from dbx_ai_infra.engine.multi import StackRun
from dbx_ai_infra.reports.located import Located, LocatedViolations, violation_lines
from dbx_ai_infra.sources.audit import ExportAudit

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
    #: Whether ``--format json`` ends the document with a newline (advise's does).
    json_newline: ClassVar[bool] = False

    def _run_json(self, run: StackRun) -> dict[str, Any]:
        if run.plan is None:
            return {"stack": run.stack, "stack_file": run.source, "error": run.error}
        as_json = run.plan.to_json()
        if self.kind != "cost":
            return as_json
        return {"stack": run.plan.stack, "cost": as_json.get("cost"), "violations": as_json.get("violations"),
                "diff": run.diff}

    def to_json(self) -> Any:
        docs = [self._run_json(r) for r in self.runs]
        return {"stacks": docs} if self.several else docs[0]

    def located(self) -> LocatedViolations:
        located = []
        for run in self.runs:
            if run.plan is None:
                continue
            violations = run.plan.violations or []
            lines = violation_lines(run.plan, violations)
            located += [Located(v, run.source, lines.get((v.policy, v.urn))) for v in violations]
        errors = [(r.source, r.error or "") for r in self.runs if r.error is not None]
        return LocatedViolations(located, errors, f"stackplan {self.kind} {', '.join(r.stack for r in self.runs)}",
                        [r.source for r in self.runs])


@dataclass
class AuditReport:
    """``check --cluster-json`` or ``check --workspace``: the rules over what runs in a workspace."""

    kind: ClassVar[str] = "audit"
    source: str
    audit: ExportAudit
    policy_config: Any = None
    #: ``--cluster-policy``: each cluster of the export against the policy definition.
    cluster_policy: list[dict[str, Any]] | None = None
    json_newline: ClassVar[bool] = False

    def to_json(self) -> Any:
        doc: dict[str, Any] = {"source": self.source, "checked": self.audit.counts,
                               "violations": [v.to_json() for v in self.audit.violations]}
        if self.cluster_policy is not None:
            doc["cluster_policy"] = self.cluster_policy
        return doc

    def located(self) -> LocatedViolations:
        audit = self.audit
        return LocatedViolations([Located(v, audit.files.get(v.urn, self.source), audit.lines.get(v.urn),
                                 element=audit.labels.get(v.urn))
                         for v in audit.violations], [], f"stackplan check {self.source}", [self.source])


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

    json_newline: ClassVar[bool] = False

    @property
    def counts(self) -> dict[str, int]:
        return {k: sum(1 for v in self.found if v.policy == k) for k in DRIFT_KINDS}

    def to_json(self) -> Any:
        return {"stack": self.plan.stack, "stack_file": self.plan.stack_file, "against": self.against,
                "counts": self.counts, "drift": [v.to_json() for v in self.found]}

    def located(self) -> LocatedViolations:
        """A finding about a stack resource at the stack field behind it; one about a workspace object (missing
        from the stack, owned by none) at the export file it was read from."""
        plan = self.plan
        stack_urns = {r.urn for r in plan.resources}
        lines = violation_lines(plan, [v for v in self.found if v.urn in stack_urns])
        source = plan.stack_file or plan.stack
        return LocatedViolations([Located(v, source, lines.get((v.policy, v.urn))) if v.urn in stack_urns
                         else Located(v, self.files.get(v.urn, self.against)) for v in self.found],
                        [], f"stackplan drift {plan.stack} {source}", [source])


@dataclass
class AdviceReport:
    """``advise``: findings from how the stack's compute ran, with priced proposals (``doc``: its JSON)."""

    kind: ClassVar[str] = "advise"
    doc: dict[str, Any]
    json_newline: ClassVar[bool] = True

    def to_json(self) -> Any:
        return self.doc


#: The reports whose violations are located at a file and line (what SARIF, JUnit and GitHub annotations write);
#: an advise report has proposals, not violations, and the format registry gives those formats none.
LocatedReport = StacksReport | AuditReport | DriftReport
Report = LocatedReport | AdviceReport
