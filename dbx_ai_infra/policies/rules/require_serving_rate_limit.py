"""A serving endpoint should limit how often one user may call it (AI Gateway rate limit)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.endpoint import gateway
from dbx_ai_infra.dbxtypes.shape import as_list
from dbx_ai_infra.dbxtypes.vocabulary import ENDPOINT_TYPES
from dbx_ai_infra.policies.rule import ResourceView, Rule


def check(view: ResourceView, config: Mapping[str, Any]) -> list[str]:
    props = view.props
    if as_list(gateway(props).get("rate_limits")) or as_list(props.get("rate_limits")):
        return []
    return ["the endpoint has no rate limit: one caller in a loop can hold every GPU replica. Fix: set an AI Gateway "
            "rate limit per user (stack: rate_limit_per_user_per_minute)."]


RULE = Rule(
    name="databricks-serving-require-rate-limit",
    order=290,
    description="Serving endpoints should set an AI Gateway rate limit.",
    enforcement="advisory",
    resource_types=ENDPOINT_TYPES,
    check=check,
    takes=(ResourceView,),
    stack_fields=("rate_limit_per_user_per_minute",),
    remediation="Add ai_gateway.rate_limits with key user and renewal_period minute.",
    severity="medium",
)
