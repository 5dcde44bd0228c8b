"""``databricks:index/file:File``: a file uploaded to a Volume or the workspace (the GPU collector's script)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import WORKSPACE_FILE

from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    return str(inputs.get("path", ""))


KIND = ResourceKind(WORKSPACE_FILE, "File", facts)
