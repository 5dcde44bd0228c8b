"""Reading input documents (JSON or YAML files): one reader, one set of messages, every failure an `InputError`.

Stack files, price overrides, the policy config, plan and cluster JSON, and the packaged data files all come
through here, so a missing, unreadable, non-UTF-8 or malformed file reads the same whichever input it is.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.constructor import DuplicateKeyError, SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from .errors import InputError, clip, cut

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
        return p.read_bytes().decode("utf-8")
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


#: Most nodes a YAML document may expand to through anchors and aliases (an "alias bomb" of a few hundred bytes
#: expands to billions); far above any stack or data file of this project.
MAX_YAML_NODES = 200_000


def _expanded_nodes(text: str, source: str) -> None:
    """Count the nodes the document expands to, from its parse events, before building anything; refuse a
    document whose aliases expand it beyond `MAX_YAML_NODES`."""
    sizes: dict[str, int] = {}
    open_nodes: list[list[Any]] = []  # [anchor, size] of the collections being read
    total = 0
    for event in YAML(typ="safe", pure=True).parse(text):
        kind = type(event).__name__
        if kind in ("MappingStartEvent", "SequenceStartEvent"):
            open_nodes.append([getattr(event, "anchor", None), 1])
            continue
        if kind in ("MappingEndEvent", "SequenceEndEvent"):
            anchor, size = open_nodes.pop()
            if anchor:
                sizes[anchor] = size
        elif kind == "AliasEvent":
            size = sizes.get(event.anchor, 1)
        elif kind == "ScalarEvent":
            size = 1
            if getattr(event, "anchor", None):
                sizes[event.anchor] = 1
        else:
            continue
        if open_nodes:
            open_nodes[-1][1] += size
        else:
            total += size
        if total > MAX_YAML_NODES or any(n[1] > MAX_YAML_NODES for n in open_nodes[-1:]):
            raise InputError.single(source, "", f"its anchors and aliases expand it beyond {MAX_YAML_NODES:,} "
                                    f"nodes.", "write the values out, without nested aliases.")


class _CoreConstructor(SafeConstructor):
    """YAML 1.2's core schema has no timestamps: ``2027-02-30`` (or ``2027-02-28``) is a string, as the Pulumi CLI
    reads it. The field that wants a date parses it, so an impossible one is a clear error, not a ValueError."""


_CoreConstructor.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)


def _reader() -> YAML:
    yaml = YAML(typ="safe", pure=True)
    yaml.Constructor = _CoreConstructor
    return yaml


def parse_yaml(text: str, source: str) -> Any:
    """YAML text as data, read with YAML 1.2 core semantics, as the Pulumi CLI reads stack files: ``no``, ``on``
    and ``yes`` stay strings, ``1e-300`` is a number, ``2027-03-31`` is a string. A syntax error names its line and
    column; a key given twice in one mapping is an error (the CLI would keep only one of them); aliases may not
    expand the document beyond `MAX_YAML_NODES` nodes."""
    try:
        _expanded_nodes(text, source)
        return _reader().load(text)
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
    except ValueError as exc:  # a number Python will not read (over 4,300 digits)
        number = _number_problem(exc)
        if number is None:
            raise
        raise InputError.single(source, "", f"{number[0]}.", number[1]) from None


def key_lines(tree: Any, path: tuple[str, ...] = ()) -> dict[str, int]:
    """The 1-based line of each key of the mapping at ``path`` (``("config",)`` for a stack file's settings) in a
    document parsed by `parse_with_lines`; empty when there is no such mapping. One parse serves every mapping."""
    node = tree
    for key in path:
        node = node.get(key) if hasattr(node, "get") else None
    if not hasattr(node, "lc") or not hasattr(node, "keys"):
        return {}
    return {str(key): node.lc.key(key)[0] + 1 for key in node.keys()}


def parse_with_lines(text: str) -> Any:
    """The round-trip tree of a YAML document that `parse_yaml` has accepted: mappings that know each key's line,
    for `key_lines`. Parse once per file: ruamel's round-trip parser is pure Python."""
    return YAML(typ="rt", pure=True).load(text)


def parse_packaged_yaml(text: str, source: str) -> Any:
    """A data file shipped with the project (the node and serving catalogs, the rates), read with PyYAML's C loader:
    20x faster than the strict YAML 1.2 reader that user input goes through. The shipped files are ours, and a test
    checks that both readers give them the same data (tests/test_dbxtypes.py); where the C extension is missing,
    PyYAML's pure-Python safe loader reads them the same way."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise InputError.single(source, "", f"YAML error: {str(exc).splitlines()[0]}.",
                                "restore the file from the repository.") from None


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


def _number_problem(exc: ValueError) -> tuple[str, str] | None:
    """A number Python will not read: (problem, fix), instead of its own limit text."""
    if "digits" in str(exc) and "limit" in str(exc):
        return ("holds a number of more than 4,300 digits", "write the number as it is meant (every number Databricks "
                "takes fits in 64 bits).")
    if "too large" in str(exc):
        return (str(exc), "write the number as it is meant.")
    return None


def parse_json(text: str, source: str) -> Any:
    """JSON text as data; a syntax error names its line and column."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                          object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError.single(source, "", f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.",
                                "correct the JSON there.") from None
    except ValueError as exc:  # NaN, Infinity, a repeated key, a number Python will not read
        number = _number_problem(exc)
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
            number = _number_problem(exc)
            raise InputError.single(source, "", f"{number[0] if number else exc}.",
                                    number[1] if number else "correct the JSON there.") from None
        docs.append(doc)


def read_document(path: str | Path, what: str, *, fix_missing: str = "pass an existing file.") -> Any:
    """A JSON or YAML file as data: YAML for ``.yaml``/``.yml``, JSON otherwise."""
    text = read_text(path, what, fix_missing=fix_missing)
    if Path(path).suffix.lower() in (".yaml", ".yml"):
        return parse_yaml(text, str(path))
    return parse_json(text, str(path))
