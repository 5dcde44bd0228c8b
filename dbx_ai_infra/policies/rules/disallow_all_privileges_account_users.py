"""Nobody grants every Unity Catalog privilege to every user of the account."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import as_list, as_mapping, is_set
from dbx_ai_infra.dbxtypes.vocabulary import GRANT, GRANTS
from dbx_ai_infra.policies.rule import ResourceView, Rule

_SECURABLES = ("metastore", "catalog", "schema", "volume", "table", "function", "model", "external_location",
               "storage_credential", "credential", "share", "foreign_connection")


def _is_account_users(principal: Any) -> bool:
    return isinstance(principal, str) and " ".join(principal.split()).lower() == "account users"


def _is_all_privileges(privilege: Any) -> bool:
    return isinstance(privilege, str) and privilege.strip().upper().replace(" ", "_") == "ALL_PRIVILEGES"


def check(view: ResourceView, config: Mapping[str, Any]) -> list[str]:
    props = view.props
    securable = next((f"{k} '{props[k]}'" for k in _SECURABLES if is_set(props.get(k))), "the securable")
    entries = as_list(props.get("grants")) if view.resource_type == GRANTS else [props]
    out = []
    for entry in entries:
        entry = as_mapping(entry)
        if _is_account_users(entry.get("principal")) and any(map(_is_all_privileges, as_list(entry.get("privileges")))):
            out.append(f"grants ALL_PRIVILEGES on {securable} to 'account users', every identity in the account. "
                       f"Fix: grant only the privileges needed (e.g. USE_CATALOG, USE_SCHEMA, READ_VOLUME) to a "
                       f"specific group.")
    return out


RULE = Rule(
    name="databricks-uc-disallow-all-privileges-to-account-users",
    order=150,
    description="Unity Catalog grants must not give ALL_PRIVILEGES to the account users group.",
    enforcement="mandatory",
    resource_types=(GRANTS, GRANT),
    check=check,
    takes=(ResourceView,),
    stack_fields=('grants',),
    remediation="Grant least-privilege sets (USE_CATALOG, USE_SCHEMA, READ_VOLUME, ...) to named groups.",
    severity="critical",
)
