"""Input files other than stacks (JSON documents): one reader; errors are `dbxtypes.errors.InputError`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dbxtypes.errors import InputError

__all__ = ["InputError", "read_json"]


def read_json(path: str, what: str, fix_missing: str = "pass an existing file.") -> Any:
    p = Path(path)
    if not p.is_file():
        raise InputError.single(path, "", f"{what} not found.", fix_missing)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError.single(path, "", "not UTF-8 text.", f"save the {what} as UTF-8 JSON.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.single(path, "", f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.",
                                "correct the JSON there.") from None
