"""The record of an advise finding, and what its builder works with.

A finding is one module under `dbx_ai_infra.advise.findings` holding one `FindingSpec`: its id (written nowhere else in
Python), its severity, its SQL block (a Jinja2 template over ``workload_summary``, rendered for DuckDB or Databricks
SQL), the thresholds it reads, its builder (a candidate row -> evidence, a proposed stack edit, a note) and how the
telemetry generator plants it. `dbx_ai_infra.advise.findings.FINDINGS` registers them, in report order. The edits a
builder proposes are made by `dbx_ai_infra.advise.edits`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dbx_ai_infra.advise.targets import Target
from dbx_ai_infra.dbxtypes.advise_thresholds import AdviseSettings
from dbx_ai_infra.dbxtypes.plan import Plan
from dbx_ai_infra.dbxtypes.vocabulary import PROJECT

#: A run of the telemetry generator (`dbx_ai_infra.advise.telemetry.Run`; a frozen dataclass the plant replaces fields
#: of). Named loosely here: the generator imports the findings, not the other way round.
Run = Any

#: Severities, most urgent first (the report's order).
SEVERITY_ORDER = ("critical", "warning", "info")


@dataclass
class Proposal:
    """An edit of the stack: dotted stack keys (``inference.min_workers``) -> new value (None: remove the key)."""

    summary: str
    edit: dict[str, Any]
    current: dict[str, Any] = field(default_factory=dict)
    monthly_before: float | None = None
    monthly_after: float | None = None
    #: The stack's month at full size (every autoscaled cluster and endpoint at its maximum), before and after.
    monthly_max_before: float | None = None
    monthly_max_after: float | None = None
    blocked_by: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary, "edit": {f"{PROJECT}:{k}": v for k, v in self.edit.items()},
                "current": {f"{PROJECT}:{k}": v for k, v in self.current.items()},
                "yaml": edit_fragment(self.edit, self.current),
                "monthly_before": rounded(self.monthly_before), "monthly_after": rounded(self.monthly_after),
                "monthly_max_before": rounded(self.monthly_max_before),
                "monthly_max_after": rounded(self.monthly_max_after),
                "blocked_by": self.blocked_by}


@dataclass
class Context:
    """What every builder may read besides its row and target."""

    plan: Plan
    #: The run's thresholds, typed (`advise_settings`: the policy config's ``advise`` section, ``--sla-p99-ms`` over
    #: it); ``settings.sla_p99_ms`` None: no SLA, latency is not judged.
    settings: AdviseSettings
    spec: Any  #: the stack's StackSpec


@dataclass(frozen=True)
class Outcome:
    """What a builder makes of a row: the evidence, a proposed edit (or None), and a note for the reader."""

    evidence: str
    proposal: Proposal | None = None
    note: str | None = None
    #: Set when the row calls for another severity than the finding's own (e.g. training that resumed: info).
    severity: str | None = None


@dataclass(frozen=True)
class Plant:
    """How the telemetry generator (`dbx_ai_infra.advise.telemetry`) plants the finding on the first target of a
    role (of the role ``serving``: on the first endpoint it ``applies`` to): a change of the run's figures, idle
    minutes before it stops, a factor on its bill, and events; for an endpoint, a change of its traffic."""

    role: str
    #: For an endpoint: (its traffic, the endpoint) -> the traffic that shows the problem
    #: (`dbx_ai_infra.advise.telemetry.Traffic`).
    traffic: Callable[[Any, Any], Any] | None = None
    #: For an endpoint: which endpoints the problem can be planted on (default: any).
    applies: Callable[[Any], bool] | None = None
    run: Callable[[Run, Target], Run] | None = None
    idle_minutes: int | None = None
    dbu_factor: float = 1.0
    #: (run, target, minute -> epoch ms) -> the cluster events that show the problem.
    events: Callable[[Run, Target, Callable[[int], int]], list[dict[str, Any]]] | None = None


Row = Mapping[str, Any]


@dataclass(frozen=True)
class FindingSpec:
    id: str
    severity: str
    #: What the finding means, for the README and ``--help`` readers.
    summary: str
    #: The SELECT over ``workload_summary`` or ``endpoint_summary`` (Jinja2: ``t`` the `AdviseSettings`, ``sla``,
    #: ``busy``, ``net_bound``).
    sql: str
    #: Row, target (a `Target`; an `EndpointTarget` for an endpoint finding), context -> outcome.
    build: Callable[[Row, Any, Context], Outcome]
    #: The names of the `AdviseSettings` fields its SQL or builder reads (for the findings index).
    thresholds: tuple[str, ...] = ()
    #: None: the generator does not plant it (a healthy state, not a problem).
    plant: Plant | None = None
    #: What its rows are about: ``workload`` (a cluster workload, a row of ``workload_summary``) or ``endpoint`` (a
    #: serving endpoint, a row of ``endpoint_summary``, its name in the ``workload`` column).
    subject: str = "workload"

    def __post_init__(self) -> None:
        unknown = sorted(set(self.thresholds) - set(AdviseSettings.model_fields))
        if unknown:  # a misspelt name fails at import, as a misspelt attribute of Context.settings fails mypy
            raise ValueError(f"finding {self.id}: {', '.join(unknown)} is not a field of AdviseSettings")


# ---- the figures of a builder's sentences, and the edit as YAML ------------------------------------------------------

def rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), 2)


def figure(value: Any, digits: int = 0) -> str:
    """A figure for a sentence (``1,234``), or ``n/a``."""
    return f"{float(value):,.{digits}f}" if value is not None else "n/a"


def num(row: Row, key: str) -> float:
    """A number of a row (0 when the analysis left it empty)."""
    value = row.get(key)
    return float(value) if value is not None else 0.0


def edit_fragment(edit: Mapping[str, Any], current: Mapping[str, Any] | None = None) -> str:
    """The edit as the stack file's YAML, to paste under ``config:`` (each section as the file writes it, the old
    value in a comment; a removal is a comment, since YAML cannot say "remove")."""
    nested: dict[str, Any] = {}
    for dotted, value in edit.items():
        if value is not None:
            section, *path = dotted.split(".")
            node = nested.setdefault(f"{PROJECT}:{section}", {})
            for part in path[:-1]:
                node = node.setdefault(part, {})
            node[path[-1]] = (value, (current or {}).get(dotted))

    def scalar(value: Any) -> str:  # JSON's scalars and lists are YAML too; a plain word stays plain
        if isinstance(value, str) and value and value.replace("_", "").replace("-", "").isalnum() and \
                value.lower() not in ("true", "false", "null", "yes", "no", "on", "off"):
            return value
        return json.dumps(value)

    lines: list[str] = []

    def emit(node: Mapping[str, Any], depth: int) -> None:
        for key, item in node.items():
            if isinstance(item, dict):
                lines.append(f"{'  ' * depth}{key}:")
                emit(item, depth + 1)
            else:
                value, was = item
                lines.append(f"{'  ' * depth}{key}: {scalar(value)}  # was {'unset' if was is None else scalar(was)}")

    emit(nested, 0)
    lines += [f"# remove {PROJECT}:{dotted}" for dotted, value in edit.items() if value is None]
    return "\n".join(lines) + "\n"
