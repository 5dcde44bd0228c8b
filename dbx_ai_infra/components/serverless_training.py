"""ServerlessGpuTraining: the training role on Databricks serverless GPU (the AI Runtime): a resumable job whose task
runs on a hardware accelerator, with no cluster, cluster policy or instance pool of ours.

Checked against pulumi-databricks 1.118 (``JobTaskArgs``: ``compute`` = ``JobTaskComputeArgs(hardware_accelerator)``,
"Hardware accelerator configuration for Serverless GPU workloads"; ``environment_key``, "Required for some tasks
(spark_python_task, ...) running on serverless compute"; ``JobEnvironmentArgs(environment_key, spec=
JobEnvironmentSpecArgs(environment_version, dependencies))``; ``JobArgs.budget_policy_id``, "The ID of the
user-specified budget policy to use for this job", the name the Terraform provider's databricks_job page documents)
and databricks-sdk 0.167 (``compute.HardwareAcceleratorType``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.pip import pip_project
from dbx_ai_infra.dbxtypes.vocabulary import (
    CHECKPOINT_DIR_ARG,
    GPUS_ARG,
    RESUME_ARG,
    SERVERLESS_ENVIRONMENT_KEY,
    SERVERLESS_ENVIRONMENT_TORCH,
    SERVERLESS_ENVIRONMENT_VERSION,
    SERVERLESS_TRAINING_TYPE,
    STACK_TAG,
    WORKLOAD_TAG,
)

from ._common import AccessArgs, child_options, identity, permissions, role_tags
from .training_cluster import TrainingJobArgs, _timeout, run_as


def environment_dependencies(libraries: Sequence[str]) -> list[str]:
    """The serverless environment's dependencies: the workload's pinned libraries, and Databricks' tested torch when
    they name none (environment 5's base environment has no torch, and train.py imports it)."""
    names = {pip_project(lib) for lib in libraries}
    return [*libraries, *(() if "torch" in names else (SERVERLESS_ENVIRONMENT_TORCH,))]


@dataclass(frozen=True, kw_only=True)
class ServerlessGpuTrainingArgs:
    """A training workload on serverless GPU: the accelerator of each node, the GPUs the entry point spreads over,
    the job (entry point, retries, timeout) and who runs it."""

    accelerator: str
    gpus: int
    #: GPUs of one accelerator node (``gpus`` is a multiple of it: the spec checks it).
    gpus_per_node: int
    #: A /Volumes/... directory; each run writes checkpoints there and resumes from the newest.
    checkpoint_dir: str
    job: TrainingJobArgs
    single_user_name: str
    tags: Mapping[str, str] = field(default_factory=dict)
    #: Pinned pip packages: the serverless environment's dependencies.
    libraries: Sequence[str] = ()
    #: The serverless usage (budget) policy the job carries (``budget_policy_id``); None: none.
    usage_policy_id: str | None = None
    gpu_memory_need_gb: float | None = None
    user_groups: Sequence[str] = ()
    job_access: Sequence[AccessArgs] = ()
    stack: str | None = None
    workload: str | None = None

    def __post_init__(self) -> None:
        if self.gpus < 1 or self.gpus % self.gpus_per_node:
            raise ValueError(f"gpus must be a positive multiple of {self.gpus_per_node}, got {self.gpus}")
        if not self.checkpoint_dir.startswith("/Volumes/"):
            raise ValueError(f"checkpoint_dir must be a Unity Catalog Volume path (/Volumes/...), "
                             f"got {self.checkpoint_dir!r}")


class ServerlessGpuTraining(pulumi.ComponentResource):
    """A resumable training job on serverless GPU: one task on ``accelerator``, in a serverless environment with the
    workload's libraries, running the checkpoint-resuming entry point with the GPU count, retried after a failure
    (a lost node) from the newest checkpoint, as the classic training job is."""

    job_id: pulumi.Output[str]
    checkpoint_dir: str

    def __init__(self, name: str, args: ServerlessGpuTrainingArgs, opts: pulumi.ResourceOptions | None = None
                 ) -> None:
        super().__init__(SERVERLESS_TRAINING_TYPE, name, None, opts)
        child = child_options(self, opts)
        tags = role_tags(args.tags, "training", args.gpu_memory_need_gb,
                         {**({STACK_TAG: args.stack} if args.stack else {}),
                          **({WORKLOAD_TAG: args.workload} if args.workload else {})})
        task = databricks.JobTaskArgs(
            task_key="train",
            environment_key=SERVERLESS_ENVIRONMENT_KEY,
            compute=databricks.JobTaskComputeArgs(hardware_accelerator=args.accelerator),
            spark_python_task=databricks.JobTaskSparkPythonTaskArgs(
                python_file=args.job.python_file,
                parameters=[CHECKPOINT_DIR_ARG, args.checkpoint_dir, RESUME_ARG, GPUS_ARG, str(args.gpus),
                            *args.job.parameters]),
            max_retries=args.job.max_retries,
            min_retry_interval_millis=args.job.min_retry_interval_millis,
            **_timeout(args.job))
        job = databricks.Job(
            f"{name}-job",
            name=f"{name}-run",
            max_concurrent_runs=1,  # two runs would write over one checkpoint directory
            run_as=databricks.JobRunAsArgs(**run_as(args.single_user_name)),
            tags=tags,
            environments=[databricks.JobEnvironmentArgs(
                environment_key=SERVERLESS_ENVIRONMENT_KEY,
                spec=databricks.JobEnvironmentSpecArgs(environment_version=SERVERLESS_ENVIRONMENT_VERSION,
                                                       dependencies=environment_dependencies(args.libraries)))],
            tasks=[task],
            budget_policy_id=args.usage_policy_id,
            opts=child)
        self.job_id = job.id
        self.checkpoint_dir = args.checkpoint_dir
        permissions(f"{name}-job", {"job_id": job.id},
                    [(identity(args.single_user_name), "CAN_MANAGE_RUN"),
                     *(({"group_name": g}, "CAN_MANAGE_RUN") for g in args.user_groups)], child, args.job_access)
        self.register_outputs({"job_id": self.job_id, "checkpoint_dir": self.checkpoint_dir})
