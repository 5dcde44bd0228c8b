"""Serverless spend is attributable: a serverless GPU job or a serving endpoint carries a usage (budget) policy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.serverless import serverless_gpu_tasks, usage_policy
from dbx_ai_infra.dbxtypes.vocabulary import ENDPOINT_TYPES, JOB
from dbx_ai_infra.policies.rule import ResourceView, Rule


def check(view: ResourceView, config: Mapping[str, Any]) -> list[str]:
    """A serverless GPU job (a job with a task on ``compute.hardware_accelerator`` or an ``ai_runtime_task``) or an
    endpoint without ``budget_policy_id`` (``usage_policy_id``): its serverless usage lands on no policy."""
    if view.resource_type == JOB:
        if not serverless_gpu_tasks(view.props):
            return []
        what = "this serverless GPU job"
    else:  # a serving endpoint (its resource types are a job's and the endpoints')
        what = "this serving endpoint"
    if usage_policy(view.props) is not None:
        return []
    return [f"{what} carries no serverless usage (budget) policy, so its serverless spend is attributed to no team "
            f"or budget. Fix: set dbx-ai-infra:usage_policy_id (the stack's usage policy; budget_policy_id on the "
            f"resource)."]


RULE = Rule(
    name="databricks-serverless-require-usage-policy",
    order=300,
    description="Serverless GPU jobs and serving endpoints must carry a serverless usage (budget) policy, so their "
                "spend is attributable.",
    details=("A serverless GPU job is one with a task on `compute.hardware_accelerator` or an `ai_runtime_task`; the "
             "endpoints are GPU and provisioned-throughput ones. The policy is `budget_policy_id` (the stack's "
             "`dbx-ai-infra:usage_policy_id`). The shipped production stacks make it mandatory in their own "
             "`dbx-ai-infra:policy` section."),
    enforcement="advisory",
    resource_types=(JOB, *ENDPOINT_TYPES),
    check=check,
    takes=(ResourceView,),
    stack_fields=("usage_policy_id",),
    remediation="Set budget_policy_id (stack: dbx-ai-infra:usage_policy_id) on serverless GPU jobs and serving "
                "endpoints.",
    severity="medium",
)
