"""A job task is not a legacy ``spark_submit_task``.

Databricks deprecated the Spark Submit task, "pending removal in mid-2026", and disallows it "for new use cases";
it runs on new clusters only, without cluster autoscaling, auto-termination or Databricks Utilities; Databricks
recommends the JAR task for JVM workloads ("Spark Submit (legacy, deprecated, removal planned for mid-2026)",
docs.databricks.com/aws/en/jobs/tasks/spark-submit-legacy, read 2026-12-05). Peers flag it (KICS, "Databricks Job
Using Spark Submit Task"). Mandatory: the removal date has passed, so a job built on it may not run; a policy config
can make it advisory for a job being migrated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import JOB
from dbx_ai_infra.policies.rule import ResourceView, Rule


def check(view: ResourceView, config: Mapping[str, Any]) -> list[str]:
    job = view.props
    tasks = [t for t in job.get("tasks") or [] if isinstance(t, Mapping)]
    found = [f"tasks[{t.get('task_key')}]" for t in tasks if t.get("spark_submit_task") is not None]
    if job.get("spark_submit_task") is not None:  # a Jobs API 2.0 job holds its one task itself
        found.append("the job's task (Jobs API 2.0)")
    return [f"{where} is a spark_submit_task, which Databricks deprecated (removal planned for mid-2026, not allowed "
            "for new use cases): new clusters only, no autoscaling, no auto-termination. Fix: run the code as a "
            "spark_jar_task (JVM), spark_python_task or python_wheel_task." for where in found]


RULE = Rule(
    name="databricks-job-disallow-spark-submit-task",
    order=170,
    description="Job tasks must not use the deprecated spark_submit_task.",
    details=("Databricks deprecated it (removal planned for mid-2026, not allowed for new use cases); a policy config "
             "can make it advisory while a job is migrated."),
    enforcement="mandatory",
    resource_types=(JOB,),
    check=check,
    takes=(ResourceView,),
    remediation="Use a spark_jar_task, spark_python_task or python_wheel_task instead of spark_submit_task.",
    severity="medium",
)
