"""Reading input documents (JSON or YAML files): one reader, one set of messages, every failure an `InputError`.

Stack files, price overrides, the policy config, plan and cluster JSON, and the packaged data files all come
through here, so a missing, unreadable, non-UTF-8 or malformed file reads the same whichever input it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from .errors import InputError

#: The largest input document read (stack files, price and policy files; cluster exports are larger).
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024


def read_text(path: str | Path, what: str, *, fix_missing: str = "pass an existing file.",
              max_bytes: int = MAX_DOCUMENT_BYTES) -> str:
    """The UTF-8 text of ``path``; ``what`` names the input in messages (``"price overrides file"``)."""
    p = Path(path)
    source = str(path)
    if not p.is_file():
        raise InputError.single(source, "", f"{what} not found.", fix_missing)
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise InputError.single(source, "", f"the file is {size:,} bytes; a {what} is at most {max_bytes:,}.",
                                    f"check that this is the {what} you meant.")
        return p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError.single(source, "", f"not UTF-8 text (byte {exc.start}).", f"save the {what} as UTF-8.") \
            from None
    except OSError as exc:
        raise InputError.single(source, "", f"cannot read the {what} ({exc.strerror or exc}).",
                                "check the path and its permissions.") from None


def parse_yaml(text: str, source: str) -> Any:
    """YAML text as data, read with YAML 1.2 core semantics, as the Pulumi CLI reads stack files: ``no``, ``on``
    and ``yes`` stay strings, ``1e-300`` is a number. A syntax error names its line and column; a key given twice
    in one mapping is an error (the CLI would keep only one of them)."""
    try:
        return YAML(typ="safe", pure=True).load(text)
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        key = str(exc.problem).split('"')[1] if '"' in str(exc.problem) else "a key"
        raise InputError.single(source, key, f"is given twice in the same mapping (again at line {mark.line + 1}).",
                                "keep one of them.") from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = exc.problem or str(exc).splitlines()[0]
        raise InputError.single(source, "", f"YAML syntax error{at}: {problem}.",
                                "correct the YAML there (indentation, a missing ':' or quote).") from None
    except YAMLError as exc:
        raise InputError.single(source, "", f"YAML error: {str(exc).splitlines()[0]}.",
                                "correct the YAML there.") from None


def parse_json(text: str, source: str) -> Any:
    """JSON text as data; a syntax error names its line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.single(source, "", f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.",
                                "correct the JSON there.") from None


def read_document(path: str | Path, what: str, *, fix_missing: str = "pass an existing file.") -> Any:
    """A JSON or YAML file as data: YAML for ``.yaml``/``.yml``, JSON otherwise."""
    text = read_text(path, what, fix_missing=fix_missing)
    if Path(path).suffix.lower() in (".yaml", ".yml"):
        return parse_yaml(text, str(path))
    return parse_json(text, str(path))
