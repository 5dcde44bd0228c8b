"""The dbx-ai-infra Pulumi program: loads the stack spec and wires the components. Nothing else.

Runs unchanged under ``pulumi up`` and under the offline engine (``python -m stackplan preview``).
"""

import functools

import pulumi

from dbx_ai_infra.collector import script_text
from dbx_ai_infra.components import (
    AccessArgs,
    ClusterPolicies,
    ClusterPoliciesArgs,
    CodeFiles,
    CodeFilesArgs,
    DevCluster,
    DevClusterArgs,
    GpuCollector,
    GpuCollectorArgs,
    GpuInstancePool,
    GpuInstancePoolArgs,
    GrantArgs,
    InferenceCluster,
    InferenceClusterArgs,
    ProvisionedThroughputEndpoint,
    ProvisionedThroughputEndpointArgs,
    ServerlessGpuTraining,
    ServerlessGpuTrainingArgs,
    ServingEndpoint,
    ServingEndpointArgs,
    StorageCredentialArgs,
    TrainingCluster,
    TrainingClusterArgs,
    TrainingJobArgs,
    UnityCatalogStorage,
    UnityCatalogStorageArgs,
    VolumeArgs,
    create_timeout_minutes,
)
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.vocabulary import (
    CODE_RESOURCE,
    COLLECTOR_INTERVAL_ENV,
    COLLECTOR_RESOURCE,
    GPU_TIMELINE_ENV,
    HF_HOME_ENV,
    POLICY_RESOURCE,
    POOL_RESOURCE_SUFFIX,
    SERVING_RESOURCE_PREFIX,
    UC_RESOURCE,
)
from dbx_ai_infra.gpucatalog import BYTES_PER_PARAM
from dbx_ai_infra.guardrails.definitions import pin_pool, pinned_pool
from dbx_ai_infra.guardrails.stack import definitions_for_stack
from dbx_ai_infra.stackspec import load_from_pulumi
from dbx_ai_infra.stackspec.access import effective_grants
from dbx_ai_infra.stackspec.models import DevSpec, InferenceSpec, TrainingSpec
from dbx_ai_infra.stackspec.resolve import train_arguments
from dbx_ai_infra.workloads import train_script_text


def policy_limits(section: object) -> dict:
    """The limits of the stack's own policy section (`pulumi up` sees no --policy-config): its thresholds bound the
    spec and the generated workspace policies, as offline."""
    from dbx_ai_infra.policies.registry import load_policy_config

    return load_policy_config(section if isinstance(section, dict) else None,
                              "dbx-ai-infra:policy").limits()


try:
    stack = load_from_pulumi(policy_limits)
except InputError as exc:  # a clear message, before any resource is registered
    raise pulumi.RunError(str(exc)) from None

spec = stack.spec
prefix = pulumi.get_stack()
uc_spec = spec.unity_catalog

storage = UnityCatalogStorage(f"{prefix}-{UC_RESOURCE}", UnityCatalogStorageArgs(
    catalog=uc_spec.catalog,
    schemas={name: [VolumeArgs(**v.model_dump()) for v in schema.volumes] for name, schema in uc_spec.schemas.items()},
    tags=spec.tags,
    grants=[GrantArgs(**g.model_dump()) for g in effective_grants(spec)],
    storage_root=uc_spec.storage_root,
    existing_catalog=uc_spec.existing_catalog,
    existing_schemas=tuple(name for name, schema in uc_spec.schemas.items() if schema.existing),
    storage_credential=StorageCredentialArgs(**uc_spec.storage_credential.model_dump())
    if uc_spec.storage_credential else None,
    # the code Volume and its schema: only the deployer writes there, and a grant made by hand is undone
    owned_securables=(uc_spec.code_volume.split(".", 1)[0], uc_spec.code_volume),
))
model_cache_dir = storage.volume_paths[uc_spec.model_cache_volume]
pulumi.export("volume_paths", storage.volume_paths)

# The GPU collector: uploaded to the code Volume, run by every cluster as an init script (issue 14).
init_scripts: tuple[str, ...] = ()
collector_env: dict[str, str] = {}
collector_component: pulumi.Resource | None = None
#: What every cluster, job and endpoint reads, so waits for: the catalog's schemas, Volumes and grants (its model
#: cache and checkpoints; an endpoint's inference-table schema), the collector's init script and the job code. A plain
#: path string tells Pulumi nothing; a cluster whose init script or Volume is not there yet fails to start, and the
#: provider deletes a cluster that terminates while it waits for it to run.
reads: list[pulumi.Resource] = [storage]
code_dir = storage.volume_paths.get(uc_spec.code_volume)  # only the deployer writes it (README: who may touch what)
if spec.monitoring.enabled:
    assert code_dir is not None  # the spec adds the code Volume to the layout for the collector
    collector = GpuCollector(f"{prefix}-{COLLECTOR_RESOURCE}", GpuCollectorArgs(
        volume_dir=storage.volume_paths[spec.monitoring.volume], script_dir=code_dir, script=script_text()),
        opts=pulumi.ResourceOptions(depends_on=[storage]))
    init_scripts = (collector.script_path,)
    reads.append(collector)
    collector_component = collector
    collector_env = {GPU_TIMELINE_ENV: collector.timeline_dir,
                     COLLECTOR_INTERVAL_ENV: str(spec.monitoring.interval_seconds)}
    pulumi.export("gpu_timeline_dir", collector.timeline_dir)


workloads = spec.named_workloads()

# The training entry point, for each training job that names no python_file of its own: the project's
# dbx_ai_infra/workloads/train.py, on the code Volume.
job_code: dict[str, str] = {}
if any(isinstance(w.spec, TrainingSpec) and w.spec.job and w.spec.job.python_file is None for w in workloads.values()):
    assert code_dir is not None  # the spec adds the code Volume to the layout for it
    code = CodeFiles(f"{prefix}-{CODE_RESOURCE}", CodeFilesArgs(directory=code_dir,
                                                                files={"train.py": train_script_text()}),
                     opts=pulumi.ResourceOptions(depends_on=[storage]))
    job_code = code.paths
    reads.append(code)


def access_of(name: str, target: str) -> tuple[AccessArgs, ...]:
    """The stack's ``permissions.<workload>.<target>`` entries (cluster, job, pool); the role's entry by default."""
    access = spec.permissions_of(workloads[name])
    return tuple(AccessArgs(**entry.model_dump(exclude_none=True)) for entry in getattr(access, target)) \
        if access is not None else ()


def output_name(name: str, what: str) -> str:
    """An output of workload ``name`` (``chat_cluster_id``); a role section's keeps its name (``training_pool_id``)."""
    return f"{name}_{what}"


# One instance pool per workload that asks for one.
pool_ids: dict[str, pulumi.Output[str]] = {}
for name, named in workloads.items():
    pool_spec = spec.pool_of(named)
    if pool_spec is None or name not in stack.workloads:
        continue
    pool = GpuInstancePool(f"{prefix}-{name}{POOL_RESOURCE_SUFFIX}", GpuInstancePoolArgs(
        cloud=spec.cloud, node_type_id=stack.workloads[name].node.node_type_id, spark_version=spec.runtime,
        tags=spec.tags, role=named.role, **pool_spec.model_dump(),
        user_groups=tuple(spec.users_of(named)), identities=(spec.identity_of(named),), access=access_of(name, "pool"),
        workload=name))
    pool_ids[name] = pool.pool_id
    pulumi.export(output_name(name, "pool_id"), pool.pool_id)

policy_ids: dict[str, pulumi.Output[str]] = {}
if spec.cluster_policies.enabled:
    # A pool-backed workload's policy pins its pool, so it is made from the pool's id (the pool comes first).
    definitions: dict[str, pulumi.Input[dict]] = {}
    for name, definition in definitions_for_stack(stack).items():
        definitions[name] = pool_ids[name].apply(functools.partial(pin_pool, definition)) \
            if pinned_pool(definition) else definition
    policies = ClusterPolicies(f"{prefix}-{POLICY_RESOURCE}", ClusterPoliciesArgs(
        definitions=definitions,
        can_use={name: groups for name in definitions if (groups := spec.users_of(workloads[name]))},
        # the identity each workload's clusters and job run as creates its compute under the policy too
        identities={name: [spec.identity_of(workloads[name])] for name in definitions},
        max_clusters_per_user=spec.cluster_policies.max_clusters_per_user))
    policy_ids = policies.policy_ids
    pulumi.export("cluster_policy_ids", policy_ids)


def base_args(name: str) -> dict:
    """The cluster settings every workload takes from the spec (pure: no resource is created here)."""
    named, workload = workloads[name], stack.workloads[name]
    section = named.spec
    # HF_HOME on the models Volume: the DevCluster sets it itself, next to the stack's own dev env vars
    env = dict(section.spark_env_vars) if isinstance(section, DevSpec) else {HF_HOME_ENV: model_cache_dir}
    env.update(collector_env)
    return dict(cloud=spec.cloud, init_scripts=init_scripts, stack=prefix, workload=name, spark_version=spec.runtime,
                node_type_id=workload.node.node_type_id,
                single_user_name=spec.identity_of(named), tags=spec.tags,
                autotermination_minutes=section.autotermination_minutes, libraries=stack.libraries[name],
                spark_env_vars=env, instance_pool_id=pool_ids.get(name), gpu_memory_need_gb=workload.need_gb,
                policy_id=policy_ids.get(name),
                user_groups=tuple(spec.users_of(named)), cluster_access=access_of(name, "cluster"),
                dedicated_group=section.dedicated_group,
                driver_node_type_id=workload.driver.node_type_id if workload.driver else None)


# One cluster component per workload, named <stack>-<workload> (a role section's workload is named by its role).
def serverless_training(name: str, section: TrainingSpec) -> None:
    """A training workload on serverless GPU: its job, on the accelerator, with no cluster, policy or pool."""
    resolved = stack.serverless[name]
    assert section.job is not None and section.accelerator is not None and section.gpus is not None
    trained = ServerlessGpuTraining(f"{prefix}-{name}", ServerlessGpuTrainingArgs(
        accelerator=section.accelerator, gpus=section.gpus, gpus_per_node=resolved.accelerator.gpus_per_node,
        checkpoint_dir=f"{storage.volume_paths[section.checkpoint_volume]}/{prefix}-{name}",
        job=training_job_args(section, resolved.spreads_model),
        single_user_name=spec.identity_of(workloads[name]), tags=spec.tags, libraries=stack.libraries[name],
        usage_policy_id=spec.usage_policy_id, gpu_memory_need_gb=resolved.need_gb,
        user_groups=tuple(spec.users_of(workloads[name])), job_access=access_of(name, "job"), stack=prefix,
        workload=name),
        opts=pulumi.ResourceOptions(depends_on=[r for r in reads if r is not collector_component]))
    pulumi.export("checkpoint_dir" if name == "training" else output_name(name, "checkpoint_dir"),
                  trained.checkpoint_dir)
    pulumi.export(output_name(name, "job_id"), trained.job_id)


def training_job_args(section: TrainingSpec, spreads_model: bool, processes: int = 0) -> TrainingJobArgs:
    """The workload's job. One that runs the project's dbx_ai_infra/workloads/train.py is told the training method,
    the sharding and the precision (``train_arguments``) and, on a classic cluster's workers, ``--processes``: a rank
    per worker GPU, which train.py starts on the workers (TorchDistributor, local_mode false), none on the driver."""
    assert section.job is not None
    job = section.job.model_dump()
    if section.job.python_file is None:
        job["parameters"] = [*job["parameters"], *train_arguments(section, spreads_model)]
        if processes and "--processes" not in job["parameters"]:
            job["parameters"] = [*job["parameters"], "--processes", str(processes)]
    return TrainingJobArgs(**{**job, "python_file": section.job.python_file or job_code["train.py"]})


def training_job(name: str, section: TrainingSpec) -> TrainingJobArgs | None:
    """The classic workload's job (None: an all-purpose cluster alone)."""
    if section.job is None:
        return None
    sized = stack.workloads[name]
    return training_job_args(section, sized.spreads_model, section.workers * sized.node.gpu_count)


for name, named in workloads.items():
    section = named.spec
    if isinstance(section, TrainingSpec) and section.serverless:
        serverless_training(name, section)
    elif isinstance(section, TrainingSpec):
        checkpoint_dir = f"{storage.volume_paths[section.checkpoint_volume]}/{prefix}-{name}"
        training = TrainingCluster(f"{prefix}-{name}", TrainingClusterArgs(
            **base_args(name), num_workers=section.workers, spot=section.spot,
            first_on_demand=section.first_on_demand, checkpoint_dir=checkpoint_dir,
            job=training_job(name, section),
            job_access=access_of(name, "job"), all_purpose_cluster=section.makes_cluster),
            opts=pulumi.ResourceOptions(depends_on=reads))
        if training.cluster_id is not None:
            pulumi.export(output_name(name, "cluster_id"), training.cluster_id)
        pulumi.export("checkpoint_dir" if name == "training" else output_name(name, "checkpoint_dir"),
                      training.checkpoint_dir)
        if training.job_id is not None:
            pulumi.export(output_name(name, "job_id"), training.job_id)
    elif isinstance(section, InferenceSpec):
        inference = InferenceCluster(f"{prefix}-{name}", InferenceClusterArgs(
            **base_args(name), min_workers=section.min_workers, max_workers=section.max_workers,
            spot_above_base=section.spot_above_base, scale_down_minutes=section.scale_down_minutes),
            opts=pulumi.ResourceOptions(depends_on=reads))
        pulumi.export(output_name(name, "cluster_id"), inference.cluster_id)
    else:
        assert isinstance(section, DevSpec)
        dev = DevCluster(f"{prefix}-{name}", DevClusterArgs(
            **base_args(name), shuffle_partitions=section.shuffle_partitions, model_cache_dir=model_cache_dir),
            opts=pulumi.ResourceOptions(depends_on=reads))
        pulumi.export(output_name(name, "cluster_id"), dev.cluster_id)

if spec.serving is not None:
    for endpoint_name, e in spec.serving.endpoints.items():
        table = (uc_spec.catalog, spec.serving.inference_table_schema) if e.inference_table else None
        pt = e.provisioned_throughput
        if pt is not None:  # a foundation model on provisioned throughput: model units, no GPU sizing
            endpoint: ServingEndpoint | ProvisionedThroughputEndpoint = ProvisionedThroughputEndpoint(
                f"{prefix}-{SERVING_RESOURCE_PREFIX}{endpoint_name}", ProvisionedThroughputEndpointArgs(
                    endpoint_name=endpoint_name, entity=pt.entity, entity_version=pt.entity_version,
                    model_units=pt.model_units, cloud=spec.cloud, stack=prefix, tags=spec.tags,
                    inference_table=table, rate_limit_per_user_per_minute=e.rate_limit_per_user_per_minute,
                    usage_policy_id=spec.usage_policy_id, can_query=tuple(e.can_query),
                    can_manage=tuple(e.can_manage)),
                opts=pulumi.ResourceOptions(depends_on=[storage]))
            pulumi.export(f"serving_endpoint_{endpoint_name}", endpoint.endpoint_name)
            continue
        sized = stack.endpoints[endpoint_name]
        # a GPU endpoint names its entity, version and model (validated)
        assert e.entity is not None and e.entity_version is not None and e.model is not None
        endpoint = ServingEndpoint(f"{prefix}-{SERVING_RESOURCE_PREFIX}{endpoint_name}", ServingEndpointArgs(
            endpoint_name=endpoint_name, entity=e.entity, entity_version=e.entity_version,
            workload_type=sized.serving_type.workload_type, min_concurrency=e.concurrency.min,
            max_concurrency=e.concurrency.max, scale_to_zero=e.scale_to_zero, cloud=spec.cloud, stack=prefix,
            tags=spec.tags, gpu_memory_need_gb=sized.need_gb, inference_table=table,
            rate_limit_per_user_per_minute=e.rate_limit_per_user_per_minute, can_query=tuple(e.can_query),
            can_manage=tuple(e.can_manage), usage_policy_id=spec.usage_policy_id,
            create_timeout_minutes=create_timeout_minutes(e.model.params_billions * BYTES_PER_PARAM[e.model.precision]),
            # the stack's catalog: its owner, the deployer, may grant on what others register in it
            execute=(spec.serving.deployer,) if spec.serving.deployer and
            e.entity.split(".", 1)[0] == uc_spec.catalog and not uc_spec.existing_catalog else ()),
            opts=pulumi.ResourceOptions(depends_on=[storage]))  # its inference-table schema and grants
        pulumi.export(f"serving_endpoint_{endpoint_name}", endpoint.endpoint_name)
