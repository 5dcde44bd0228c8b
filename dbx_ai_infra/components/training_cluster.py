"""TrainingCluster: fixed size, spot with fallback, on-demand driver, checkpoints on a Volume, resumable job."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.vocabulary import CHECKPOINT_DIR_ARG, CHECKPOINT_DIR_ENV, RESUME_ARG, TRAINING_CLUSTER_TYPE

from ._common import (
    AccessArgs,
    Availability,
    ClusterBaseArgs,
    child_options,
    cluster_settings,
    create_cluster,
    group_access,
    holder,
    identity,
    permissions,
)


@dataclass(frozen=True, kw_only=True)
class TrainingJobArgs:
    """A job that runs training on a job cluster and retries from the last checkpoint after a reclaim."""

    python_file: str
    parameters: Sequence[str] = ()
    max_retries: int
    min_retry_interval_millis: int
    #: Time limit of a run (the task's timeout_seconds); None: no limit, and then no retry_on_timeout either.
    timeout_seconds: int | None = None
    retry_on_timeout: bool | None = None


@dataclass(frozen=True, kw_only=True)
class TrainingClusterArgs(ClusterBaseArgs):
    num_workers: int
    #: Workers on spot with fallback to on-demand; False keeps every node on-demand.
    spot: bool
    #: Nodes kept on-demand, the driver included (so >= 1: the driver is never spot).
    first_on_demand: int
    #: A /Volumes/... directory; each run writes checkpoints there and resumes from the newest.
    checkpoint_dir: str
    job: TrainingJobArgs | None = None
    #: More access to the training job, beyond its run-as identity's and ``user_groups``' CAN_MANAGE_RUN.
    job_access: Sequence[AccessArgs] = ()
    #: Also an all-purpose cluster (interactive work, ad-hoc runs); False: the job alone (job compute bills DBUs at
    #: the Jobs rate, about a third of all-purpose), which needs ``job``.
    all_purpose_cluster: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {self.num_workers}")
        if self.first_on_demand < 1:
            raise ValueError(f"first_on_demand must be >= 1 so the driver is on-demand, got {self.first_on_demand}")
        if not self.all_purpose_cluster and self.job is None:
            raise ValueError("all_purpose_cluster=False needs a job: the training would have no compute at all")
        if not self.checkpoint_dir.startswith("/Volumes/"):
            raise ValueError(f"checkpoint_dir must be a Unity Catalog Volume path (/Volumes/...), "
                             f"got {self.checkpoint_dir!r}")


def run_as(name: str) -> dict[str, str]:
    """The job's ``run_as``: its dedicated cluster's single user (`identity`)."""
    return identity(name)


def _timeout(job: TrainingJobArgs) -> dict[str, Any]:
    """``timeout_seconds`` and ``retry_on_timeout`` (default true) when the job has a time limit; nothing otherwise,
    since retry_on_timeout has no effect without one."""
    if job.timeout_seconds is None:
        return {}
    retry = True if job.retry_on_timeout is None else job.retry_on_timeout
    return {"timeout_seconds": job.timeout_seconds, "retry_on_timeout": retry}


def _job_cluster(key: str, settings: dict[str, Any]) -> databricks.JobJobClusterArgs:
    """A shared job cluster with the same settings as the all-purpose cluster."""
    return databricks.JobJobClusterArgs(job_cluster_key=key, new_cluster=databricks.JobJobClusterNewClusterArgs(
        **settings))


class TrainingCluster(pulumi.ComponentResource):
    """A fixed-size GPU training cluster (never autoscaled) and, optionally, a resumable training job."""

    cluster_id: pulumi.Output[str] | None
    checkpoint_dir: str
    job_id: pulumi.Output[str] | None

    def __init__(self, name: str, args: TrainingClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TRAINING_CLUSTER_TYPE, name, None, opts)
        child = child_options(self, opts)
        availability: Availability = "spot_with_fallback" if args.spot else "on_demand"
        settings = cluster_settings(args, "training", availability=availability,
                                    first_on_demand=args.first_on_demand)
        settings["spark_env_vars"][CHECKPOINT_DIR_ENV] = args.checkpoint_dir
        settings["num_workers"] = args.num_workers

        self.cluster_id = None
        if args.all_purpose_cluster:
            own = {**settings, **group_access(args.dedicated_group)} if args.dedicated_group else settings
            cluster = create_cluster(name, own, child, autotermination_minutes=args.autotermination_minutes)
            self.cluster_id = cluster.id
            # its single user may start and restart it (SINGLE_USER access mode admits nobody else)
            permissions(f"{name}-cluster", {"cluster_id": cluster.id},
                        [(holder(args), "CAN_RESTART")], child, args.cluster_access)
        self.checkpoint_dir = args.checkpoint_dir
        self.job_id = None
        if args.job is not None:
            task: dict[str, Any] = {
                "task_key": "train",
                "job_cluster_key": "train",
                "spark_python_task": {
                    "python_file": args.job.python_file,
                    "parameters": [CHECKPOINT_DIR_ARG, args.checkpoint_dir, RESUME_ARG, *args.job.parameters],
                },
                # Libraries go on the task: Databricks installs none on a shared job cluster.
                **({"libraries": settings["libraries"]} if "libraries" in settings else {}),
                "max_retries": args.job.max_retries,
                "min_retry_interval_millis": args.job.min_retry_interval_millis,
                **_timeout(args.job),
            }
            job = databricks.Job(
                f"{name}-job",
                name=f"{name}-run",
                max_concurrent_runs=1,  # two runs would write over one checkpoint directory
                run_as=databricks.JobRunAsArgs(**run_as(args.single_user_name)),  # its dedicated cluster's identity
                tags=dict(settings["custom_tags"]),
                job_clusters=[_job_cluster("train", {k: v for k, v in settings.items() if k != "libraries"})],
                tasks=[databricks.JobTaskArgs(**task)],
                opts=child)
            self.job_id = job.id
            # the workload's groups (and its run-as identity) may start, cancel and repair runs
            permissions(f"{name}-job", {"job_id": job.id},
                        [(identity(args.single_user_name), "CAN_MANAGE_RUN"),
                         *(({"group_name": g}, "CAN_MANAGE_RUN") for g in args.user_groups)], child,
                        args.job_access)
        self.register_outputs({"cluster_id": self.cluster_id, "checkpoint_dir": self.checkpoint_dir,
                               "job_id": self.job_id})
