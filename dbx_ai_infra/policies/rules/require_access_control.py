"""A cluster or job a plan creates says who may use it: a ``Permissions`` resource names it.

Databricks gives the creator of a cluster or job ``CAN_MANAGE`` and nobody else any access (workspace admins
aside): a cluster deployed by a pipeline's service principal with no ``databricks_permissions`` (Pulumi
``databricks.Permissions``) is one no engineer can attach to, and access gets granted by hand later, outside the
code (Permissions API, "Cluster ACLs" and "Job ACLs"; the provider's docs, resources/permissions.md, read
2026-12-05). Peers flag the gap (KICS, "Databricks Cluster/Job Without Permissions"). A cluster dedicated to one
person (``single_user_name``) needs none. Judged where the input states the plan's Permissions (a Pulumi plan, a
Terraform plan); a workspace export holds none, so there it is not judged. Advisory: a team may grant access some
other way (cluster policies, an admin group).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.rule import ResourceView, Rule, View


def _concerns(view: View) -> bool:
    """A cluster dedicated to one person needs no Permissions: not judged on it, whatever its access."""
    return not (isinstance(view, ClusterShape) and view.props.get("single_user_name"))


def check(view: ClusterShape | ResourceView, config: Mapping[str, Any]) -> list[str]:
    if view.access is None or view.access:  # not known here, or granted
        return []
    if isinstance(view, ClusterShape) and view.resource_type == CLUSTER:
        if view.props.get("single_user_name"):
            return []
        return ["no Permissions resource names this cluster: only its creator (the deploying identity) and admins "
                "can attach to or restart it. Fix: add a databricks_permissions (Pulumi: databricks.Permissions) "
                "with cluster_id set to it, granting CAN_ATTACH_TO or CAN_RESTART to the group that uses it (or "
                "dedicate it to one person with single_user_name)."]
    if isinstance(view, ResourceView) and view.resource_type == JOB:
        return ["no Permissions resource names this job: only its creator and admins can see, run or fix it. Fix: "
                "add a databricks_permissions (Pulumi: databricks.Permissions) with job_id set to it, granting "
                "CAN_VIEW or CAN_MANAGE_RUN to the team that runs it."]
    return []


RULE = Rule(
    name="databricks-resource-require-access-control",
    order=330,
    description="Clusters and jobs a plan creates should be named by a Permissions resource granting their users "
                "access (a cluster dedicated to one person needs none).",
    details=("The Permissions resource is `databricks_permissions` (`databricks.Permissions` in Pulumi); without one "
             "only the creator (the deploying identity) and admins can use the cluster or job. A cluster dedicated to "
             "one person sets `single_user_name`. Not judged on a workspace export, which holds no permissions."),
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape, ResourceView),
    remediation="Add a databricks_permissions (databricks.Permissions) for the cluster or job, granting the group "
                "that uses it.",
    severity="medium",
    scope="plan",
    reads=("access",),
    concerns=_concerns,
)
