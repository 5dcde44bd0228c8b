"""Worker counts must be consistent and below the team's cap."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from dbx_ai_infra.dbxtypes.shape import ClusterShape, as_number
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB, MAX_WORKERS_CAP, autoscale_max_floor, autoscale_range_problem
from dbx_ai_infra.policies.rule import Rule, Thresholds


def check(view: ClusterShape, config: Settings) -> list[str]:
    cap = config.max_workers_cap
    num_workers = as_number(view.props.get("num_workers"))
    out = []
    bounds: list[tuple[str, Any]] = []
    if view.autoscale is not None:
        scale = view.props["autoscale"]
        low, high = as_number(scale.get("min_workers")), as_number(scale.get("max_workers"))
        if num_workers is not None and num_workers > 0:
            out.append(
                f"both num_workers ({num_workers}) and autoscale are set; Databricks takes one or the other and "
                f"resizes can pin the cluster to num_workers. Fix: keep autoscale and remove num_workers, or remove "
                f"autoscale for a fixed size."
            )
        if low is not None and high is not None and (problem := autoscale_range_problem(low, high)):
            out.append(f"{problem}. Fix: use num_workers {low} for a fixed size, or raise max_workers to at least "
                       f"{autoscale_max_floor(low)}.")
        bounds.append(("autoscale.max_workers", high))
    bounds.append(("num_workers", num_workers))
    for field, value in bounds:
        if value is not None and value > cap:
            out.append(
                f"{field} is {value}, above the cap of {cap} workers (max_workers_cap). "
                f"Fix: set {field} to at most {cap}, or raise max_workers_cap in the policy config."
            )
    return out


class Settings(Thresholds):
    """Thresholds of databricks-cluster-configure-worker-bounds."""

    max_workers_cap: Annotated[int, Field(ge=1, description="Largest num_workers or autoscale.max_workers allowed.")] \
        = MAX_WORKERS_CAP


RULE = Rule(
    name="databricks-cluster-configure-worker-bounds",
    order=40,
    description=("Clusters must set either num_workers or autoscale, with max_workers above min_workers (the API "
                 "refuses an equal pair) and no more workers than the configured cap."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('num_workers', 'min_workers', 'max_workers'),
    remediation="Choose num_workers or autoscale, keep max_workers above min_workers and stay within max_workers_cap.",
    severity="high",
    settings=Settings,
    reads=("num_workers", "autoscale"),
)
