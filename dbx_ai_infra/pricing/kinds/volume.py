"""``databricks:index/volume:Volume``: a Unity Catalog Volume (no cost of its own; its id is
``catalog.schema.volume``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import VOLUME

from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    return f"/Volumes/{inputs.get('catalogName')}/{inputs.get('schemaName')}/{inputs.get('name')}"


KIND = ResourceKind(VOLUME, "Volume", facts)
