"""Databricks cluster-policy definitions generated from what a stack decided, one per workload kind.

A cluster policy limits single attributes and cannot relate two fields, so each cross-field rule of the
policy pack is written as bounds on both sides. "On-demand base" for inference, for example, becomes
``autoscale.min_workers <= N`` together with ``<cloud>_attributes.first_on_demand >= N + 1``: any cluster
inside both bounds keeps its driver and its first N workers on-demand.

Every workload's definition also carries: the node types of its GPU family on the stack's cloud (an
allowlist), GPU ML runtimes only (a regex), the required tags fixed to the stack's values, the other clouds'
attribute blocks forbidden, dedicated (single-user) access mode, no Photon, and a DBU-per-hour ceiling at
the stack's largest size for that workload.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dbx_ai_infra.dbxtypes.sdk_types import fields_of
from dbx_ai_infra.dbxtypes.vocabulary import (
    ATTRIBUTES_BLOCK,
    GPU_ML_RUNTIME_REGEX,
    ON_DEMAND,
    SPOT_WITH_FALLBACK,
    on_demand_base,
)

Role = Literal["training", "inference", "interactive"]
#: Attribute leaves of a cloud block that the other clouds' policies forbid.
_BLOCK_LEAVES = ("availability", "first_on_demand")
#: Attribute leaves of the cloud block that an instance pool decides, so a policy that pins a pool forbids them (each
#: cloud's block has some of them: aws_attributes zone_id and spot_bid_price_percent, azure_attributes
#: spot_bid_max_price, gcp_attributes zone_id; a policy path the block lacks matches nothing).
POOL_DECIDES = ("availability", "zone_id", "first_on_demand", "spot_bid_price_percent", "spot_bid_max_price")


def pool_decided_fields(cloud: str) -> tuple[str, ...]:
    """`POOL_DECIDES` that ``cloud``'s attribute block has (databricks-sdk ``compute.AwsAttributes``,
    ``AzureAttributes``, ``GcpAttributes``)."""
    block = ATTRIBUTES_BLOCK[cloud]
    fields = fields_of(f"compute.{block.split('_')[0].capitalize()}Attributes")
    return tuple(leaf for leaf in POOL_DECIDES if leaf in fields)


@dataclass(frozen=True, kw_only=True)
class WorkloadLimits:
    """What a stack decided for one workload, as plain values."""

    role: Role
    cloud: str
    node_types: Sequence[str]
    tags: Mapping[str, str]
    required_tags: Sequence[str]
    autotermination_minutes: int
    max_autotermination_minutes: int
    #: Allowed driver node types when they differ from ``node_types`` (a CPU driver); empty: the same.
    driver_node_types: Sequence[str] = ()
    #: training: the fixed size (policy allows 1..num_workers); inference: min/max of the autoscale range.
    num_workers: int | None = None
    min_workers: int | None = None
    max_workers: int | None = None
    spot: bool = True
    #: True when the workload runs on an instance pool (then the node type comes from the pool).
    pool_backed: bool = False
    dbus_per_hour_max: float | None = None


def _fixed(value: Any, hidden: bool = False) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "fixed", "value": value}
    if hidden:
        element["hidden"] = True
    return element


def _range(minimum: float | None = None, maximum: float | None = None, default: float | None = None) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "range"}
    if minimum is not None:
        element["minValue"] = minimum
    if maximum is not None:
        element["maxValue"] = maximum
    if default is not None:
        element["defaultValue"] = default
    return element


#: Stands for the id of the workload's own instance pool in a pool-backed definition. The id exists only once the
#: pool is created, so `policy_definition` writes this and `pin_pool` puts the id in (the ClusterPolicies component,
#: from the pool's output: Pulumi then creates the pool before the policy).
POOL_ID_PLACEHOLDER = "{{instance_pool_id}}"


def _training(d: dict[str, Any], limits: WorkloadLimits, block: str) -> None:
    """Training: a fixed size (no autoscale), spot with fallback or on demand, the driver on demand."""
    assert limits.num_workers is not None
    d["autoscale.min_workers"] = {"type": "forbidden"}
    d["autoscale.max_workers"] = {"type": "forbidden"}
    d["num_workers"] = _range(1, limits.num_workers, default=limits.num_workers)
    wanted = SPOT_WITH_FALLBACK if limits.spot else ON_DEMAND
    d[f"{block}.availability"] = _fixed(wanted[limits.cloud])
    d[f"{block}.first_on_demand"] = _range(minimum=1, default=1)
    # Optional: the policy admits the training job's clusters, which cannot set auto-termination.
    d["autotermination_minutes"] = {**_range(10, limits.max_autotermination_minutes,
                                             default=limits.autotermination_minutes), "isOptional": True}
    d["cluster_type"] = {"type": "allowlist", "values": ["all-purpose", "job"]}


def _inference(d: dict[str, Any], limits: WorkloadLimits, block: str) -> None:
    """Inference: autoscale within the stack's bounds, the on-demand base kept on demand."""
    assert limits.min_workers is not None and limits.max_workers is not None
    d["autoscale.min_workers"] = _range(1, limits.min_workers, default=limits.min_workers)
    d["autoscale.max_workers"] = _range(1, limits.max_workers, default=limits.max_workers)
    # An autoscaled cluster leaves num_workers unset (or 0); a size next to autoscale is refused.
    d["num_workers"] = {**_range(maximum=0), "isOptional": True}
    d[f"{block}.availability"] = {"type": "allowlist",
                                  "values": [SPOT_WITH_FALLBACK[limits.cloud], ON_DEMAND[limits.cloud]]}
    # first_on_demand counts the driver: at least the on-demand base keeps the whole base on demand.
    base = on_demand_base(limits.min_workers)
    d[f"{block}.first_on_demand"] = _range(minimum=base, default=base)
    # 0 = never: a serving cluster may keep its on-demand base up (the API refuses 1..9 itself).
    d["autotermination_minutes"] = _range(0, limits.max_autotermination_minutes,
                                          default=limits.autotermination_minutes)
    d["cluster_type"] = _fixed("all-purpose")


def _interactive(d: dict[str, Any], limits: WorkloadLimits, block: str) -> None:
    """Interactive: one node, on demand, capped idle time."""
    d["num_workers"] = _fixed(0, hidden=True)
    d["autoscale.min_workers"] = {"type": "forbidden"}
    d["autoscale.max_workers"] = {"type": "forbidden"}
    # one node by is_single_node (kind CLASSIC_PREVIEW: Databricks sets the single-node Spark settings itself). The
    # legacy settings are not pinned: "fixed" would add spark.databricks.cluster.profile to every cluster made under
    # the policy, and the API refuses it beside an access mode (databricks/databricks-sdk-py issue 881). Policies
    # take any attribute of the Clusters API (compute policy reference, "Supported attributes").
    d["is_single_node"] = _fixed(True, hidden=True)
    d[f"{block}.availability"] = _fixed(ON_DEMAND[limits.cloud])
    d["autotermination_minutes"] = _range(10, limits.autotermination_minutes,
                                          default=limits.autotermination_minutes)
    d["cluster_type"] = _fixed("all-purpose")


_ROLE_LIMITS = {"training": _training, "inference": _inference, "interactive": _interactive}


def _pin_pool(d: dict[str, Any], limits: WorkloadLimits, block: str) -> None:
    """A pool-backed workload: the definition pins its pool and forbids what the pool decides."""
    # A pool-backed cluster has no availability of its own: the (on-demand) pool decides. So the policy pins the
    # pool (compute policy reference, "instance_pool_id": the pool of the workers, and of the driver unless
    # driver_instance_pool_id is set; "fixed" applies the value to a cluster that leaves it out). A cluster made in
    # the UI under the policy lands on the pool; one that names a node type (off the pool, on the cloud's default
    # availability: spot on AWS) or another pool is refused. docs.databricks.com/admin/clusters/policy-definition
    # (read 2026-12-03).
    d["instance_pool_id"] = _fixed(POOL_ID_PLACEHOLDER)
    d["node_type_id"] = {"type": "forbidden", "hidden": True}
    # The driver on the same pool: a cluster on a pool takes its driver from it, and the provider sends no
    # driver_node_type_id beside an instance_pool_id (terraform-provider-databricks, clusters
    # ModifyRequestOnInstancePool, which jobs/resource_job.go applies to every job cluster), so a policy that required
    # a CPU driver node type there refused the very cluster the stack declared (issue 52 audit).
    d["driver_instance_pool_id"] = _fixed(POOL_ID_PLACEHOLDER)
    d["driver_node_type_id"] = {"type": "forbidden", "hidden": True}
    # Databricks refuses a cluster that names an instance pool together with the cloud block's availability (or
    # zone, or a spot bid): the pool decides them. "isOptional" would still let one through (and offer it in the
    # UI), so they are forbidden (databrickslabs/ucx installer/policy.py drops availability, zone_id and
    # node_type_id when it pins a pool, PR 1457; the Clusters API's instance_pool_id).
    for leaf in pool_decided_fields(limits.cloud):
        d[f"{block}.{leaf}"] = {"type": "forbidden", "hidden": True}


def policy_definition(limits: WorkloadLimits) -> dict[str, Any]:
    """The cluster-policy definition (a JSON-able dict) for one workload."""
    block = ATTRIBUTES_BLOCK[limits.cloud]
    d: dict[str, Any] = {
        "spark_version": {"type": "regex", "pattern": GPU_ML_RUNTIME_REGEX},
        "runtime_engine": _fixed("STANDARD", hidden=True),  # Photon does not run GPU ML runtimes
        # dedicated access, by its current name (with kind CLASSIC_PREVIEW; to a person or a group) or its legacy one:
        # databricks-sdk compute.DataSecurityMode, "SINGLE_USER: Legacy alias for DATA_SECURITY_MODE_DEDICATED";
        # provider docs, resources/cluster.md. A cluster that sets neither gets the current name (defaultValue).
        "data_security_mode": {"type": "allowlist", "values": ["DATA_SECURITY_MODE_DEDICATED", "SINGLE_USER"],
                               "defaultValue": "DATA_SECURITY_MODE_DEDICATED"},
    }
    node_types = sorted(limits.node_types)
    d["node_type_id"] = {"type": "allowlist", "values": node_types}
    # Without driver_node_type_id the driver takes the (allowlisted) worker node type; a CPU driver is allowlisted.
    d["driver_node_type_id"] = {"type": "allowlist", "values": sorted(limits.driver_node_types or node_types),
                                "isOptional": True}
    for tag in limits.required_tags:
        d[f"custom_tags.{tag}"] = _fixed(limits.tags[tag])
    d["custom_tags.workload_type"] = _fixed(limits.role)
    for cloud, other in ATTRIBUTES_BLOCK.items():
        if cloud != limits.cloud:
            for leaf in _BLOCK_LEAVES:
                d[f"{other}.{leaf}"] = {"type": "forbidden"}
    if limits.dbus_per_hour_max is not None:
        d["dbus_per_hour"] = _range(maximum=round(limits.dbus_per_hour_max, 4))

    _ROLE_LIMITS.get(limits.role, _interactive)(d, limits, block)
    if limits.pool_backed:
        _pin_pool(d, limits, block)
    return d


def pin_pool(definition: Mapping[str, Any], pool_id: str) -> dict[str, Any]:
    """``definition`` with its pool placeholder (`POOL_ID_PLACEHOLDER`) replaced by ``pool_id``."""
    return {path: ({**element, "value": pool_id} if element.get("value") == POOL_ID_PLACEHOLDER else dict(element))
            for path, element in definition.items()}


def pinned_pool(definition: Mapping[str, Any]) -> bool:
    """True when the definition pins an instance pool (so it needs the pool's id: `pin_pool`)."""
    return any(element.get("value") == POOL_ID_PLACEHOLDER for element in definition.values())
