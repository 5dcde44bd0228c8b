"""``databricks:index/schema:Schema``: a Unity Catalog schema (no cost of its own; its id is ``catalog.schema``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import SCHEMA

from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    return str(inputs.get("name", ""))


KIND = ResourceKind(SCHEMA, "Schema", facts)
