"""An autoscale block states both of its bounds.

``autoscale`` takes ``min_workers`` and ``max_workers`` (Clusters API ``AutoScale``; the provider's ``autoscale``
block, both Optional in its schema, databricks-sdk ``compute.AutoScale``, read 2026-12-05). With one left out, the
size the cluster starts at or grows to is whatever the workspace fills in, not what the configuration says, and the
rules that judge the on-demand base (inference) or the worker cap cannot judge it: this one fails closed. Peers flag
the same (KICS, "Databricks Autoscale Badly Setup").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.rule import Rule


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    block = view.props.get("autoscale")
    if not isinstance(block, Mapping):
        return []
    missing = [k for k in ("min_workers", "max_workers") if block.get(k) is None]
    if not missing:
        return []
    return [f"autoscale sets no {' and no '.join(missing)}: the workspace chooses that bound, and the worker cap and "
            "the on-demand base cannot be judged. Fix: set both autoscale.min_workers and autoscale.max_workers "
            "(or a fixed num_workers)."]


RULE = Rule(
    name="databricks-cluster-require-complete-autoscale-bounds",
    order=50,
    description="An autoscale block must set both min_workers and max_workers.",
    details=("With one left out the workspace chooses that bound, and the worker cap and the on-demand base cannot be "
             "judged (fails closed)."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=("min_workers", "max_workers"),
    remediation="Set autoscale.min_workers and autoscale.max_workers, or a fixed num_workers.",
    severity="medium",
)
