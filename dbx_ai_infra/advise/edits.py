"""What a finding's builder proposes: the stack edits (the usage assumption that explains a bill, a workload's new
size, an endpoint's provisioned concurrency) and the figures they start from. The record they go into is
`dbx_ai_infra.advise.record`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.advise.record import Context
from dbx_ai_infra.advise.targets import Target
from dbx_ai_infra.dbxtypes.vocabulary import MAX_CONCURRENCY_PER_MODEL, autoscale_max_floor, usage_hours_key
from dbx_ai_infra.gpucatalog.serving import load_serving_catalog


def named_workload(t: Target, c: Context) -> Any:
    """The stack's `NamedWorkload` the target belongs to; None without a spec (or one that does not name it)."""
    return c.spec.named_workloads().get(t.name) if c.spec is not None else None


def workload_spec(t: Target, c: Context) -> Any:
    """The stack's settings of the target's workload (its section, or its ``workloads`` entry); None without a spec."""
    named = named_workload(t, c)
    return named.spec if named is not None else None


def usage_figure(t: Target, c: Context, key: str) -> tuple[str, Any]:
    """(the dotted stack key, its current value) of usage assumption ``key`` for the target's workload: its own
    ``usage.<workload>.<key>`` when it has one or shares its role with another workload, else ``usage.<key>``."""
    a = c.plan.assumptions or {}
    own = f"{key}.{t.name}"
    shared = c.spec is not None and sum(w.section == t.section for w in c.spec.named_workloads().values()) > 1
    if own in a or shared:
        return f"usage.{t.name}.{key}", a.get(own, a.get(key))
    return f"usage.{key}", a.get(key)


def usage_edit(t: Target, c: Context, key: str, new: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The edit (and the current values) that sets usage assumption ``key`` of the target's workload to ``new``
    (`usage_figure`'s key). A workload named by its role edits ``usage.<role>``, every workload of that role's default:
    the others keep their figures, written under their own names."""
    dotted, now = usage_figure(t, c, key)
    edit, current = {dotted: new}, {dotted: now}
    if dotted == f"usage.{t.section}.{key}" and c.spec is not None:
        a = c.plan.assumptions or {}
        own = c.spec.usage.of_workloads()
        for w in c.spec.named_workloads().values():
            if w.section == t.section and w.name != t.name and key not in (own[w.name].set_fields()
                                                                           if w.name in own else {}):
                edit[f"usage.{w.name}.{key}"] = a.get(f"{key}.{w.name}", a.get(key))
                current[f"usage.{w.name}.{key}"] = None
    return edit, current


def node_edit(t: Target, c: Context, node_type_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The edit (and the current value) that pins the workload's node type to ``node_type_id``: now, its pinned node
    type, or the sizer's pick (``(sized: ...)``) where it pins none."""
    key = f"{t.key}.node_type_id"
    pinned = getattr(workload_spec(t, c), "node_type_id", None)
    return {key: node_type_id}, {key: pinned or f"(sized: {t.node_type_id})"}


def resize(t: Target, c: Context, *, lo: int | None = None, hi: int | None = None) -> tuple[dict[str, Any],
                                                                                        dict[str, Any]]:
    """The edit (and the current values) that sizes a workload: ``lo``/``hi`` for inference (``hi`` kept above
    ``lo``: the autoscale API needs max > min), ``lo`` as ``num_workers`` otherwise; and the workload's instance pool
    raised when it could not hold the largest size (the spec refuses a pool smaller than the driver and its
    workers)."""
    edit: dict[str, Any] = {}
    current: dict[str, Any] = {}
    if t.section == "inference":
        new_lo = t.min_workers if lo is None else lo
        new_hi = max(t.max_workers if hi is None else hi, autoscale_max_floor(new_lo))
        if new_lo != t.min_workers:
            edit[f"{t.key}.min_workers"], current[f"{t.key}.min_workers"] = new_lo, t.min_workers
        if new_hi != t.max_workers:
            edit[f"{t.key}.max_workers"], current[f"{t.key}.max_workers"] = new_hi, t.max_workers
        largest = new_hi
    else:
        largest = t.min_workers if lo is None else lo
        if largest != t.min_workers:
            edit[f"{t.key}.num_workers"], current[f"{t.key}.num_workers"] = largest, t.min_workers
    named = named_workload(t, c)
    pool = c.spec.pool_of(named) if named is not None else None
    if named is not None and pool is not None and pool.max_capacity is not None and pool.max_capacity < 1 + largest:
        key = f"instance_pools.{c.spec.pool_key(named)}.max_capacity"
        edit[key], current[key] = 1 + largest, pool.max_capacity
    return edit, current


def resize_text(edit: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    parts = [f"{k.split('.')[-1] if 'pools' not in k else 'the pool max_capacity'} {current[k]} -> {v}"
             for k, v in edit.items()]
    return "raise " + ", ".join(parts)


def at_least_one(value: float) -> int:
    """Whole workers, at least one (a figure rounded to a tenth first, so 2.0000001 stays 2)."""
    return max(1, math.ceil(round(value, 1)))


def usage_key(t: Target) -> str | None:
    """The usage assumption the cost model prices the target's hours by
    (`dbx_ai_infra.dbxtypes.vocabulary.usage_hours_key`)."""
    return usage_hours_key(t.role, t.kind, always_on=t.role == "inference" and t.autotermination_minutes == 0)


def concurrency_step(value: float, *, at_least: int = 0) -> int:
    """Provisioned concurrency for ``value`` requests in flight: whole replicas (Model Serving serves a replica's
    concurrency at a time, `dbx_ai_infra.gpucatalog.serving.ServingCatalog.concurrency_per_replica`), at least
    ``at_least``, at
    most Model Serving's limit per served model."""
    step = load_serving_catalog().concurrency_per_replica
    return min(MAX_CONCURRENCY_PER_MODEL, max(at_least, step * math.ceil(round(value, 3) / step)))
