"""``databricks:index/grants:Grants``: Unity Catalog privileges on one securable (no cost)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import GRANTS

from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    target = next((f"{k} {v}" for k, v in inputs.items() if k != "grants"), "")
    who = "; ".join(f"{g.get('principal')}: {', '.join(g.get('privileges') or [])}" for g in inputs.get("grants") or [])
    return f"{target}: {who}"


KIND = ResourceKind(GRANTS, "Grants", facts)
