"""Unity Catalog facts read by the stack spec and the policy pack: which privileges exist and where they apply.

Known privileges are databricks-sdk's own ``catalog.Privilege`` enum (pinned in requirements.txt, read through the
snapshot in `dbx_ai_infra.dbxtypes.sdk_types`), not a hand-copied list. Which privilege applies to which securable
follows the Databricks docs, "Unity Catalog privileges and securable objects", privilege types by securable object (read
2026-12).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from .sdk_types import enum_values

KNOWN_PRIVILEGES: Final = frozenset(enum_values("catalog.Privilege"))

PRIVILEGES_BY_SECURABLE: Final[Mapping[str, frozenset[str]]] = {
    "catalog": frozenset({
        "ALL_PRIVILEGES", "APPLY_TAG", "BROWSE", "CREATE_FUNCTION", "CREATE_MATERIALIZED_VIEW", "CREATE_MODEL",
        "CREATE_SCHEMA", "CREATE_TABLE", "CREATE_VOLUME", "EXECUTE", "EXTERNAL_USE_SCHEMA", "MANAGE", "MODIFY",
        "READ_VOLUME", "REFRESH", "SELECT", "USE_CATALOG", "USE_SCHEMA", "WRITE_VOLUME"}),
    "schema": frozenset({
        "ALL_PRIVILEGES", "APPLY_TAG", "CREATE_FUNCTION", "CREATE_MATERIALIZED_VIEW", "CREATE_MODEL", "CREATE_TABLE",
        "CREATE_VOLUME", "EXECUTE", "EXTERNAL_USE_SCHEMA", "MANAGE", "MODIFY", "READ_VOLUME", "REFRESH", "SELECT",
        "USE_SCHEMA", "WRITE_VOLUME"}),
    "volume": frozenset({"ALL_PRIVILEGES", "APPLY_TAG", "MANAGE", "READ_VOLUME", "WRITE_VOLUME"}),
}


def privilege_problems(privileges: Iterable[object], securable_kind: str) -> list[str]:
    """Why some of ``privileges`` cannot be granted on a ``securable_kind`` (catalog, schema, volume): unknown to the
    API, or not applying to that kind of securable. Empty when all are fine."""
    out = []
    allowed = PRIVILEGES_BY_SECURABLE.get(securable_kind)
    for privilege in privileges:
        name = str(privilege)
        if name not in KNOWN_PRIVILEGES:
            out.append(f"privilege {name!r} is not a Unity Catalog privilege")
        elif allowed is not None and name not in allowed:
            out.append(f"privilege {name} does not apply to a {securable_kind} (a {securable_kind} takes "
                       f"{', '.join(sorted(allowed))})")
    return out
