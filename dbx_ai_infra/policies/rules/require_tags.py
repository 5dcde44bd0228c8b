"""Every cluster and instance pool carries the tags that cost reports group by."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.endpoint import endpoint_tags
from dbx_ai_infra.dbxtypes.serverless import serverless_gpu_tasks
from dbx_ai_infra.dbxtypes.shape import ClusterShape, PoolShape, as_mapping, is_set
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, ENDPOINT_TYPES, INSTANCE_POOL, JOB, REQUIRED_TAGS
from dbx_ai_infra.policies.rule import ResourceView, Rule, View


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    tags: Mapping[str, Any]
    if isinstance(view, ClusterShape):
        tags, what = view.tags, "cluster"
    elif isinstance(view, PoolShape):
        tags, what = view.custom_tags, "instance pool"
    elif isinstance(view, ResourceView) and view.resource_type in ENDPOINT_TYPES:
        tags, what = endpoint_tags(view.props), "serving endpoint"
    elif isinstance(view, ResourceView) and view.resource_type == JOB and serverless_gpu_tasks(view.props):
        tags, what = as_mapping(view.props.get("tags")), "serverless GPU job"  # no cluster of its own to tag
    else:
        return []
    missing = [t for t in REQUIRED_TAGS if not (is_set(tags.get(t)) and str(tags.get(t)).strip())]
    if not missing:
        return []
    return [f"{what} lacks the required custom tag(s) {', '.join(missing)}, so its cost cannot be attributed. "
            f"Fix: add custom_tags {', '.join(f'{t}=<value>' for t in missing)}."]


RULE = Rule(
    name="databricks-resource-require-tags",
    order=120,
    description="Clusters, job clusters, serverless GPU jobs, instance pools and serving endpoints must carry the "
                "tags workload and cost_center.",
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB, INSTANCE_POOL, *ENDPOINT_TYPES),
    check=check,
    stack_fields=('tags',),
    remediation="Add custom_tags workload and cost_center (job-level tags count for job clusters).",
    severity="medium",
    reads=("custom_tags", "job.tags", "tags"),
    concerns=lambda view: not (isinstance(view, ResourceView) and view.resource_type == JOB),
)
