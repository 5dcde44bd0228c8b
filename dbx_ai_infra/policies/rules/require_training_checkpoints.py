"""Training must write checkpoints somewhere, so a lost node costs minutes, not the run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape, as_list, as_mapping, is_set
from dbx_ai_infra.dbxtypes.vocabulary import CHECKPOINT_DIR_ARG, CHECKPOINT_DIR_ENV, CLUSTER, JOB, JOBS_COMPUTE
from dbx_ai_infra.policies.rule import Rule

FLAGS = (CHECKPOINT_DIR_ARG, "--checkpoint_dir")
PARAMETER_NAMES = ("checkpoint_dir", "checkpoint-dir")
_LIST_PARAMETER_TASKS = ("spark_python_task", "python_wheel_task", "spark_jar_task", "spark_submit_task")
_NAMED_PARAMETER_FIELDS = (("python_wheel_task", "named_parameters"), ("notebook_task", "base_parameters"))


def _has_flag(parameters: Any) -> bool:
    prefixes = tuple(f + "=" for f in FLAGS)
    return any(isinstance(p, str) and (p in FLAGS or p.startswith(prefixes)) for p in as_list(parameters))


def task_sets_checkpoint(task: Mapping[str, Any]) -> bool:
    """True when a task passes ``--checkpoint-dir`` (or a ``checkpoint_dir`` named/base parameter)."""
    if any(_has_flag(as_mapping(task.get(kind)).get("parameters")) for kind in _LIST_PARAMETER_TASKS):
        return True
    return any(
        any(is_set(v) for k, v in as_mapping(as_mapping(task.get(kind)).get(field)).items() if k in PARAMETER_NAMES)
        for kind, field in _NAMED_PARAMETER_FIELDS
    )


def _job_parameter(job: Mapping[str, Any] | None) -> bool:
    if not job:
        return False
    return any(as_mapping(p).get("name") in PARAMETER_NAMES and is_set(as_mapping(p).get("default"))
               for p in as_list(job.get("parameters")))


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    if view.role != "training":
        return []
    if is_set(view.spark_env_vars.get(CHECKPOINT_DIR_ENV)):
        return []
    if any(task_sets_checkpoint(t) for t in view.tasks) or _job_parameter(view.job):
        return []
    where = "set spark_env_vars CHECKPOINT_DIR"
    if view.compute_kind == JOBS_COMPUTE:
        where += " or pass --checkpoint-dir in the task parameters"
    return [f"{view.role_subject()} has no checkpoint location, so a lost node or a timeout restarts training from "
            "zero. "
            f"Fix: {where}, pointing at /Volumes/<catalog>/<schema>/<volume>/checkpoints."]


RULE = Rule(
    name="databricks-training-require-checkpoint-location",
    order=220,
    description=("Training clusters should define a checkpoint location through CHECKPOINT_DIR or a --checkpoint-dir "
                 "task parameter."),
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('checkpoint_volume', 'job'),
    remediation=("Set spark_env_vars CHECKPOINT_DIR (or the task parameter --checkpoint-dir) to a Unity Catalog "
                 "volume path."),
    severity="medium",
)
