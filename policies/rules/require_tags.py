"""Every cluster and instance pool carries the tags that cost reports group by."""

from __future__ import annotations

from typing import Any, Mapping

from policies.common import custom_tags, effective_tags, is_set
from policies.rule import CLUSTER, INSTANCE_POOL, JOB, ClusterView, Rule, View

REQUIRED_TAGS = ("workload", "cost_center")


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    if isinstance(view, ClusterView):
        tags, what = effective_tags(view), "cluster"
    elif view.resource_type == INSTANCE_POOL:
        tags, what = custom_tags(view.props), "instance pool"
    else:
        return []
    missing = [t for t in REQUIRED_TAGS if not (is_set(tags.get(t)) and str(tags.get(t)).strip())]
    if not missing:
        return []
    return [f"{what} lacks the required custom tag(s) {', '.join(missing)}, so its cost cannot be attributed. "
            f"Fix: add custom_tags {', '.join(f'{t}=<value>' for t in missing)}."]


RULE = Rule(
    name="databricks-resource-require-tags",
    description="Clusters, job clusters and instance pools must carry the custom tags workload and cost_center.",
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB, INSTANCE_POOL),
    check=check,
    remediation="Add custom_tags workload and cost_center (job-level tags count for job clusters).",
    severity="medium",
)
