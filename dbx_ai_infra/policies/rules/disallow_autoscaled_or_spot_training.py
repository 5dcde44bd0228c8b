"""Training runs on a fixed-size cluster with an on-demand fallback."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape, as_mapping
from dbx_ai_infra.dbxtypes.vocabulary import ATTRIBUTES_BLOCK, CLUSTER, JOB, SPOT_WITH_FALLBACK, SPOT_WITHOUT_FALLBACK
from dbx_ai_infra.policies.common import ROLE_READS
from dbx_ai_infra.policies.rule import Rule


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    if view.role != "training":
        return []
    out = []
    if view.autoscale is not None:
        scale = as_mapping(view.props.get("autoscale"))
        out.append(
            f"{view.role_subject()} is autoscaled (min_workers {scale.get('min_workers', 0)}, max_workers "
            f"{scale.get('max_workers', '?')}): distributed training needs a fixed world size, and a downscale kills "
            f"the run. Fix: remove autoscale and set num_workers."
        )
    if not view.pool_backed:  # pool-backed: the pool decides availability
        for cloud in view.effective_clouds:
            avail = view.availability_in(cloud)
            if avail == SPOT_WITHOUT_FALLBACK[cloud]:
                key = ATTRIBUTES_BLOCK[cloud]
                out.append(
                    f"{view.role_subject()} uses {key}.availability {avail}: spot capacity with no on-demand "
                    f"fallback, so a reclaim stops the run and it cannot get nodes back. "
                    f"Fix: set {key}.availability to {SPOT_WITH_FALLBACK[cloud]}."
                )
    return out


RULE = Rule(
    name="databricks-cluster-disallow-autoscaled-or-spot-training",
    order=30,
    description=("Training clusters must have a fixed number of workers and must not run on spot capacity without "
                 "fallback."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('spot', 'first_on_demand', 'num_workers'),
    remediation="Replace autoscale with num_workers and use a spot-with-fallback or on-demand availability.",
    severity="high",
    reads=ROLE_READS,
    concerns=lambda view: view.gpu,
)
