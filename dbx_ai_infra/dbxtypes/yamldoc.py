"""YAML documents: stack files as the Pulumi CLI reads them (YAML 1.2), and the data files we ship.

Imported when a YAML document is read (`dbx_ai_infra.dbxtypes.documents` calls it): PyYAML and the classes below
are about 10 ms of a start, which a command that reads only JSON (an audit of a workspace export) does not pay.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from typing import Any

import yaml

from .errors import InputError, number_problem

#: Most nodes a YAML document may expand to through anchors and aliases (an "alias bomb" of a few hundred bytes
#: expands to billions); far above any stack or data file of this project.
MAX_YAML_NODES = 200_000

# --- YAML 1.2 (core schema) on PyYAML's C parser ----------------------------------------------------------------
# Stack files are read as the Pulumi CLI reads them, YAML 1.2: ``yes``, ``no`` and ``on`` are strings, ``012`` is
# twelve, dates are strings. PyYAML parses (in C, libyaml) and composes the node graph; the resolver and the
# constructor below give the scalars their YAML 1.2 types, the same readings as ruamel.yaml's 1.2 loader, which read
# them before (a test holds the two to the same answers over a corpus of edge cases). One parse of the file gives the
# data, the line of every key (`key_lines`), and the node count that stops an alias bomb before anything is built.

_PLAIN_YAML12: tuple[tuple[str, str, str], ...] = (  # tag, pattern, first characters (ruamel.yaml's 1.2 resolver)
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)$", "-+0123456789"),
    ("float", r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", "-+0123456789."),
    ("merge", r"^(?:<<)$", "<"),
    ("null", r"^(?:~|null|Null|NULL|)$", "~nN\0"),
)


class _Resolver12(yaml.resolver.BaseResolver):
    """Plain scalars resolved by YAML 1.2's core schema (no YAML 1.1 booleans, octals, sexagesimals or dates)."""


for _tag, _pattern, _first in _PLAIN_YAML12:
    _Resolver12.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern, re.X),
                                      [("" if c == "\0" else c) for c in _first])


class _DuplicateKey(yaml.MarkedYAMLError):
    def __init__(self, key: Any, mark: Any) -> None:
        super().__init__(problem=f"found duplicate key {key!r}", problem_mark=mark)
        self.key = key


class _Constructor12(yaml.constructor.SafeConstructor):
    """Numbers as YAML 1.2 reads them (``012`` is 12, ``0o12`` is 8 + 2, ``1_000`` is 1000), dates as strings, and a
    key given twice in one mapping an error (PyYAML would keep the last one silently)."""

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = str(self.construct_scalar(node)).replace("_", "")
        sign, digits = (-1, text[1:]) if text[:1] == "-" else (1, text.lstrip("+"))
        base = {"0b": 2, "0o": 8, "0x": 16}.get(digits[:2], 10)
        try:
            return sign * int(digits[2:] if base != 10 else digits, base)
        except ValueError as exc:
            if "limit" in str(exc):  # over Python's 4,300 digits: `number_problem` words it
                raise
            raise yaml.constructor.ConstructorError(None, None, f"{text!r} is not an integer",
                                                    node.start_mark) from None

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        text = str(self.construct_scalar(node)).replace("_", "").lower()
        sign, body = (-1.0, text[1:]) if text[:1] == "-" else (1.0, text.lstrip("+"))
        if body == ".inf":
            return sign * math.inf
        if body == ".nan":
            return math.nan
        try:
            return sign * float(body)
        except ValueError:
            raise yaml.constructor.ConstructorError(None, None, f"{text!r} is not a number",
                                                    node.start_mark) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                if key in seen:
                    raise _DuplicateKey(key, key_node.start_mark)
                seen.add(key)
            except TypeError:  # an unhashable key: SafeConstructor names it
                break
        return super().construct_mapping(node, deep=deep)


# (types-PyYAML types add_constructor for loader classes only)
_Constructor12.add_constructor("tag:yaml.org,2002:int", _Constructor12.construct_yaml_int)  # type: ignore[type-var]
_Constructor12.add_constructor("tag:yaml.org,2002:float", _Constructor12.construct_yaml_float)  # type: ignore[type-var]
_Constructor12.add_constructor("tag:yaml.org,2002:timestamp",  # type: ignore[type-var]
                               yaml.constructor.SafeConstructor.construct_yaml_str)

class _PyLoader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer,
                _Constructor12, _Resolver12):
    """PyYAML's pure-Python parser with the YAML 1.2 resolver, where PyYAML was built without libyaml."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _Constructor12.__init__(self)
        _Resolver12.__init__(self)


_CParser: Any = getattr(getattr(yaml, "cyaml", None), "CParser", None)
if _CParser is not None:
    class _CLoader(_CParser, _Constructor12, _Resolver12):
        """libyaml's parser (C) with the YAML 1.2 resolver: what PyYAML's wheels carry."""

        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            _Constructor12.__init__(self)
            _Resolver12.__init__(self)

    _LOADER: Any = _CLoader
else:  # pragma: no cover - PyYAML without libyaml
    _LOADER = _PyLoader


def _node_count(root: Any, source: str) -> int:
    """How many nodes the document expands to with its aliases followed (each shared node counted where it is
    used); a node inside itself (a recursive alias) expands without end. Worked out on the node graph, before any
    value is built, each node once."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise InputError.single(source, "", "an alias refers to the node that holds it, so it expands without "
                                    "end.", "write the values out, without an alias inside its own anchor.")
        total = 1
        if isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            open_nodes.add(key)
            children = node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]
            for child in children:
                total += size(child)
                if total > MAX_YAML_NODES:
                    break
            open_nodes.discard(key)
        sizes[key] = total
        return total

    try:
        return size(root)
    except RecursionError:
        raise InputError.single(source, "", "is nested too deeply to read.", "write it with fewer levels.") from None


@contextlib.contextmanager
def _yaml_errors(source: str) -> Iterator[None]:
    """What parsing or building a YAML document raises, as the `InputError` that names the file, the place and the
    fix."""
    try:
        yield
    except _DuplicateKey as exc:
        mark = exc.problem_mark
        again = f" (again at line {mark.line + 1})" if mark is not None else ""
        raise InputError.single(source, str(exc.key), f"is given twice in the same mapping{again}.",
                                "keep one of them.") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = exc.problem or str(exc).splitlines()[0]
        raise InputError.single(source, "", f"YAML syntax error{at}: {problem}.",
                                "correct the YAML there (indentation, a missing ':' or quote).") from None
    except yaml.YAMLError as exc:
        raise InputError.single(source, "", f"YAML error: {str(exc).splitlines()[0]}.",
                                "correct the YAML there.") from None
    except RecursionError:
        raise InputError.single(source, "", "is nested too deeply to read.", "write it with fewer levels.") from None
    except ValueError as exc:  # a number Python will not read (over 4,300 digits)
        number = number_problem(exc)
        if number is None:
            raise
        raise InputError.single(source, "", f"{number[0]}.", number[1]) from None


def compose_yaml(text: str, source: str) -> Any:
    """The YAML node graph of ``text`` (None for an empty document), every node knowing its line; raises an
    `InputError` for a syntax error or a document whose aliases expand beyond `MAX_YAML_NODES` nodes."""
    loader = _LOADER(text)
    try:
        with _yaml_errors(source):
            root = loader.get_single_node()
    finally:
        loader.dispose()
    if root is not None and _node_count(root, source) > MAX_YAML_NODES:
        raise InputError.single(source, "", f"its anchors and aliases expand it beyond {MAX_YAML_NODES:,} "
                                f"nodes.", "write the values out, without nested aliases.")
    return root


def data_of(root: Any, source: str) -> Any:
    """The data of a node graph from `compose_yaml`: mappings as dicts, sequences as lists, scalars typed by YAML
    1.2's core schema. A key given twice in one mapping is an error (the CLI would keep only one of them)."""
    if root is None:
        return None
    with _yaml_errors(source):
        return _Constructor12().construct_document(root)


def parse_yaml(text: str, source: str) -> Any:
    """YAML text as data, read with YAML 1.2 core semantics, as the Pulumi CLI reads stack files: ``no``, ``on``
    and ``yes`` stay strings, ``1e-300`` is a number, ``2027-03-31`` is a string. A syntax error names its line and
    column; a key given twice in one mapping is an error (the CLI would keep only one of them); aliases may not
    expand the document beyond `MAX_YAML_NODES` nodes."""
    return data_of(compose_yaml(text, source), source)


def key_lines(root: Any, path: tuple[str, ...] = ()) -> dict[str, int]:
    """The 1-based line of each key of the mapping at ``path`` (``("config",)`` for a stack file's settings) in a
    node graph from `compose_yaml`; empty when there is no such mapping. One parse serves every mapping."""
    node = root
    for key in path:
        if not isinstance(node, yaml.MappingNode):
            return {}
        node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)
    if not isinstance(node, yaml.MappingNode):
        return {}
    lines: dict[str, int] = {}
    for k, _ in node.value:
        if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
            lines.setdefault(k.value, k.start_mark.line + 1)
    return lines


def parse_packaged_yaml(text: str, source: str) -> Any:
    """A data file shipped with the project (the node and serving catalogs, the rates), read with PyYAML's own C
    loader (YAML 1.1, a fifth faster than the strict YAML 1.2 reader that user input goes through). The shipped files
    are ours, and a test checks that both readers give them the same data (tests/test_dbxtypes.py); where the C
    extension is missing, PyYAML's pure-Python safe loader reads them the same way."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise InputError.single(source, "", f"YAML error: {str(exc).splitlines()[0]}.",
                                "restore the file from the repository.") from None
