"""Inference capacity must keep an on-demand base: the driver and the minimum workers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.clouds import profile
from dbx_ai_infra.dbxtypes.shape import ClusterShape, PoolShape
from dbx_ai_infra.dbxtypes.vocabulary import (
    ATTRIBUTES_BLOCK,
    CLUSTER,
    INSTANCE_POOL,
    JOB,
    ON_DEMAND,
    SPOT_WITH_FALLBACK,
    SPOT_WITHOUT_FALLBACK,
    on_demand_base,
)
from dbx_ai_infra.policies.common import ROLE_READS
from dbx_ai_infra.policies.rule import Rule


def _check_cluster(view: ClusterShape) -> list[str]:
    if view.role != "inference" or view.pool_backed:
        # A pool-backed cluster takes its availability from the pool; the pool is checked on its own.
        return []
    base = view.min_workers
    needed = on_demand_base(base)
    out = []
    for cloud in view.effective_clouds:
        key = ATTRIBUTES_BLOCK[cloud]
        avail = view.availability_in(cloud)
        if avail == SPOT_WITHOUT_FALLBACK[cloud]:
            out.append(
                f"{view.role_subject()} uses {key}.availability {avail}: spot capacity with no on-demand fallback, so "
                f"a spot reclaim can take the whole serving fleet. Fix: set {key}.availability to "
                f"{SPOT_WITH_FALLBACK[cloud]} (or {ON_DEMAND[cloud]})."
            )
        if avail == ON_DEMAND[cloud]:
            continue
        fod = view.first_on_demand_in(cloud)
        if fod < needed:
            shown = f"{fod}" if view.first_on_demand_declared_in(cloud) else f"{fod} (the default)"
            out.append(
                f"{view.role_subject()} has {key}.first_on_demand {shown} but its on-demand base needs {needed}: "
                f"{base} minimum worker(s) plus the driver (first_on_demand counts the driver). "
                f"Fix: set {key}.first_on_demand to at least {needed}."
            )
    return out


def _check_pool(pool: PoolShape) -> list[str]:
    role = pool.role
    if role not in ("inference", "training"):
        return []
    out = []
    for cloud in pool.blocks:
        field = profile(cloud).pool_availability_field
        value = pool.declared_availability_in(cloud)  # no default: pools are checked on what they declare
        if value == SPOT_WITHOUT_FALLBACK[cloud]:
            out.append(
                f"instance pool for {role} uses {ATTRIBUTES_BLOCK[cloud]}.{field} {value}: every cluster on the "
                f"pool runs on spot capacity with no fallback (pool-backed clusters take availability from the pool). "
                f"Fix: set {ATTRIBUTES_BLOCK[cloud]}.{field} to {ON_DEMAND[cloud]}."
            )
    return out


def check(view: ClusterShape | PoolShape, config: Mapping[str, Any]) -> list[str]:
    return _check_cluster(view) if isinstance(view, ClusterShape) else _check_pool(view)


RULE = Rule(
    name="databricks-cluster-disallow-all-spot-inference",
    order=20,
    description=("Inference clusters must keep the driver and the minimum workers on on-demand capacity, and instance "
                 "pools for inference or training must not be spot-only."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB, INSTANCE_POOL),
    check=check,
    takes=(ClusterShape, PoolShape),
    stack_fields=('spot_above_base', 'min_workers'),
    remediation=("Set first_on_demand to min_workers + 1 in the cloud attributes block, use a spot-with-fallback or "
                 "on-demand availability, and keep instance pools for inference and training on-demand."),
    severity="high",
    reads=ROLE_READS,
    concerns=lambda view: isinstance(view, ClusterShape) and view.gpu,
)
