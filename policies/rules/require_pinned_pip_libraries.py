"""pip libraries must name one exact version, so that a restart installs what was tested."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbxtypes.shape import ClusterShape, pypi_packages
from dbxtypes.vocabulary import CLUSTER, JOB, LIBRARY
from policies.common import is_pinned_pip, pip_name
from policies.rule import ResourceView, Rule, View


def _message(spec: str, where: str) -> str:
    example = f"{pip_name(spec) or '<package>'}==<version>"
    return (f"pip library '{spec}' in {where} is not pinned to one version, so each restart may install a different "
            f"release. Fix: pin it, e.g. '{example}'.")


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    if isinstance(view, ClusterShape):
        found = [("libraries", spec) for spec in view.libraries]
        for task in view.tasks:
            key = task.get("task_key")
            # a Jobs API 2.0 job holds its one task's libraries itself (no task_key)
            where = f"tasks[{key}].libraries" if key else "the job's libraries (Jobs API 2.0)"
            found += [(where, spec) for spec in pypi_packages(task.get("libraries"))]
    elif isinstance(view, ResourceView) and view.resource_type == LIBRARY:
        found = [("the library resource", spec) for spec in pypi_packages([view.props])]
    else:
        return []
    return [_message(spec, where) for where, spec in found if not is_pinned_pip(spec)]


RULE = Rule(
    name="databricks-library-require-pinned-pip-versions",
    description=("Python libraries installed from PyPI on clusters, job tasks and library resources must be pinned "
                 "to an exact version."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB, LIBRARY),
    check=check,
    stack_fields=('libraries',),
    remediation="Write every pypi package as name==version (extras allowed: name[extra]==version).",
    severity="medium",
)
