"""Who may use what: ``Grants`` (Unity Catalog privileges), ``Permissions`` (workspace object ACLs) and
``ClusterPolicy`` (the limits a cluster must keep); none costs anything."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dbxtypes.vocabulary import CLUSTER_POLICY, GRANTS, PERMISSIONS

from .kind import ResourceKind


def _grants(inputs: Mapping[str, Any]) -> str:
    target = next((f"{k} {v}" for k, v in inputs.items() if k != "grants"), "")
    who = "; ".join(f"{g.get('principal')}: {', '.join(g.get('privileges') or [])}" for g in inputs.get("grants") or [])
    return f"{target}: {who}"


def _permissions(inputs: Mapping[str, Any]) -> str:
    return "; ".join(f"{a.get('groupName') or a.get('userName') or a.get('servicePrincipalName')}: "
                     f"{a.get('permissionLevel')}" for a in inputs.get("accessControls") or [])


def _policy(inputs: Mapping[str, Any]) -> str:
    return f"{len(json.loads(inputs.get('definition') or '{}'))} limited attributes"


GRANTS_KIND = ResourceKind(GRANTS, "Grants", _grants)
PERMISSIONS_KIND = ResourceKind(PERMISSIONS, "Permissions", _permissions)
CLUSTER_POLICY_KIND = ResourceKind(CLUSTER_POLICY, "ClusterPolicy", _policy)
