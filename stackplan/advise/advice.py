"""Findings of ``advise`` from the analysis' rows, each with its evidence and, where a change helps, a proposed edit of
the stack priced by the existing cost model on the edited stack (`price_edit`)."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbxtypes.errors import InputError
from dbxtypes.plan import Plan
from dbxtypes.vocabulary import HOURS_PER_MONTH, PROJECT

from .analysis import FINDING_IDS, Analysis, plain
from .targets import Target

SEVERITY = {"gpu-underutilized": "warning", "gpu-balanced": "info", "latency-over-sla-scale-out": "critical",
            "latency-over-sla-not-gpu-bound": "critical", "spot-reclaim-hits-base": "critical",
            "training-resized": "warning", "autoscaling-churn": "warning", "idle-cluster": "warning",
            "cost-drift": "warning", "poor-scaling-interconnect": "warning"}
SEVERITY_ORDER = ("critical", "warning", "info")


@dataclass
class Proposal:
    """An edit of the stack: dotted stack keys (``inference.min_workers``) -> new value (None: remove the key)."""

    summary: str
    edit: dict[str, Any]
    current: dict[str, Any] = field(default_factory=dict)
    monthly_before: float | None = None
    monthly_after: float | None = None
    blocked_by: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"summary": self.summary, "edit": {f"{PROJECT}:{k}": v for k, v in self.edit.items()},
                "current": {f"{PROJECT}:{k}": v for k, v in self.current.items()},
                "monthly_before": _round(self.monthly_before), "monthly_after": _round(self.monthly_after),
                "blocked_by": self.blocked_by}


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
                "monthly_cost_delta": _round(self.monthly_cost_delta), "note": self.note,
                "figures": {k: plain(v) for k, v in self.figures.items()}}


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 2)


def _f(value: Any, digits: int = 0) -> str:
    return f"{float(value):,.{digits}f}" if value is not None else "n/a"


def _num(row: Mapping[str, Any], key: str) -> float:
    value = row.get(key)
    return float(value) if value is not None else 0.0


# --------------------------------------------------------------------------------------------------------------------
# One builder per finding id: (row, target, context) -> Finding
# --------------------------------------------------------------------------------------------------------------------

@dataclass
class Context:
    plan: Plan
    thresholds: Mapping[str, Any]
    sla: float | None
    spec: Any  #: the stack's StackSpec


def _resize(t: Target, c: Context, *, lo: int | None = None, hi: int | None = None) -> tuple[dict[str, Any],
                                                                                     dict[str, Any]]:
    """The edit (and the current values) that sizes a workload: ``lo``/``hi`` for inference (``hi`` kept above
    ``lo``: the autoscale API needs max > min), ``lo`` as ``num_workers`` otherwise; and the section's instance pool
    raised when it could not hold the largest size (the spec refuses a pool smaller than the driver and its
    workers)."""
    edit: dict[str, Any] = {}
    current: dict[str, Any] = {}
    if t.section == "inference":
        new_lo = t.min_workers if lo is None else lo
        new_hi = max(t.max_workers if hi is None else hi, new_lo + 1)
        if new_lo != t.min_workers:
            edit["inference.min_workers"], current["inference.min_workers"] = new_lo, t.min_workers
        if new_hi != t.max_workers:
            edit["inference.max_workers"], current["inference.max_workers"] = new_hi, t.max_workers
        largest = new_hi
    else:
        largest = t.min_workers if lo is None else lo
        if largest != t.min_workers:
            edit[f"{t.section}.num_workers"], current[f"{t.section}.num_workers"] = largest, t.min_workers
    pool = getattr(c.spec.instance_pools, t.section, None) if c.spec is not None else None
    if pool is not None and pool.max_capacity is not None and pool.max_capacity < 1 + largest:
        key = f"instance_pools.{t.section}.max_capacity"
        edit[key], current[key] = 1 + largest, pool.max_capacity
    return edit, current


def _underutilized(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    util, high = _num(row, "median_busy_util"), float(c.thresholds["gpu_high_percent"])
    evidence = (f"median GPU use of {int(_num(row, 'busy_minutes')):,} busy minutes was {util:.0f}% (below "
                f"{c.thresholds['gpu_low_percent']:g}%) on {t.node_type_id} x {t.min_workers} worker(s)"
                + (f" (up to {t.max_workers})" if t.max_workers > t.min_workers else "") + ".")
    workers = t.min_workers
    fewer = max(1, math.ceil(round(workers * util / high, 1))) if workers > 1 else workers
    section = getattr(c.spec, t.section, None)
    if fewer < workers and t.section in ("training", "inference"):
        edit, current = _resize(t, c, lo=fewer)
        return evidence, Proposal(f"fewer workers: {workers} -> {fewer} (the same work at about {high:g}% GPU use)",
                                  edit, current), None
    if section is not None and getattr(section, "node_type_id", None):
        return evidence, Proposal(f"let the sizer pick the smallest node that fits the model instead of the pinned "
                                  f"{section.node_type_id}", {f"{t.section}.node_type_id": None},
                                  {f"{t.section}.node_type_id": section.node_type_id}), None
    return evidence, None, ("already the fewest workers and the smallest node of its GPU family that fits the model; "
                            "a smaller GPU family (gpu_family) or batching more work onto it is what is left.")


def _balanced(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    latency = (f"; request P99 {_f(row.get('p99_ms'))} ms is within the SLA of {c.sla:g} ms"
               if row.get("p99_ms") is not None and c.sla is not None else "")
    return (f"median GPU use of {int(_num(row, 'busy_minutes')):,} busy minutes was "
            f"{_num(row, 'median_busy_util'):.0f}% (at or above {c.thresholds['gpu_high_percent']:g}%){latency}. "
            "No change.", None, None)


def _scale_out(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    assert c.sla is not None
    p99, lo, hi = _num(row, "p99_ms"), t.min_workers, t.max_workers
    at_max = bool(row.get("sat_at_max"))
    share = 100 * _num(row, "minutes_at_max") / max(_num(row, "minutes"), 1)
    evidence = (f"request P99 was {p99:,.0f} ms over {int(_num(row, 'requests')):,} requests (SLA {c.sla:g} ms) while "
                f"the GPUs were busy (median {_num(row, 'median_busy_util'):.0f}%): too few workers"
                + (f"; the cluster sat at its maximum of {hi} workers {share:.0f}% of the time." if at_max else "."))
    new_lo = max(lo + 1, math.ceil(round(lo * p99 / c.sla, 1)))
    edit, current = _resize(t, c, lo=new_lo, hi=hi + (new_lo - lo) if at_max else hi)
    return evidence, Proposal(_resize_text(edit, current), edit, current), None


def _resize_text(edit: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    names = {"inference.min_workers": "min_workers", "inference.max_workers": "max_workers"}
    parts = [f"{names.get(k, k.split('.')[-1] if 'pools' not in k else 'the pool max_capacity')} {current[k]} -> "
             f"{v}" for k, v in edit.items()]
    return "raise " + ", ".join(parts)


def _not_gpu_bound(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    return (f"request P99 was {_num(row, 'p99_ms'):,.0f} ms (SLA {c.sla:g} ms) while the GPUs idled (median "
            f"{_num(row, 'median_busy_util'):.0f}% of busy minutes): the bottleneck is not the GPU. CPU "
            f"{_f(row.get('cpu_percent'))}% on average (P90 {_f(row.get('cpu_p90_percent'))}%), I/O wait "
            f"{_f(row.get('cpu_wait_percent'), 1)}%, network {_f(row.get('network_mbps'))} Mbit/s per node, memory "
            f"{_f(row.get('mem_used_percent'))}%.", None,
            "more GPU workers will not help: look at the data pipeline (tokenisation and pre-processing on the CPU, "
            "reads from storage) and the batch size before any GPU change.")


def _reclaims(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    n = int(_num(row, "reclaims"))
    if t.role == "training":
        runs, resumed = int(_num(row, "runs_hit")), int(_num(row, "runs_resumed"))
        evidence = (f"{n} spot reclaim(s) hit {runs} of {int(_num(row, 'runs'))} run(s) ({n / max(runs, 1):.1f} per "
                    f"run hit); {resumed} of those run(s) had busy GPUs again after the reclaim.")
        note = ("runs resumed after the reclaims: check they resumed from the checkpoint Volume rather than from the "
                "start." if resumed >= runs else
                f"{runs - resumed} run(s) did not resume after a reclaim: check the job's retries and that the "
                "training script restarts from its last checkpoint on the Volume.")
        return evidence, None, note
    lo = t.min_workers
    least = int(_num(row, "least_workers_after")) if row.get("least_workers_after") is not None else lo
    below, breach = int(_num(row, "below_min")), int(_num(row, "followed_by_breach"))
    evidence = (f"{n} spot reclaim(s) on the inference cluster: {below} took it below its minimum of {lo} workers "
                f"(down to {least}), {breach} were followed by an SLA breach within "
                f"{c.thresholds['breach_window_minutes']:g} minutes.")
    edit, current = _resize(t, c, lo=lo + max(1, lo - least))
    return evidence, Proposal(f"a larger on-demand base (the base is on-demand; spot stays above it): "
                              f"{_resize_text(edit, current).removeprefix('raise ')}", edit, current), None


def _resized(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    largest = int(_num(row, "largest_target"))
    evidence = (f"the training cluster was resized while it ran: {int(_num(row, 'off_size'))} resize(s) to a size "
                f"other than its {t.min_workers} workers (to {int(_num(row, 'smallest_target'))}.."
                f"{largest}) in {int(_num(row, 'runs_resized'))} run(s). A resize mid-run changes the data-parallel "
                "world size and restarts the workers.")
    if largest > t.min_workers:
        edit, current = _resize(t, c, lo=largest)
        return evidence, Proposal(f"fix the size the run wanted: num_workers {t.min_workers} -> {largest} (or keep "
                                  f"{t.min_workers} and stop resizing by hand: the stack's cluster policy fixes "
                                  "num_workers)", edit, current), None
    return evidence, None, (f"keep num_workers {t.min_workers} and stop resizing it by hand (the cluster policy "
                            "fixes it).")


def _churn(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    rate = _num(row, "resizes_per_hour")
    median = _num(row, "median_workers")
    evidence = (f"{int(_num(row, 'resizes'))} resizes in {_num(row, 'minutes') / 60:,.1f} hours up: {rate:.1f} per hour"
                f" (threshold {c.thresholds['churn_resizes_per_hour']:g}); median size {median:g} workers "
                f"between {t.min_workers} and {t.max_workers}.")
    if t.section != "inference":
        return evidence, None, "autoscaling churns: a higher minimum steadies it."
    # the median size, kept below the maximum so that autoscaling still has room
    new_lo = max(t.min_workers + 1, min(math.ceil(median), t.max_workers - 1))
    edit, current = _resize(t, c, lo=new_lo)
    return evidence, Proposal(f"a higher minimum (scale_down_minutes is already at most 10, Databricks' longest "
                              f"window): {_resize_text(edit, current).removeprefix('raise ')}", edit, current), None


def _usage_key(t: Target) -> str | None:
    if t.role == "interactive":
        return "dev_hours_per_working_day"
    if t.role == "training":
        return "training_job_hours_per_month" if t.kind == "jobs_compute" else "training_hours_per_month"
    if t.role == "inference" and t.autotermination_minutes != 0:
        return "inference_hours_per_month"
    return None


def _idle(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    target = int(c.thresholds["target_autotermination_minutes"])
    idle, up = _num(row, "idle_minutes"), max(_num(row, "up_minutes"), 1)
    evidence = (f"{int(_num(row, 'idle_runs'))} of {int(_num(row, 'runs'))} run(s) ended with at least "
                f"{c.thresholds['idle_stretch_minutes']:g} minutes of near-zero GPU use (median tail "
                f"{_num(row, 'median_tail_minutes'):.0f} min): {idle / 60:,.1f} of {up / 60:,.1f} hours up "
                f"({100 * idle / up:.0f}%); auto-termination is {t.autotermination_minutes} min.")
    window = _num(row, "window_hours")  # the bill's span in whole days, else the GPU telemetry's
    saved_month = _num(row, "saveable_minutes") / 60 * HOURS_PER_MONTH / window if window else 0.0
    key = _usage_key(t)
    edit: dict[str, Any] = {}
    current: dict[str, Any] = {}
    if target < t.autotermination_minutes:
        edit[f"{t.section}.autotermination_minutes"] = target
        current[f"{t.section}.autotermination_minutes"] = t.autotermination_minutes
    if key and saved_month > 0:
        now = float(c.plan.assumptions.get(key) or 0) if c.plan.assumptions else 0.0
        if key == "dev_hours_per_working_day":
            days = float((c.plan.assumptions or {}).get("working_days_per_month") or 21)
            new = max(0.0, now - saved_month / days)
        else:
            new = max(0.0, now - saved_month)
        edit[f"usage.{key}"], current[f"usage.{key}"] = round(new, 1), now
    if not edit:
        return evidence, None, ("auto-termination is already short: the idle time is work that leaves the GPUs idle "
                                "(notebooks doing CPU work); move it to a CPU cluster.")
    return evidence, Proposal(f"auto-termination {t.autotermination_minutes} -> {target} min, and the usage "
                              f"assumption lowered by the {saved_month:,.0f} idle hours a month it removes", edit,
                              current), None


def _drift(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    billed, expected = _num(row, "billed_monthly_usd"), _num(row, "dbu_monthly_expected")
    ratio = billed / expected if expected else 0.0
    evidence = (f"billed ${billed:,.0f}/month of DBUs (${_num(row, 'billed_usd'):,.2f} over "
                f"{_num(row, 'usage_hours'):,.0f} h of usage, scaled to a month) against the stack's expected DBU "
                f"part ${expected:,.0f}/month ({100 * (ratio - 1):+.0f}%). The bill holds DBUs only; the cloud bills "
                "the VMs.")
    if int(_num(row, "unpriced_rows")):
        evidence += f" {int(_num(row, 'unpriced_rows'))} usage row(s) had no list price and count as $0."
    a = c.plan.assumptions or {}
    key = _usage_key(t)
    if key is None and t.role == "inference":  # always on: the base is fixed, the burst explains the rest
        base = t.dbu_hourly * HOURS_PER_MONTH
        burst = expected - base
        now = float(a.get("inference_burst_hours_per_month") or 0)
        if burst <= 0 or billed <= base or now <= 0:
            return evidence, None, ("the always-on base alone costs more than the bill: check that the export "
                                    "covers the whole window, and the node types the cluster ran on.")
        new = now * (billed - base) / burst
        if new <= HOURS_PER_MONTH:
            return evidence, Proposal(f"the usage assumption that explains the bill: inference_burst_hours_per_month "
                                      f"{now:g} -> {new:,.0f}", {"usage.inference_burst_hours_per_month": round(new)},
                                      {"usage.inference_burst_hours_per_month": now}), None
        # bursting all month long is not enough: more workers above the base, on average, while bursting
        extra_now = t.extra_workers_expected
        extra = min(extra_now * new / HOURS_PER_MONTH, float(t.max_workers - t.min_workers))
        edit = {"usage.inference_burst_hours_per_month": HOURS_PER_MONTH,
                "usage.inference_burst_avg_extra_workers": round(extra, 1)}
        current = {"usage.inference_burst_hours_per_month": now,
                   "usage.inference_burst_avg_extra_workers": a.get("inference_burst_avg_extra_workers")}
        return evidence, Proposal(f"the usage assumptions that explain the bill: bursting all month "
                                  f"({HOURS_PER_MONTH:g} h) with {extra:.1f} workers above the base on average",
                                  edit, current), None
    if key is None:
        return evidence, None, None
    now = float(a.get(key) or 0)
    new = now * ratio
    cap = 24.0 if key == "dev_hours_per_working_day" else float(HOURS_PER_MONTH)
    note = None
    if new > cap:
        note = (f"even {cap:g} h does not explain the bill: the cluster ran larger than the stack says (check the "
                "node types and worker counts it ran with) or the export holds clusters of another stack.")
        new = cap
    return evidence, Proposal(f"the usage assumption that explains the bill: {key} {now:g} -> {new:,.1f}",
                              {f"usage.{key}": round(new, 1)}, {f"usage.{key}": now}), note


def _interconnect(row: Mapping[str, Any], t: Target, c: Context) -> tuple[str, Proposal | None, str | None]:
    from gpucatalog import load_catalog

    evidence = (f"multi-node training on {t.min_workers} workers of {t.node_type_id} "
                f"({_f(t.bandwidth_gbps) if t.bandwidth_gbps else 'unknown'} Gbps, no GPU interconnect): median GPU "
                f"use {_num(row, 'median_busy_util'):.0f}% while each node moved "
                f"{_num(row, 'network_mbps'):,.0f} Mbit/s: the GPUs wait on the network.")
    catalog = load_catalog()
    node = catalog.get(t.node_type_id)
    if node is None:
        return evidence, None, None
    larger = [n for n in catalog.family_nodes(node.cloud, node.family)
              if n.gpu_count > node.gpu_count and not n.deprecated and not n.retired]
    if not larger:
        return evidence, None, "no larger node in this family: a family with a GPU interconnect is what is left."
    total = t.min_workers * node.gpu_count  # the GPUs the run has now: keep them, on fewer nodes
    holding = [n for n in larger if n.gpu_count >= total]
    big = min(holding, key=lambda n: (n.gpu_count, n.usd_per_hour_on_demand or math.inf)) if holding \
        else max(larger, key=lambda n: n.gpu_count)
    workers = max(1, math.ceil(total / big.gpu_count))
    edit, current = _resize(t, c, lo=workers)
    spec = getattr(c.spec, t.section, None)
    edit[f"{t.section}.node_type_id"] = big.node_type_id
    current[f"{t.section}.node_type_id"] = getattr(spec, "node_type_id", None) or f"(sized: {t.node_type_id})"
    return evidence, Proposal(f"fewer, larger nodes: {t.min_workers} x {t.node_type_id} ({node.gpu_count} GPU) -> "
                              f"{workers} x {big.node_type_id} ({big.gpu_count} GPUs): more of the gradient exchange "
                              "stays inside a node", edit, current), None


#: Finding id -> (row, target, context) -> (evidence, proposal, note).
BUILDERS: Mapping[str, Any] = {
    "gpu-underutilized": _underutilized, "gpu-balanced": _balanced, "latency-over-sla-scale-out": _scale_out,
    "latency-over-sla-not-gpu-bound": _not_gpu_bound, "spot-reclaim-hits-base": _reclaims,
    "training-resized": _resized, "autoscaling-churn": _churn, "idle-cluster": _idle, "cost-drift": _drift,
    "poor-scaling-interconnect": _interconnect,
}


def findings_of(analysis: Analysis, targets: list[Target], ctx: Context) -> list[Finding]:
    """Every finding of the analysis, ordered by severity then workload."""
    by_name = {t.workload: t for t in targets}
    out = []
    for fid in FINDING_IDS:
        for row in analysis.rows.get(fid, []):
            target = by_name.get(str(row["workload"]))
            if target is None:
                continue
            evidence, proposal, note = BUILDERS[fid](row, target, ctx)
            severity = "info" if fid == "spot-reclaim-hits-base" and target.role == "training" \
                and int(_num(row, "runs_resumed")) >= int(_num(row, "runs_hit")) else SEVERITY[fid]
            figures = {k: v for k, v in row.items() if k not in ("workload", "cluster_id")}
            out.append(Finding(fid, severity, target.workload, target.role, row.get("cluster_id"), evidence, figures,
                               proposal, note))
    return sorted(out, key=lambda f: (SEVERITY_ORDER.index(f.severity), f.workload, FINDING_IDS.index(f.id)))


# --------------------------------------------------------------------------------------------------------------------
# Pricing a proposal: the cost model on the edited stack
# --------------------------------------------------------------------------------------------------------------------

def edited_config(config: Mapping[str, Any], edit: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a stack file's ``config`` map with dotted keys (``inference.min_workers``) set (None: removed)."""
    import copy

    out = copy.deepcopy(dict(config))
    for dotted, value in edit.items():
        section, *path = dotted.split(".")
        key = f"{PROJECT}:{section}" if f"{PROJECT}:{section}" in out or section not in out else section
        node = out.setdefault(key, {})
        for part in path[:-1]:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value
    return out


def edited_stack_text(stack_file: Path, edit: Mapping[str, Any]) -> str:
    """The stack file with the edit applied, as YAML (comments are not kept)."""
    import io

    from ruamel.yaml import YAML

    from stackspec.load import read_stack_file

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    buffer = io.StringIO()
    yaml.dump({"config": edited_config(read_stack_file(stack_file), edit)}, buffer)
    return buffer.getvalue()


def price_edit(plan: Plan, proposal: Proposal, *, policy_config: Any, prices: str | None) -> None:
    """Price the stack with the proposal's edit (the cost model on the edited stack, its policies too): fills
    ``monthly_before``/``monthly_after`` and ``blocked_by`` (mandatory policies the edit breaks: those the edited
    stack breaks and ``plan``, the stack as it is, does not)."""
    from stackplan.pipeline import build_plan

    assert plan.cost is not None and plan.stack_file
    with tempfile.TemporaryDirectory(prefix="advise-") as tmp:
        edited = Path(tmp) / f"Pulumi.{plan.stack}.yaml"
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
    already = {(v.policy, v.resource_name) for v in plan.violations or [] if v.mandatory}
    proposal.blocked_by = sorted({v.policy for v in after.violations or []
                                  if v.mandatory and (v.policy, v.resource_name) not in already})
