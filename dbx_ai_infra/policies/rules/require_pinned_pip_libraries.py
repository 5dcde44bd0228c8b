"""pip libraries must name one exact version, so that a restart installs what was tested."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape, pypi_packages
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB, LIBRARY
from dbx_ai_infra.policies.common import is_pinned_pip, pip_name
from dbx_ai_infra.policies.rule import ResourceView, Rule


def _message(found: list[tuple[str, str]]) -> str:
    """One message for every unpinned library of a cluster: each spec once, with every place it is installed (a
    job's tasks each install their own copy of the same library: one finding, not one per task)."""
    places: dict[str, list[str]] = {}
    for where, spec in found:
        if where not in places.setdefault(spec, []):
            places[spec].append(where)
    listed = ", ".join(f"'{spec}' in {', '.join(where)}" for spec, where in places.items())
    first = next(iter(places))
    example = f"{pip_name(first) or '<package>'}==<version>"
    noun = "pip library" if len(places) == 1 else "pip libraries"
    verb = "is" if len(places) == 1 else "are"
    return (f"{noun} {listed} {verb} not pinned to one version, so each restart may install a different "
            f"release. Fix: pin {'it' if len(places) == 1 else 'each'}, e.g. '{example}'.")


def check(view: ClusterShape | ResourceView, config: Mapping[str, Any]) -> list[str]:
    if isinstance(view, ClusterShape):
        found = [("libraries", spec) for spec in view.libraries]
        for task in view.tasks:
            key = task.get("task_key")
            # a Jobs API 2.0 job holds its one task's libraries itself (no task_key)
            where = f"tasks[{key}].libraries" if key else "the job's libraries (Jobs API 2.0)"
            found += [(where, spec) for spec in pypi_packages(task.get("libraries"))]
    elif view.resource_type == LIBRARY:  # a Job's own view holds no libraries: its clusters' and tasks' do
        found = [("the library resource", spec) for spec in pypi_packages([view.props])]
    else:
        return []
    unpinned = [(where, spec) for where, spec in found if not is_pinned_pip(spec)]
    return [_message(unpinned)] if unpinned else []


RULE = Rule(
    name="databricks-library-require-pinned-pip-versions",
    order=130,
    description=("Python libraries installed from PyPI on clusters, job tasks and library resources must be pinned "
                 "to an exact version."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB, LIBRARY),
    check=check,
    takes=(ClusterShape, ResourceView),
    stack_fields=('libraries',),
    remediation="Write every pypi package as name==version (extras allowed: name[extra]==version).",
    severity="medium",
    reads=("libraries",),
)
