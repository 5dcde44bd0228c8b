"""Who may use what a plan creates: the access controls its ``Permissions`` resources give each cluster and job.

A ``databricks.Permissions`` (Terraform ``databricks_permissions``) names its target by id (``cluster_id``,
``job_id``); in a plan that id is the target's id (Pulumi: the resource's id; Terraform: the target's address, which
the plan reader puts for an id known only after apply, or the id when known). `access_links` gathers the access
controls per target id; `with_access` hands a resource's views the controls of its ids, so a rule judges a cluster
or job with what the plan says of it (`Rule.scope` ``"plan"``). An input that holds no permissions at all (a
workspace export) gives no links, and its views keep ``access`` None: not known, not judged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape, normalize_props
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB, PERMISSIONS, UNKNOWN_VALUE
from dbx_ai_infra.policies.rule import ResourceView, View

#: The target attributes of a Permissions resource this module reads, and the type each names.
TARGETS: Mapping[str, str] = {"cluster_id": CLUSTER, "job_id": JOB}
#: The principal keys of an access control.
PRINCIPALS = ("user_name", "group_name", "service_principal_name")


def controls_of(given: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """A Permissions resource's access controls, from its properties in snake_case (`normalize_props`): Pulumi's
    ``access_controls``, Terraform's repeated ``access_control`` block, the API's ``access_control_list``."""
    for key in ("access_controls", "access_control", "access_control_list"):
        entries = given.get(key)
        if isinstance(entries, list):
            return tuple(e for e in entries if isinstance(e, Mapping))
    return ()


def access_links(resources: Iterable[tuple[str, Mapping[str, Any] | None]]) -> dict[tuple[str, str], tuple]:
    """``(target type, target id) -> access controls`` from the Permissions among ``(type, props)`` pairs. Empty
    when there are none: then nothing about access is known (`with_access` leaves views as they are)."""
    links: dict[tuple[str, str], tuple] = {}
    for resource_type, props in resources:
        if resource_type != PERMISSIONS or not props:
            continue
        given = normalize_props(props)
        for attribute, target_type in TARGETS.items():
            target = given.get(attribute)
            if isinstance(target, str) and target:
                links[(target_type, target)] = links.get((target_type, target), ()) + controls_of(given)
    return links


def with_access(resource_type: str, ids: Sequence[str | None], views: list[View],
                links: Mapping[tuple[str, str], tuple] | None) -> list[View]:
    """``views`` of a cluster or job whose ids are ``ids``, each given the access controls the plan's links hold for
    it (``()`` when the plan has Permissions but none for it). Unchanged when ``links`` is None (not known). When
    none names it but a Permissions whose target is known only after apply may (``job_id = each.value.url``), its
    access is `UNKNOWN_VALUE`: the rules that read it say not judged (issue 51), never "no Permissions"."""
    if links is None or resource_type not in (CLUSTER, JOB):
        return views
    named: tuple = ()
    for found in (links.get((resource_type, i)) for i in ids if i):
        named += found or ()
    controls: tuple | str = UNKNOWN_VALUE if not named and (resource_type, UNKNOWN_VALUE) in links else named
    out: list[View] = []
    for view in views:
        if isinstance(view, ClusterShape) and view.resource_type == CLUSTER:
            out.append(dataclasses.replace(view, access=controls))
        elif isinstance(view, ResourceView) and view.resource_type == JOB:
            out.append(dataclasses.replace(view, access=controls))
        else:
            out.append(view)
    return out


def principal(control: Mapping[str, Any]) -> tuple[str, str]:
    """An access control's principal: its kind (``user_name``, ...) and name; ``("", "")`` when it names none."""
    for key in PRINCIPALS:
        if control.get(key):
            return key, str(control[key])
    return "", ""
