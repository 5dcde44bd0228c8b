"""Input JSON documents other than stacks: one reader (`dbx_ai_infra.dbxtypes.documents`); errors are `InputError`."""

from __future__ import annotations

from typing import Any

from dbx_ai_infra.dbxtypes.documents import parse_json, read_text
from dbx_ai_infra.dbxtypes.errors import InputError

__all__ = ["InputError", "read_json"]


def read_json(path: str, what: str, fix_missing: str = "pass an existing file.") -> Any:
    """A JSON file (``what`` names it in messages: ``"cluster JSON"``, ``"plan file"``)."""
    return parse_json(read_text(path, what, fix_missing=fix_missing), path)
