"""A GPU serving endpoint of a production stack must not scale to zero: a GPU cold start takes minutes."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from dbx_ai_infra.dbxtypes.endpoint import endpoint_tags, served_entities
from dbx_ai_infra.dbxtypes.vocabulary import MODEL_SERVING_ENDPOINT, STACK_TAG
from dbx_ai_infra.policies.rule import ResourceView, Rule, Thresholds

#: The shipped production stacks; a policy config names a project's own (``production_stacks``).
DEFAULT_PRODUCTION_STACKS = ("prod", "azure-prod")


def check(view: ResourceView, config: Settings) -> list[str]:
    props = view.props
    stack = endpoint_tags(props).get(STACK_TAG)
    if stack not in config.production_stacks:
        return []
    out = []
    for i, entity in enumerate(served_entities(props)):
        gpu = str(entity.get("workload_type", "")).startswith(("GPU", "MULTIGPU"))
        if gpu and entity.get("scale_to_zero_enabled") is True:
            out.append(f"served_entities[{i}]: scales to zero in production stack {stack}; the first request after "
                       f"an idle spell waits minutes for a GPU replica. Fix: set scale_to_zero: false (keep "
                       f"concurrency.min replicas warm), or list the stack elsewhere than production_stacks.")
    return out


class Settings(Thresholds):
    """Thresholds of databricks-serving-disallow-scale-to-zero-in-production."""

    production_stacks: Annotated[tuple[str, ...], Field(
        description="Stacks whose endpoints are production (the endpoint's dbx_stack tag).",
    )] = DEFAULT_PRODUCTION_STACKS


RULE = Rule(
    name="databricks-serving-disallow-scale-to-zero-in-production",
    order=190,
    description="GPU serving endpoints of production stacks (production_stacks in the policy config) must not "
                "scale to zero.",
    details=("An endpoint is production when its `dbx_stack` tag is one of `production_stacks`. A GPU cold start takes"
             " minutes."),
    enforcement="mandatory",
    resource_types=(MODEL_SERVING_ENDPOINT,),
    check=check,
    takes=(ResourceView,),
    reads=("config.served_entities.workload_type", "config.served_entities.scale_to_zero_enabled"),
    stack_fields=("scale_to_zero",),
    remediation="Set scale_to_zero_enabled false on GPU endpoints of production stacks.",
    settings=Settings,
)
