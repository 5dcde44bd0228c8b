"""``databricks:index/permissions:Permissions``: who may use a workspace object (a cluster, a pool, an endpoint);
no cost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import PERMISSIONS

from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    return "; ".join(f"{a.get('groupName') or a.get('userName') or a.get('servicePrincipalName')}: "
                     f"{a.get('permissionLevel')}" for a in inputs.get("accessControls") or [])


KIND = ResourceKind(PERMISSIONS, "Permissions", facts)
