"""``databricks:index/instancePool:InstancePool``: idle instances kept warm for the clusters that draw on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.plan import CostEntry, Resource
from dbx_ai_infra.dbxtypes.shape import PoolShape, pool_shape
from dbx_ai_infra.dbxtypes.vocabulary import INSTANCE_POOL

from ..model import PricingContext, _entry_head, _node_price, _Unpriced, _unpriced_entry, assumption
from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    pool = pool_shape(inputs)
    cloud = next(iter(pool.blocks), None)
    availability = (pool.declared_availability_in(cloud) if cloud else None) or "?"
    capacity = "unlimited" if pool.max_capacity is None else pool.max_capacity
    return f"{pool.node_type_id}, {pool.min_idle_instances} idle, max {capacity}, {availability}"


def index(resource: Resource, ctx: PricingContext) -> None:
    """The pool's shape, by id: the clusters that draw on it are priced with its node type."""
    if resource.id is not None:
        ctx.pools[resource.id] = (resource, pool_shape(resource.inputs))


def _role(pool: PoolShape, users: list[str]) -> str:
    """The pool's role: its own tag, else the one role of the clusters that use it, else unknown."""
    if pool.role:
        return pool.role
    roles = sorted(set(users))
    return roles[0] if len(roles) == 1 else "unknown"


def price(resource: Resource, ctx: PricingContext) -> CostEntry:
    """The idle instances' VM price (no DBU) for the pool's idle hours."""
    pool = ctx.pools[resource.id][1] if resource.id in ctx.pools else pool_shape(resource.inputs)
    idle = int(pool.min_idle_instances)
    entry = _entry_head(resource)
    idle_hours, basis = assumption(ctx.a, "pool_idle_hours_per_month", pool.custom_tags)
    entry.update({"workload_type": _role(pool, ctx.pool_users.get(str(resource.id), [])),
                  "node_type_id": pool.node_type_id, "compute_kind": None,
                  "nodes": {"min": idle, "max": idle},
                  "max_capacity": pool.max_capacity,
                  "hours_per_month": idle_hours,
                  "hours_basis": f"usage assumption {basis}"})
    try:
        if idle == 0:
            vm = 0.0
        else:
            if not pool.node_type_id:
                raise _Unpriced("the instance pool has no nodeTypeId")
            vm, _ = _node_price(ctx.prices, pool.node_type_id, ctx.used, need_dbu=False)
    except _Unpriced as why:
        return CostEntry.model_validate(_unpriced_entry(entry, str(why)))
    hourly = idle * vm
    monthly = hourly * float(idle_hours or 0.0)
    entry.update({"hourly": hourly, "hourly_max": hourly,
                  "monthly": {"min": monthly, "expected": monthly, "max": monthly},
                  "all_on_demand_monthly_expected": monthly, "saving_monthly_expected": 0.0, "unpriced": None})
    return CostEntry.model_validate(entry)


KIND = ResourceKind(INSTANCE_POOL, "InstancePool", facts, price, phase=1, index=index)
