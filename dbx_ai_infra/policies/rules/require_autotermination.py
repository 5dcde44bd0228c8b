"""All-purpose clusters must stop by themselves when idle."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import ALL_PURPOSE, CLUSTER, MAX_AUTOTERMINATION_MINUTES
from dbx_ai_infra.policies.rule import Rule, Thresholds

#: What an absent autotermination_minutes means: the provider applies 60 to Pulumi inputs; in Clusters API JSON an
#: absent field means auto-termination is off.
ABSENT_MEANS = {"pulumi": 60, "api": 0}


def check(view: ClusterShape, config: Settings) -> list[str]:
    if view.compute_kind != ALL_PURPOSE:
        return []
    limit = config.max_autotermination_minutes
    value = view.autotermination_minutes
    absent = value is None
    if value is None:
        value = ABSENT_MEANS.get(view.source, 60)
    if value == 0:
        if view.role == "inference":
            return []  # a serving cluster keeps its on-demand base up; idle workers go by autoscaling
        why = "is absent, so the cluster never terminates" if absent else "is 0, so the cluster never terminates"
        return [f"all-purpose cluster autotermination_minutes {why} and idle {'GPUs' if view.gpu else 'nodes'} keep "
                "billing. "
                f"Fix: set autotermination_minutes between 10 and {limit}."]
    if value > limit:
        return [f"all-purpose cluster autotermination_minutes is {value}, above the limit of {limit}. "
                f"Fix: set autotermination_minutes to at most {limit}."]
    return []


class Settings(Thresholds):
    """Thresholds of databricks-cluster-require-autotermination."""

    max_autotermination_minutes: Annotated[int, Field(
        ge=10, description="Longest idle period, in minutes, before an all-purpose cluster must terminate.")] \
        = MAX_AUTOTERMINATION_MINUTES


RULE = Rule(
    name="databricks-cluster-require-autotermination",
    order=100,
    description=("All-purpose clusters must terminate automatically after an idle period no longer than the configured "
                 "limit; an inference cluster may never terminate (0), keeping its on-demand base up."),
    enforcement="mandatory",
    resource_types=(CLUSTER,),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('autotermination_minutes',),
    remediation="Set autotermination_minutes to a value between 10 and max_autotermination_minutes.",
    severity="high",
    settings=Settings,
    reads=("autotermination_minutes",),
    concerns=lambda view: view.compute_kind == ALL_PURPOSE,
)
