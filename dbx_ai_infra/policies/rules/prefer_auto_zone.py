"""A GPU cluster on AWS should let Databricks pick its availability zone (``aws_attributes.zone_id: auto``).

GPU capacity differs from zone to zone and from hour to hour: a cluster pinned to one zone fails to start (or waits
for capacity) while the region's other zones have the GPUs. ``zone_id: auto`` ("auto-AZ") lets the workspace choose
the zone when the cluster starts (Clusters API ``AwsAttributes.zone_id``: "the string 'auto' ... will
automatically place the cluster in a zone", databricks-sdk ``compute.AwsAttributes``, read 2026-12-03). Exports
and plans judged by this project set it; the clusters it generates leave it out (the workspace default).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.common import gpu_node
from dbx_ai_infra.policies.rule import Rule


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    attributes = view.props.get("aws_attributes")
    zone = attributes.get("zone_id") if isinstance(attributes, Mapping) else None
    if not isinstance(zone, str) or not zone or zone.lower() == "auto":
        return []
    if not any(gpu_node(n) for n in view.node_type_ids):
        return []  # a CPU cluster: capacity is rarely the limit
    return [f"aws_attributes.zone_id pins this GPU cluster to {zone}: when that zone has no "
            f"{', '.join(view.node_type_ids)} capacity the cluster cannot start, though other zones of the region "
            f"may have it. Fix: set aws_attributes.zone_id to auto (Databricks picks a zone when the cluster starts)."]


RULE = Rule(
    name="databricks-cluster-prefer-auto-zone",
    order=260,
    description="GPU clusters on AWS should set aws_attributes.zone_id to auto rather than pin one zone.",
    details=("GPU capacity differs by zone: a pinned cluster cannot start when its zone has none while other zones do."
             " The generated clusters never pin a zone, so only exports are judged."),
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    remediation="Set aws_attributes.zone_id to auto.",
    severity="medium",
    stack_fields=(),
    # what runs in a workspace: the clusters this project generates never pin a zone
    sources=("api",),
)
