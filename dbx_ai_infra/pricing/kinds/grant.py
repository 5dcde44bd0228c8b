"""``databricks:index/grant:Grant``: one principal's Unity Catalog privileges on one securable, leaving the other
principals' grants as they are (used on a catalog the stack does not own); no cost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import GRANT

from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    target = next((f"{k} {v}" for k, v in inputs.items() if k not in ("principal", "privileges")), "")
    return f"{target}: {inputs.get('principal')}: {', '.join(inputs.get('privileges') or [])}"


KIND = ResourceKind(GRANT, "Grant", facts)
