"""GpuInstancePool: warm, on-demand GPU nodes with the runtime preloaded, for fast cluster starts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.vocabulary import INSTANCE_POOL_TYPE, WORKLOAD_TAG

from ._common import AccessArgs, identity, permissions, pool_attributes, role_tags


@dataclass(frozen=True, kw_only=True)
class GpuInstancePoolArgs:
    cloud: str
    node_type_id: str
    spark_version: str
    tags: Mapping[str, str]
    #: The workload the pool serves (training | inference | interactive), tagged for policies and costs.
    role: str
    min_idle_instances: int
    idle_instance_autotermination_minutes: int
    max_capacity: int | None = None
    #: The groups that create clusters on the pool (its workload's ``cluster_policies.can_use``): CAN_ATTACH_TO.
    user_groups: tuple[str, ...] = ()
    #: The identities its workload's clusters and job run as (users, or service principals by application id):
    #: CAN_ATTACH_TO, which a job cluster on the pool needs of its run_as identity (a policy that pins the pool
    #: makes the job cluster draw from it).
    identities: tuple[str, ...] = ()
    #: More access to the pool (the stack's ``permissions.<workload>.pool``).
    access: Sequence[AccessArgs] = ()
    #: The stack workload the pool serves (its name), tagged ``dbx_workload``: its idle hours may be its own.
    workload: str | None = None


class GpuInstancePool(pulumi.ComponentResource):
    """An on-demand instance pool. Clusters on it set ``instance_pool_id`` and never ``node_type_id``."""

    pool_id: pulumi.Output[str]

    def __init__(self, name: str, args: GpuInstancePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(INSTANCE_POOL_TYPE, name, None, opts)
        attributes: dict[str, Any] = pool_attributes(args.cloud)
        pool = databricks.InstancePool(
            f"{name}-pool", instance_pool_name=name, node_type_id=args.node_type_id,
            min_idle_instances=args.min_idle_instances,
            idle_instance_autotermination_minutes=args.idle_instance_autotermination_minutes,
            preloaded_spark_versions=[args.spark_version], custom_tags=role_tags(
                args.tags, args.role, extra={WORKLOAD_TAG: args.workload} if args.workload else None),
            max_capacity=args.max_capacity, **attributes, opts=pulumi.ResourceOptions(parent=self))
        permissions(f"{name}-pool", {"instance_pool_id": pool.id},
                    [*(({"group_name": g}, "CAN_ATTACH_TO") for g in args.user_groups),
                     *((identity(i), "CAN_ATTACH_TO") for i in args.identities)],
                    pulumi.ResourceOptions(parent=self), args.access)
        self.pool_id = pool.id
        self.register_outputs({"pool_id": self.pool_id})
