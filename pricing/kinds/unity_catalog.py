"""Unity Catalog securables: ``Catalog``, ``Schema``, ``Volume`` (no cost of their own; the provider's id is the
securable's full name: Terraform provider docs, Import sections of databricks_catalog, _schema, _volume)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbxtypes.vocabulary import CATALOG, SCHEMA, VOLUME

from .kind import ResourceKind, name_id


def _name(inputs: Mapping[str, Any]) -> str:
    return str(inputs.get("name", ""))


def _volume_path(inputs: Mapping[str, Any]) -> str:
    return f"/Volumes/{inputs.get('catalogName')}/{inputs.get('schemaName')}/{inputs.get('name')}"


def _full_name(*keys: str) -> Any:
    """The id as the provider gives it: the dotted full name of ``keys`` (a readable placeholder without them)."""
    def mock_id(name: str, inputs: Mapping[str, Any]) -> str:
        if all(inputs.get(k) for k in keys):
            return ".".join(str(inputs[k]) for k in keys)
        return name_id(name, inputs)

    return mock_id


CATALOG_KIND = ResourceKind(CATALOG, "Catalog", _name, mock_id=_full_name("name"))
SCHEMA_KIND = ResourceKind(SCHEMA, "Schema", _name, mock_id=_full_name("catalogName", "name"))
VOLUME_KIND = ResourceKind(VOLUME, "Volume", _volume_path, mock_id=_full_name("catalogName", "schemaName", "name"))
