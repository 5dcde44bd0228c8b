"""Findings of ``advise`` from the analysis' rows, each with its evidence and, where a change helps, a proposed edit of
the stack priced by the existing cost model on the edited stack (`price_edit`)."""

from __future__ import annotations

import copy
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbx_ai_infra.advise.analysis import Analysis, plain
from dbx_ai_infra.advise.findings import FINDING_IDS, FINDINGS
from dbx_ai_infra.advise.record import SEVERITY_ORDER, Context, Proposal, edit_fragment, rounded
from dbx_ai_infra.advise.targets import EndpointTarget, Target
from dbx_ai_infra.dbxtypes.documents import read_text
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Plan
from dbx_ai_infra.dbxtypes.vocabulary import PROJECT
from dbx_ai_infra.engine.interrupts import scratch_dir
from dbx_ai_infra.engine.pipeline import build_plan

__all__ = ["Context", "Finding", "Proposal", "edit_fragment", "edited_config", "edited_stack_text", "findings_of",
           "price_edit"]


@dataclass
class Finding:
    id: str
    severity: str
    workload: str
    role: str
    cluster_id: str | None
    evidence: str
    figures: dict[str, Any]
    proposal: Proposal | None = None
    note: str | None = None

    @property
    def monthly_cost_delta(self) -> float | None:
        p = self.proposal
        if p is None or p.monthly_before is None or p.monthly_after is None:
            return None
        return p.monthly_after - p.monthly_before

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "severity": self.severity, "workload": self.workload, "role": self.role,
                "cluster_id": self.cluster_id, "evidence": self.evidence,
                "proposal": self.proposal.to_json() if self.proposal else None,
                "monthly_cost_delta": rounded(self.monthly_cost_delta), "note": self.note,
                "figures": {k: plain(v) for k, v in self.figures.items()}}


def findings_of(analysis: Analysis, targets: list[Target], ctx: Context,
                endpoints: Sequence[EndpointTarget] = ()) -> list[Finding]:
    """Every finding of the analysis, ordered by severity then workload (an endpoint's findings by its name)."""
    by_name: dict[str, dict[str, Any]] = {"workload": {t.workload: t for t in targets},
                                          "endpoint": {e.workload: e for e in endpoints}}
    out = []
    for spec in FINDINGS:
        for row in analysis.rows.get(spec.id, []):
            target = by_name[spec.subject].get(str(row["workload"]))
            if target is None:
                continue
            outcome = spec.build(row, target, ctx)
            figures = {k: v for k, v in row.items() if k not in ("workload", "cluster_id")}
            out.append(Finding(spec.id, outcome.severity or spec.severity, target.workload, target.role,
                               row.get("cluster_id"), outcome.evidence, figures, outcome.proposal, outcome.note))
    return sorted(out, key=lambda f: (SEVERITY_ORDER.index(f.severity), f.workload, FINDING_IDS.index(f.id)))


# --------------------------------------------------------------------------------------------------------------------
# Pricing a proposal: the cost model on the edited stack
# --------------------------------------------------------------------------------------------------------------------

def edited_config(config: Mapping[str, Any], edit: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a stack file's ``config`` map with dotted keys (``inference.min_workers``) set (None: removed)."""
    out = copy.deepcopy(dict(config))
    _apply(out, edit)
    return out


def _apply(config: Any, edit: Mapping[str, Any]) -> None:
    """Set the dotted keys of ``edit`` in a ``config`` mapping, in place (a bare section key stays bare)."""
    for dotted, value in edit.items():
        section, *path = dotted.split(".")
        key = f"{PROJECT}:{section}" if f"{PROJECT}:{section}" in config or section not in config else section
        node = config.setdefault(key, {})
        for part in path[:-1]:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value


def edited_stack_text(stack_file: Path, edit: Mapping[str, Any]) -> str:
    """The stack file with the edit applied, as YAML: its comments, order and quoting kept (ruamel's round trip),
    so the file can be committed as it is."""
    from ruamel.yaml import YAML  # the round-trip reader: only --write-stack needs it

    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    doc = yaml.load(read_text(stack_file, "stack file"))
    _apply(doc["config"], edit)
    buffer = io.StringIO()
    yaml.dump(doc, buffer)
    return buffer.getvalue()


def price_edit(plan: Plan, proposal: Proposal, *, policy_config: Any, prices: str | None) -> None:
    """Price the stack with the proposal's edit (the cost model on the edited stack, its policies too): fills
    ``monthly_before``/``monthly_after`` and ``blocked_by`` (mandatory policies the edit breaks: those the edited
    stack breaks and ``plan``, the stack as it is, does not)."""
    assert plan.cost is not None and plan.stack_file
    with scratch_dir("advise-") as tmp:
        edited = tmp / f"Pulumi.{plan.stack}.yaml"
        edited.write_text(edited_stack_text(Path(plan.stack_file), proposal.edit), encoding="utf-8")
        try:
            after = build_plan(str(edited), policy_config=policy_config, prices=prices, with_cost=True)
        except InputError as exc:  # the edit breaks a limit of the spec: say so, price nothing
            proposal.blocked_by = [f"invalid stack: {exc.problems[0].field} {exc.problems[0].message}"
                                   if exc.problems else f"invalid stack: {exc}"]
            return
    assert after.cost is not None
    proposal.monthly_before = float(plan.cost.total.monthly.expected or 0)
    proposal.monthly_after = float(after.cost.total.monthly.expected or 0)
    proposal.monthly_max_before = float(plan.cost.total.monthly.max or 0)
    proposal.monthly_max_after = float(after.cost.total.monthly.max or 0)
    already = {(v.policy, v.resource_name) for v in plan.violations or [] if v.mandatory}
    proposal.blocked_by = sorted({v.policy for v in after.violations or []
                                  if v.mandatory and (v.policy, v.resource_name) not in already})
