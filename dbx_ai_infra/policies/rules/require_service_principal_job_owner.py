"""A job's owner, where a plan's Permissions name one (``IS_OWNER``), is a service principal.

A job runs as its owner unless ``run_as`` says otherwise; a job owned by a person stops when that person leaves,
and runs with that person's rights while they stay. Databricks recommends a service principal for production jobs
(Jobs docs, "Manage identities, permissions and privileges for jobs"; Permissions API ``IS_OWNER``, read
2026-12-05); peers check it (KICS, "Databricks Job Owner Not A Service Principal"). Advisory: a team may keep
personal jobs in development. A plan whose Permissions name no owner leaves the creator (the deploying identity)
owner: not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import JOB
from dbx_ai_infra.policies.access import principal
from dbx_ai_infra.policies.rule import ResourceView, Rule


def check(view: ResourceView, config: Mapping[str, Any]) -> list[str]:
    if not isinstance(view.access, tuple):
        return []  # its access not known here (none, or a Permissions whose target is unknown)
    out = []
    for control in view.access:
        if str(control.get("permission_level", "")).upper() != "IS_OWNER":
            continue
        kind, name = principal(control)
        if kind != "service_principal_name":
            out.append(f"the job's owner (IS_OWNER) is {kind.removesuffix('_name') or 'nobody named'} {name!r}: the "
                       "job runs with that identity's rights and stops when it leaves. Fix: make a service "
                       "principal the owner (service_principal_name with IS_OWNER), and give people CAN_MANAGE_RUN.")
    return out


RULE = Rule(
    name="databricks-job-require-service-principal-owner",
    order=340,
    description="A job whose Permissions name an owner (IS_OWNER) should be owned by a service principal, not a "
                "person or a group.",
    enforcement="advisory",
    resource_types=(JOB,),
    check=check,
    takes=(ResourceView,),
    remediation="Give IS_OWNER to a service principal (service_principal_name) and CAN_MANAGE_RUN to people.",
    severity="medium",
    scope="plan",
)
