"""Input files other than stacks (JSON documents, price files): one error type, one reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class InputError(Exception):
    """Invalid input other than a stack: the message names the file and the fix."""


def read_json(path: str, what: str, fix_missing: str = "pass an existing file.") -> Any:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: {what} not found. Fix: {fix_missing}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text. Fix: save the {what} as UTF-8 JSON.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}. "
                         f"Fix: correct the JSON there.") from None
