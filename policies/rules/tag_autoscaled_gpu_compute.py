"""An untagged autoscaled all-purpose GPU cluster whose base can run on spot: say the risk, ask for the role tag.

Autoscaling alone does not tell a serving cluster (`dbxtypes.shape.classify`): such a cluster may be a multi-node
fine-tuning or batch cluster. But if it does serve a model, a spot reclaim of its base takes it below its minimum,
which is the seed's main mistake. Without the ``workload_type`` tag the audit cannot tell, so it says so, once,
advisory, instead of judging it by a role it guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbxtypes.shape import ClusterShape
from dbxtypes.vocabulary import ALL_PURPOSE, CLUSTER, ON_DEMAND, ROLE_TAG, UNKNOWN_ROLE, on_demand_base
from policies.rule import Rule, View


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    if not isinstance(view, ClusterShape) or view.role != UNKNOWN_ROLE or not view.gpu or view.autoscale is None:
        return []
    if view.compute_kind != ALL_PURPOSE or view.pool_backed:
        return []
    needed = on_demand_base(view.min_workers)
    for cloud in view.effective_clouds:
        if view.availability_in(cloud) == ON_DEMAND[cloud]:
            continue
        fod = view.first_on_demand_in(cloud)
        if fod < needed:
            return [f"autoscaled GPU cluster with no {ROLE_TAG} tag keeps {fod} of its {needed} base nodes on demand "
                    f"(driver and {view.min_workers} minimum workers): if it serves a model, a spot reclaim takes it "
                    f"below its minimum. Fix: tag it {ROLE_TAG}=inference and keep first_on_demand at least "
                    f"{needed}, or tag it with its role (training, interactive)."]
    return []


RULE = Rule(
    name="databricks-cluster-tag-autoscaled-gpu-compute",
    description=("An autoscaled all-purpose GPU cluster without a workload_type tag whose base can run on spot "
                 "should say its role, so that a serving cluster is judged as one."),
    enforcement="advisory",
    resource_types=(CLUSTER,),
    check=check,
    remediation="Tag the cluster workload_type; an inference cluster keeps its driver and minimum workers on demand.",
    severity="medium",
    sources=("api",),
)
