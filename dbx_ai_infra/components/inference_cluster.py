"""InferenceCluster: autoscaled, on-demand base (driver + min_workers), spot with fallback above it."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from dbx_ai_infra.dbxtypes.vocabulary import (
    INFERENCE_CLUSTER_TYPE,
    MAX_SCALE_DOWN_SECONDS,
    SCALE_DOWN_WINDOW_KEY,
    autoscale_range_problem,
    on_demand_base,
)

from ._common import (
    Availability,
    ClusterBaseArgs,
    child_options,
    cluster_settings,
    create_cluster,
    group_access,
    holder,
    permissions,
)


@dataclass(frozen=True, kw_only=True)
class InferenceClusterArgs(ClusterBaseArgs):
    min_workers: int
    max_workers: int
    #: Workers above the base on spot with fallback; False keeps every node on-demand.
    spot_above_base: bool
    #: Optimized autoscaling's scale-down window (spark.databricks.aggressiveWindowDownS = minutes x 60).
    scale_down_minutes: int

    def __post_init__(self) -> None:
        super().__post_init__()
        problem = "min_workers must be at least 1" if self.min_workers < 1 else \
            autoscale_range_problem(self.min_workers, self.max_workers)
        if problem:
            raise ValueError(f"{problem}, got min_workers {self.min_workers} and max_workers {self.max_workers}")
        if not 1 <= self.scale_down_minutes * 60 <= MAX_SCALE_DOWN_SECONDS:
            raise ValueError(f"scale_down_minutes must be 1..{MAX_SCALE_DOWN_SECONDS // 60}, "
                             f"got {self.scale_down_minutes}")


class InferenceCluster(pulumi.ComponentResource):
    """An autoscaled GPU cluster for Spark batch and streaming inference whose base never runs on spot. Databricks
    autoscaling follows Spark's task backlog, not HTTP requests: online per-request serving belongs on a Model
    Serving endpoint (`ServingEndpoint`). Idle workers are released down to the base every ``scale_down_minutes``
    (optimized autoscaling, ``spark.databricks.aggressiveWindowDownS``, at most 600 s; the stack's default is the
    slowest, see the README); ``autotermination_minutes`` 0 keeps the base up."""

    cluster_id: pulumi.Output[str]

    def __init__(self, name: str, args: InferenceClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(INFERENCE_CLUSTER_TYPE, name, None, opts)
        availability: Availability = "spot_with_fallback" if args.spot_above_base else "on_demand"
        # first_on_demand counts the driver: the base is the driver plus min_workers workers.
        settings = cluster_settings(args, "inference", availability=availability,
                                    first_on_demand=on_demand_base(args.min_workers),
                                    spark_conf={SCALE_DOWN_WINDOW_KEY: str(args.scale_down_minutes * 60)})
        if args.dedicated_group:
            settings.update(group_access(args.dedicated_group))
        cluster = create_cluster(
            name, settings, child_options(self, opts), autotermination_minutes=args.autotermination_minutes,
            autoscale={"min_workers": args.min_workers, "max_workers": args.max_workers})
        self.cluster_id = cluster.id
        permissions(f"{name}-cluster", {"cluster_id": cluster.id}, [(holder(args), "CAN_RESTART")],
                    child_options(self, opts), args.cluster_access)
        self.register_outputs({"cluster_id": self.cluster_id})
