"""Reading input documents (JSON or YAML files): one reader, one set of messages, every failure an `InputError`.

Stack files, price overrides, the policy config, plan and cluster JSON, and the packaged data files all come
through here, so a missing, unreadable, non-UTF-8 or malformed file reads the same whichever input it is.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from types import ModuleType
from typing import Any

from .errors import InputError, clip, cut, number_problem

#: The largest input document read (stack files, price and policy files; cluster exports are larger).
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024


def read_text(path: str | Path, what: str, *, fix_missing: str = "pass an existing file.",
              max_bytes: int = MAX_DOCUMENT_BYTES) -> str:
    """The UTF-8 text of ``path``; ``what`` names the input in messages (``"price overrides file"``)."""
    p = Path(path)
    source = str(path)
    if not p.is_file():
        kind = not_a_file(p)
        raise InputError.single(source, "", f"{what} {kind}.", fix_missing if kind == "not found" else
                                f"pass the {what} itself, a regular file.")
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise InputError.single(source, "", f"the file is {size:,} bytes; a {what} is at most {max_bytes:,}.",
                                    f"check that this is the {what} you meant.")
        return p.read_bytes().decode("utf-8-sig")  # a byte-order mark (Windows editors write one) is no content
    except UnicodeDecodeError as exc:
        raise InputError.single(source, "", f"not UTF-8 text (byte {exc.start}).", f"save the {what} as UTF-8.") \
            from None
    except OSError as exc:
        raise InputError.single(source, "", f"cannot read the {what} ({exc.strerror or exc}).",
                                "check the path and its permissions.") from None


def not_a_file(path: Path) -> str:
    """What a path that is not a readable regular file is: ``not found``, ``is a directory``, ``is a FIFO``, ..."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            return "is a symbolic link loop"
        return "not found"
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a FIFO, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a file"
    return "is not a regular file"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


# --- YAML: dbx_ai_infra.dbxtypes.yamldoc, imported when a YAML document is read ---------------------------------

def _yaml() -> ModuleType:
    from dbx_ai_infra.dbxtypes import yamldoc

    return yamldoc


def compose_yaml(text: str, source: str) -> Any:
    """`dbx_ai_infra.dbxtypes.yamldoc.compose_yaml`: the node graph of a YAML 1.2 document."""
    return _yaml().compose_yaml(text, source)


def data_of(root: Any, source: str) -> Any:
    """`dbx_ai_infra.dbxtypes.yamldoc.data_of`: the data of a node graph."""
    return _yaml().data_of(root, source)


def parse_yaml(text: str, source: str) -> Any:
    """`dbx_ai_infra.dbxtypes.yamldoc.parse_yaml`: YAML 1.2 text as data."""
    return _yaml().parse_yaml(text, source)


def key_lines(root: Any, path: tuple[str, ...] = ()) -> dict[str, int]:
    """`dbx_ai_infra.dbxtypes.yamldoc.key_lines`: the line of each key of the mapping at ``path``."""
    return _yaml().key_lines(root, path)


def parse_packaged_yaml(text: str, source: str) -> Any:
    """`dbx_ai_infra.dbxtypes.yamldoc.parse_packaged_yaml`: a data file shipped with the project."""
    return _yaml().parse_packaged_yaml(text, source)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: a repeated key would otherwise keep its last value silently."""
    seen = dict(pairs)
    if len(seen) != len(pairs):  # rare: find the repeated key for the message
        keys: set[str] = set()
        for key, _ in pairs:
            if key in keys:
                raise ValueError(f"key {clip(key)} is given twice in the same object")
            keys.add(key)
    return seen


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e400: Python reads it as infinity, which no field means
        raise ValueError(f"the number {cut(text, 40)} is too large to be a number of any field (it reads as infinity)")
    return value


def parse_json(text: str, source: str) -> Any:
    """JSON text as data; a syntax error names its line and column."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                          object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError.single(source, "", f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.",
                                "correct the JSON there.") from None
    except ValueError as exc:  # NaN, Infinity, a repeated key, a number Python will not read
        number = number_problem(exc)
        if number is not None:
            raise InputError.single(source, "", f"{number[0]}.", number[1]) from None
        fix = "keep one of them." if "twice" in str(exc) else "write a finite number (NaN and Infinity are not JSON)."
        raise InputError.single(source, "", f"{exc}.", fix) from None
    except RecursionError:
        raise InputError.single(source, "", "is nested too deeply to read.", "pass the export as Databricks "
                                "writes it.") from None


def json_decoder() -> json.JSONDecoder:
    """The decoder `parse_json` reads with (no NaN, no repeated keys), for reading a document piece by piece
    (``raw_decode``)."""
    return json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys)


def parse_json_stream(text: str, source: str) -> list[Any]:
    """One JSON document, or several written one after another (paged API exports concatenated, JSON lines), as a
    list of documents; the same checks as `parse_json` (no NaN, no repeated keys)."""
    try:
        return [parse_json(text, source)]
    except InputError as exc:
        if "Extra data" not in str(exc):
            raise
    decoder = json_decoder()
    docs: list[Any] = []
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return docs
        try:
            doc, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            raise InputError.single(source, "", f"not valid JSON at line {exc.lineno}, column {exc.colno} (document "
                                    f"{len(docs) + 1}): {exc.msg}.", "correct the JSON there.") from None
        except ValueError as exc:
            number = number_problem(exc)
            raise InputError.single(source, "", f"{number[0] if number else exc}.",
                                    number[1] if number else "correct the JSON there.") from None
        docs.append(doc)


def read_document(path: str | Path, what: str, *, fix_missing: str = "pass an existing file.") -> Any:
    """A JSON or YAML file as data: YAML for ``.yaml``/``.yml``, JSON otherwise."""
    text = read_text(path, what, fix_missing=fix_missing)
    if Path(path).suffix.lower() in (".yaml", ".yml"):
        return parse_yaml(text, str(path))
    return parse_json(text, str(path))
