"""``databricks:index/catalog:Catalog``: a Unity Catalog catalog (no cost of its own; its id is its name)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import CATALOG

from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    root = inputs.get("storageRoot")
    return str(inputs.get("name", "")) + (f", managed location {root}" if root else "")


KIND = ResourceKind(CATALOG, "Catalog", facts)
