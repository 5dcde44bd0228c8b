"""What every cluster component shares: cloud attribute blocks, tags, and the cluster settings dict.

The settings dict uses pulumi-databricks' snake_case input names; the same dict feeds a
``databricks.Cluster`` and a job's ``new_cluster``, so a training job cluster cannot drift from the
training cluster it mirrors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.clouds import profile
from dbx_ai_infra.dbxtypes.vocabulary import (
    ATTRIBUTES_BLOCK,
    GPU_MEMORY_NEED_TAG,
    ON_DEMAND,
    ROLE_TAG,
    SPOT_WITH_FALLBACK,
    STACK_TAG,
    WORKLOAD_TAG,
    is_application_id,
    strongest_level,
)

Availability = Literal["spot_with_fallback", "on_demand"]

AVAILABILITY: dict[str, dict[str, str]] = {
    cloud: {"spot_with_fallback": SPOT_WITH_FALLBACK[cloud], "on_demand": ON_DEMAND[cloud]}
    for cloud in ATTRIBUTES_BLOCK
}



@dataclass(frozen=True, kw_only=True)
class AccessArgs:
    """One principal and a permission level on a workspace object: exactly one of ``group_name``, ``user_name``,
    ``service_principal_name`` (the Permissions API's names)."""

    permission_level: str
    group_name: str | None = None
    user_name: str | None = None
    service_principal_name: str | None = None

    def __post_init__(self) -> None:
        if sum(v is not None for v in (self.group_name, self.user_name, self.service_principal_name)) != 1:
            raise ValueError("an access control names exactly one of group_name, user_name, service_principal_name")

    def entry(self) -> tuple[dict[str, str], str]:
        who = {k: v for k, v in (("group_name", self.group_name), ("user_name", self.user_name),
                                 ("service_principal_name", self.service_principal_name)) if v is not None}
        return who, self.permission_level


@dataclass(frozen=True, kw_only=True)
class ClusterBaseArgs:
    """Settings every cluster component takes. The stack spec holds the defaults; none are repeated here."""

    cloud: str
    spark_version: str
    node_type_id: str
    single_user_name: str
    tags: Mapping[str, str]
    autotermination_minutes: int
    libraries: Sequence[str] = ()
    spark_env_vars: Mapping[str, str] = field(default_factory=dict)
    #: Instance pool for driver and workers; the pool then sets node type and (on-demand) availability.
    instance_pool_id: pulumi.Input[str] | None = None
    #: The model's estimated GPU memory need (GB), carried as a tag so policies can check the node.
    gpu_memory_need_gb: float | None = None
    #: Workspace cluster policy the cluster is created under.
    policy_id: pulumi.Input[str] | None = None
    #: A CPU driver node type (None: the driver is a node of ``node_type_id``, or of the pool). Not with
    #: ``instance_pool_id``: a cluster on a pool takes its driver from the pool (the provider sends no
    #: driver_node_type_id beside an instance_pool_id: terraform-provider-databricks, ModifyRequestOnInstancePool).
    driver_node_type_id: str | None = None
    #: Init scripts on Unity Catalog Volumes (``/Volumes/...``), run on every node at start, in order.
    init_scripts: Sequence[str] = ()
    #: The groups that use the workload (the stack's ``cluster_policies.can_use`` of its section): they may manage
    #: the runs of its job. Its dedicated clusters admit only their single user (or group).
    user_groups: Sequence[str] = ()
    #: The group the all-purpose clusters are dedicated to (Databricks dedicated group access), instead of
    #: ``single_user_name``; a job cluster keeps ``single_user_name``, its run_as identity.
    dedicated_group: str | None = None
    #: More access to each of the workload's clusters, beyond its single user's CAN_RESTART.
    cluster_access: Sequence[AccessArgs] = ()
    #: The stack, carried as tag ``dbx_stack``: with ``workload_type`` it names the stack workload a cluster (or a job
    #: run's cluster, whose name Databricks makes up) belongs to, for matching telemetry to the stack.
    stack: str | None = None
    #: The stack workload (its name), carried as tag ``dbx_workload``: several workloads may share a role, and advise
    #: matches each run (a job run's cluster too) to its workload by it.
    workload: str | None = None

    def __post_init__(self) -> None:
        if self.cloud not in AVAILABILITY:
            raise ValueError(f"cloud must be one of {', '.join(AVAILABILITY)}, got {self.cloud!r}")
        if self.instance_pool_id is not None and self.driver_node_type_id is not None:
            raise ValueError("driver_node_type_id with instance_pool_id: a cluster on a pool takes its driver from "
                             "the pool (the provider drops driver_node_type_id beside an instance_pool_id)")


#: The current access-mode names (issue 52 item 11), which every cluster the stack makes, and every job cluster,
#: is created with. ``kind = CLASSIC_PREVIEW`` is what admits them: with it ``data_security_mode`` takes
#: DATA_SECURITY_MODE_DEDICATED ("Alias for SINGLE_USER"), ``single_user_name`` a user *or a group*, and
#: ``use_ml_runtime`` / ``is_single_node`` replace the runtime name's ``-ml`` and the single-node Spark settings
#: (Terraform provider docs, resources/cluster.md, ``kind``, ``data_security_mode``, ``single_user_name``,
#: ``use_ml_runtime``, ``is_single_node``; databricks-sdk compute.Kind: "By using the simple form, your clusters are
#: automatically using kind = CLASSIC_PREVIEW"; compute.DataSecurityMode: "SINGLE_USER: Legacy alias for
#: DATA_SECURITY_MODE_DEDICATED"; pulumi-databricks 1.118 ClusterArgs and JobJobClusterNewClusterArgs take all four).
#: The provider suppresses the diff from SINGLE_USER to DATA_SECURITY_MODE_DEDICATED (clusters/resource_cluster.go,
#: DataSecurityModeDiffSuppressFunc), so a cluster deployed with the legacy name is not replaced for the new one.
CLASSIC_PREVIEW = "CLASSIC_PREVIEW"
DEDICATED = "DATA_SECURITY_MODE_DEDICATED"


def group_access(group: str) -> dict[str, Any]:
    """The settings of a cluster dedicated to ``group``: every member can attach, with the group's permissions
    (Databricks docs, "Dedicated group access", docs.databricks.com/compute/group-access: runtime 15.4 or later; the
    group named in ``single_user_name``, which takes a group with ``kind``: provider docs, resources/cluster.md)."""
    return {"single_user_name": group}


def holder(args: ClusterBaseArgs) -> dict[str, str]:
    """Who an all-purpose cluster is dedicated to, as an access control names them: its group, or its single user."""
    return {"group_name": args.dedicated_group} if args.dedicated_group else identity(args.single_user_name)


def cloud_attributes(cloud: str, availability: Availability, first_on_demand: int) -> dict[str, Any]:
    """The one attributes block of ``cloud`` (never another cloud's)."""
    rules = profile(cloud)
    block: dict[str, Any] = {"availability": AVAILABILITY[cloud][availability], "first_on_demand": first_on_demand,
                             **rules.spot_bid}  # the price cap the cloud's profile states
    return {rules.attributes_block: block}


def child_options(component: pulumi.Resource, opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions:
    """A component's child's options: parented to the component, and waiting for what the component was told to wait
    for. Pulumi hands a child its parent's provider and protection, not its ``depends_on``; a cluster must wait for
    the Volumes, grants and init script it reads (the provider waits for it to run, and deletes it if its init
    script cannot be read)."""
    return pulumi.ResourceOptions(parent=component, depends_on=opts.depends_on if opts is not None else None)


def identity(name: str) -> dict[str, str]:
    """How an access control or a ``run_as`` names a user or a service principal: a service principal by its
    application id (a UUID), a user by user name."""
    return {"service_principal_name": name} if is_application_id(name) else {"user_name": name}


def permissions(name: str, target: Mapping[str, Any], entries: Sequence[tuple[dict[str, str], str]],
                opts: pulumi.ResourceOptions, extra: Sequence[AccessArgs] = ()) -> databricks.Permissions | None:
    """A ``databricks.Permissions`` on one workspace object (``target``: ``{"cluster_id": ...}``), one access control
    per principal; None when there is nobody to name. Databricks gives the creator (the deployer) CAN_MANAGE
    of what it creates; the people the stack is for need their own (Permissions API: clusters take CAN_ATTACH_TO,
    CAN_RESTART, CAN_MANAGE; jobs CAN_VIEW, CAN_MANAGE_RUN, IS_OWNER, CAN_MANAGE; instance pools CAN_ATTACH_TO,
    CAN_MANAGE; serving endpoints CAN_VIEW, CAN_QUERY, CAN_MANAGE; pulumi-databricks 1.118.0 Permissions docs).
    ``extra`` (the stack's ``permissions`` section) comes after ``entries``; a principal named twice keeps the stronger
    level (`strongest_level`): the API keeps one level per principal, so a second entry would never settle."""
    by_principal: dict[tuple[tuple[str, str], ...], tuple[dict[str, str], str]] = {}
    for who, level in [*entries, *(a.entry() for a in extra)]:
        key = tuple(sorted(who.items()))
        held = by_principal.get(key)
        by_principal[key] = (who, strongest_level(held[1], level) if held else level)
    controls = [databricks.PermissionsAccessControlArgs(**who, permission_level=level)
                for who, level in by_principal.values()]
    if not controls:
        return None
    return databricks.Permissions(f"{name}-permissions", access_controls=controls, **target, opts=opts)


def create_cluster(name: str, settings: Mapping[str, Any], opts: pulumi.ResourceOptions,
                        **more: Any) -> databricks.Cluster:
    """An all-purpose ``databricks.Cluster`` named ``name`` (its resource ``<name>-cluster``) from ``settings``.
    ``no_wait``: the provider returns once the cluster is created, instead of waiting for it to run and for its
    libraries to install (pulumi-databricks 1.118 ``ClusterArgs.no_wait``; Terraform provider databricks_cluster
    ``no_wait``), so a GPU capacity error or a slow library install on one cluster does not fail the deployment,
    and ``pulumi up`` does not hold GPUs running while it creates the rest."""
    return databricks.Cluster(f"{name}-cluster", cluster_name=name, no_wait=True, **more, **settings, opts=opts)


def pool_attributes(cloud: str) -> dict[str, Any]:
    """Pools are on-demand: a pool-backed cluster takes its availability from the pool."""
    rules = profile(cloud)
    return {rules.attributes_block: {rules.pool_availability_field: rules.on_demand}}


def role_tags(tags: Mapping[str, str], role: str, gpu_memory_need_gb: float | None = None,
              extra: Mapping[str, str] | None = None) -> dict[str, str]:
    merged = {**tags, ROLE_TAG: role, **(extra or {})}
    if gpu_memory_need_gb is not None:
        merged[GPU_MEMORY_NEED_TAG] = f"{gpu_memory_need_gb:g}"
    return merged


def cluster_settings(args: ClusterBaseArgs, role: str, *, availability: Availability, first_on_demand: int,
                     spark_conf: Mapping[str, str] | None = None,
                     extra_tags: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Inputs shared by an all-purpose cluster and a job cluster (no auto-termination, no name)."""
    settings: dict[str, Any] = {
        "spark_version": args.spark_version,
        # dedicated access, by its current name (see CLASSIC_PREVIEW): the ML runtime and GPUs run in dedicated access
        # only (standard access runs neither), and Unity Catalog Volumes are read as the single user or group
        "kind": CLASSIC_PREVIEW,
        "data_security_mode": DEDICATED,
        "use_ml_runtime": True,
        "single_user_name": args.single_user_name,
        "custom_tags": role_tags(args.tags, role, args.gpu_memory_need_gb,
                                 {**({STACK_TAG: args.stack} if args.stack else {}),
                                  **({WORKLOAD_TAG: args.workload} if args.workload else {}), **(extra_tags or {})}),
        "spark_conf": dict(spark_conf or {}),
        "spark_env_vars": dict(args.spark_env_vars),
    }
    if args.libraries:
        settings["libraries"] = [{"pypi": {"package": lib}} for lib in args.libraries]
    if args.init_scripts:
        settings["init_scripts"] = [{"volumes": {"destination": path}} for path in args.init_scripts]
    if args.policy_id is not None:
        settings["policy_id"] = args.policy_id
    if args.instance_pool_id is not None:
        settings["instance_pool_id"] = args.instance_pool_id
        settings["driver_instance_pool_id"] = args.instance_pool_id
    else:
        settings["node_type_id"] = args.node_type_id
        settings["driver_node_type_id"] = args.driver_node_type_id or args.node_type_id
        settings.update(cloud_attributes(args.cloud, availability, first_on_demand))
    return settings
