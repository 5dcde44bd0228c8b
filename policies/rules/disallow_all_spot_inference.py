"""Inference capacity must keep an on-demand base: the driver and the minimum workers."""

from __future__ import annotations

from typing import Any, Mapping

from policies.common import (
    CLOUD_BLOCKS, ON_DEMAND, SPOT_WITH_FALLBACK, SPOT_WITHOUT_FALLBACK, availability, cloud_blocks, declared_availability,
    custom_tags, effective_blocks, first_on_demand, is_set, min_workers, tag_role,
)
from policies.rule import CLUSTER, INSTANCE_POOL, JOB, ClusterView, Rule, View

#: Instance pools: the availability field per cloud block (GCP pools call it ``gcp_availability``).
_POOL_AVAILABILITY_FIELD = {"aws": "availability", "azure": "availability", "gcp": "gcp_availability"}


def _check_cluster(view: ClusterView) -> list[str]:
    cluster = view.cluster
    if view.role != "inference" or is_set(cluster.get("instance_pool_id")):
        # A pool-backed cluster takes its availability from the pool; the pool is checked on its own.
        return []
    base = min_workers(cluster)
    needed = base + 1
    out = []
    for cloud, block in effective_blocks(cluster).items():
        key = CLOUD_BLOCKS[cloud]
        avail = availability(block, cloud)
        if avail == SPOT_WITHOUT_FALLBACK[cloud]:
            out.append(
                f"inference cluster uses {key}.availability {avail}: spot capacity with no on-demand fallback, so "
                f"a spot reclaim can take the whole serving fleet. Fix: set {key}.availability to "
                f"{SPOT_WITH_FALLBACK[cloud]} (or {ON_DEMAND[cloud]})."
            )
        if avail == ON_DEMAND[cloud]:
            continue
        fod = first_on_demand(block)
        if fod < needed:
            shown = f"{fod}" if is_set(block.get("first_on_demand")) else f"{fod} (the default)"
            out.append(
                f"inference cluster has {key}.first_on_demand {shown} but its on-demand base needs {needed}: "
                f"{base} minimum worker(s) plus the driver (first_on_demand counts the driver). "
                f"Fix: set {key}.first_on_demand to at least {needed}."
            )
    return out


def _check_pool(props: Mapping[str, Any]) -> list[str]:
    role = tag_role(custom_tags(props))
    if role not in ("inference", "training"):
        return []
    out = []
    for cloud, block in cloud_blocks(props).items():
        field = _POOL_AVAILABILITY_FIELD[cloud]
        value = declared_availability(block, cloud)  # no default: pools are checked on what they declare
        if value == SPOT_WITHOUT_FALLBACK[cloud]:
            out.append(
                f"instance pool for {role} uses {CLOUD_BLOCKS[cloud]}.{field} {value}: every cluster on the pool "
                f"runs on spot capacity with no fallback (pool-backed clusters take availability from the pool). "
                f"Fix: set {CLOUD_BLOCKS[cloud]}.{field} to {ON_DEMAND[cloud]}."
            )
    return out


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    if isinstance(view, ClusterView):
        return _check_cluster(view)
    if view.resource_type == INSTANCE_POOL:
        return _check_pool(view.props)
    return []


RULE = Rule(
    name="databricks-cluster-disallow-all-spot-inference",
    description=("Inference clusters must keep the driver and the minimum workers on on-demand capacity, and instance "
                 "pools for inference or training must not be spot-only."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB, INSTANCE_POOL),
    check=check,
    remediation=("Set first_on_demand to min_workers + 1 in the cloud attributes block, use a spot-with-fallback or "
                 "on-demand availability, and keep instance pools for inference and training on-demand."),
    severity="high",
)
