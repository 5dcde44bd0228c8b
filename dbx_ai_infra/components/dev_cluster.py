"""DevCluster: one GPU node for notebooks, 30-minute auto-termination, model cache on a Volume."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from dbx_ai_infra.dbxtypes.vocabulary import (
    DEV_CLUSTER_TYPE,
    HF_HOME_ENV,
    SHUFFLE_PARTITIONS_KEY,
)

from ._common import ClusterBaseArgs, child_options, cluster_settings, create_cluster, group_access, holder, permissions


@dataclass(frozen=True, kw_only=True)
class DevClusterArgs(ClusterBaseArgs):
    shuffle_partitions: int
    #: /Volumes/... directory for Hugging Face downloads (HF_HOME); never /dbfs.
    model_cache_dir: str

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.model_cache_dir.startswith("/Volumes/"):
            raise ValueError(f"model_cache_dir must be a /Volumes/... path, got {self.model_cache_dir!r}")


class DevCluster(pulumi.ComponentResource):
    """A single-node, on-demand GPU cluster for interactive work."""

    cluster_id: pulumi.Output[str]

    def __init__(self, name: str, args: DevClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(DEV_CLUSTER_TYPE, name, None, opts)
        # one node by ``is_single_node`` (with kind CLASSIC_PREVIEW: Databricks sets the single-node Spark settings and
        # tag itself; provider docs, resources/cluster.md, "single node cluster"). The legacy settings
        # (spark.databricks.cluster.profile singleNode, spark.master local[*], ResourceClass SingleNode) are not sent:
        # the API refuses the profile beside an access mode ("spark.databricks.cluster.profile is not allowed when
        # choosing an access mode", databricks/databricks-sdk-py issue 881).
        settings = cluster_settings(
            args, "interactive", availability="on_demand", first_on_demand=1,
            spark_conf={SHUFFLE_PARTITIONS_KEY: str(args.shuffle_partitions)})
        settings["is_single_node"] = True
        settings["spark_env_vars"].setdefault(HF_HOME_ENV, args.model_cache_dir)
        if args.dedicated_group:
            settings.update(group_access(args.dedicated_group))
        cluster = create_cluster(name, settings, child_options(self, opts), num_workers=0,
                                      autotermination_minutes=args.autotermination_minutes)
        self.cluster_id = cluster.id
        # the dev cluster's single user may start and restart it without being an admin
        permissions(f"{name}-cluster", {"cluster_id": cluster.id}, [(holder(args), "CAN_RESTART")],
                    child_options(self, opts), args.cluster_access)
        self.register_outputs({"cluster_id": self.cluster_id})
