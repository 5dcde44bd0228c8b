"""The values of one module instance of Terraform code, as Terraform evaluates them: what an expression may name
(`Scope`: ``var``, ``local``, ``each``, ``count``, ``path``, ``terraform``, resources, data sources, module
outputs), the values python-hcl2 gives (strings holding expressions, lists, objects, blocks) evaluated
(`value`), ``dynamic`` blocks expanded into the blocks they make, and variables converted to their declared types
(`typed_variable`).

Unknown here, as in a plan (`dbx_ai_infra.sources.tfvalues.Unknown`): a data source's attributes, a module's
outputs, a resource's attributes other than ``id`` (its ``id`` is its address, as the plan reader names an id
known only after apply), ``self``, a variable with no value, a function not implemented.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbx_ai_infra.sources import tfexpr
from dbx_ai_infra.sources.tfeval import EvalError, evaluate
from dbx_ai_infra.sources.tftypes import TypeError_, read_type
from dbx_ai_infra.sources.tfvalues import ANY, ConversionError, ResourceInstance, SetValue, Type, Unknown, convert

#: The largest file ``file()`` / ``templatefile()`` read (bytes); a larger one is unknown, with a note.
MAX_FILE = 4 * 1024 * 1024


@functools.lru_cache(maxsize=16384)
def parsed(text: str) -> tfexpr.Node:
    """A string python-hcl2 gives, parsed once (the same text recurs in every instance of a block)."""
    return tfexpr.source(text)


@dataclass
class Scope:
    """What an expression of one module instance may name."""

    prefix: str  # the module instance's address prefix: "" or 'module.serving["chat"].'
    variables: Mapping[str, Any]
    locals_raw: Mapping[str, Any]
    notes: list[str]
    each: tuple[Any, Any] | None = None
    count: int | None = None
    directory: Path = Path(".")
    root: Path = Path(".")
    _locals: dict[str, Any] = field(default_factory=dict)
    #: The module's resource blocks by ``type.name`` (a whole resource named as a value: `_whole_resource`).
    resources: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def instance(self, each: tuple[Any, Any] | None = None, count: int | None = None) -> Scope:
        """The scope of one instance of a block with ``count`` or ``for_each``."""
        return Scope(self.prefix, self.variables, self.locals_raw, self.notes, each, count, self.directory,
                     self.root, self._locals, self.resources)

    def local(self, name: str) -> Any:
        if name not in self._locals:
            self._locals[name] = Unknown(ANY, f"local.{name} refers to itself")
            if name not in self.locals_raw:
                self.note(f"{self.prefix}local.{name} is not defined: its value is unknown")
            self._locals[name] = value(self.locals_raw[name], self) if name in self.locals_raw \
                else Unknown(ANY, f"local.{name} is not defined")
        return self._locals[name]

    def note(self, text: str) -> None:
        self.notes.append(text)

    def read_file(self, path: str) -> str:
        """A file ``file()`` names: relative to the root module's directory, as Terraform reads it from there."""
        where = Path(path) if Path(path).is_absolute() else self.root / path
        try:
            if where.stat().st_size > MAX_FILE:
                raise EvalError(f"{path} is larger than {MAX_FILE:,} bytes")
            return where.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EvalError(f"file {path} cannot be read here: {exc}") from None

    def list_files(self, path: str, pattern: str) -> list[str]:
        """``fileset(path, pattern)``: relative to the root module's directory, as Terraform reads it from there;
        at most `MAX_FILESET` files looked at."""
        where = Path(path) if Path(path).is_absolute() else self.root / path
        return fileset(where, pattern)

    def reference(self, root: str, steps: list[Any]) -> tuple[Any, int]:
        return _ROOTS.get(root, _resource)(self, root, steps)


#: The most files ``fileset()`` looks at under its path (a bound: a pattern over a huge tree stays fast).
MAX_FILESET = 10_000


def _glob(pattern: str) -> re.Pattern[str]:
    """A ``fileset`` pattern (Terraform's docs: ``*`` within a name, ``**`` across directories, ``?``,
    ``{a,b}``, ``[class]``, ``[^class]``) as a regular expression over a path with ``/``."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "{":
            end = pattern.find("}", i)
            if end < 0:
                raise EvalError(f"fileset(): the pattern {pattern!r} has an unclosed {{")
            out.append("(?:" + "|".join(re.escape(a) for a in pattern[i + 1:end].split(",")) + ")")
            i = end
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                raise EvalError(f"fileset(): the pattern {pattern!r} has an unclosed [")
            body = pattern[i + 1:end]
            out.append("[" + ("^" + re.escape(body[1:]) if body[:1] in "^!" else re.escape(body)) + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def fileset(where: Path, pattern: str) -> list[str]:
    """The regular files under ``where`` whose path relative to it (``/``-separated, hidden files too, as
    terraform 1.11.4 lists them) matches ``pattern``, sorted; none when ``where`` is no directory."""
    matcher, found, seen = _glob(pattern), [], 0
    for directory, _dirs, files in os.walk(where):
        for name in files:
            seen += 1
            if seen > MAX_FILESET:
                raise EvalError(f"fileset({where}): more than {MAX_FILESET:,} files under it")
            full = Path(directory) / name
            relative = full.relative_to(where).as_posix()
            if matcher.match(relative) and full.is_file():
                found.append(relative)
    return sorted(found)


def _var(scope: Scope, root: str, steps: list[Any]) -> tuple[Any, int]:
    if not steps:
        raise EvalError("var must be followed by a variable's name")
    name = str(steps[0])
    if name not in scope.variables:
        scope.note(f"{scope.prefix}var.{name} is not declared: its value is unknown")
        return Unknown(ANY, f"var.{name} is not declared"), 1
    return scope.variables[name], 1


def _local(scope: Scope, root: str, steps: list[Any]) -> tuple[Any, int]:
    if not steps:
        raise EvalError("local must be followed by a local value's name")
    return scope.local(str(steps[0])), 1


def _each(scope: Scope, root: str, steps: list[Any]) -> tuple[Any, int]:
    if scope.each is None:  # a block read once, not per instance (a data source's arguments): not known here
        return Unknown(ANY, "each of a block not expanded here"), len(steps)
    if not steps:
        return Unknown(ANY, "each whole"), 0
    if steps[0] not in ("key", "value"):
        raise EvalError(f"each has no attribute {steps[0]}")
    return scope.each[0] if steps[0] == "key" else scope.each[1], 1


def _count(scope: Scope, root: str, steps: list[Any]) -> tuple[Any, int]:
    if scope.count is None:
        return Unknown(ANY, "count.index of a block not expanded here"), len(steps)
    if steps[:1] != ["index"]:
        raise EvalError("count has only the attribute index")
    return scope.count, 1


def _path(scope: Scope, root: str, steps: list[Any]) -> tuple[Any, int]:
    # as Terraform gives them, run in the root module's directory: path.root ".", path.module relative to it
    # ("modules/x"), path.cwd absolute; file(), templatefile() and fileset() read relative paths from the root
    module = Path(os.path.relpath(scope.directory, scope.root)).as_posix() if scope.directory != scope.root else "."
    return {"module": module, "root": ".", "cwd": str(Path(scope.root).resolve())}, 0


def _terraform(scope: Scope, root: str, steps: list[Any]) -> tuple[Any, int]:
    return {"workspace": "default"}, 0


def _after_apply(scope: Scope, root: str, steps: list[Any]) -> tuple[Any, int]:
    named = ".".join(str(s) for s in [root, *steps[:3]])
    return Unknown(ANY, f"{named} is known only after apply"), len(steps)


def _resource(scope: Scope, root: str, steps: list[Any]) -> tuple[Any, int]:
    """A resource's ``id`` is its address (an id known after apply, as the plan reader names it); any other
    attribute is unknown."""
    if not steps:
        raise EvalError(f'"{root}" is not a name Terraform knows here')
    body = scope.resources.get(f"{root}.{steps[0]}")
    if body is not None and ("count" in body or "for_each" in body):
        return _whole_resource(scope, root, str(steps[0]), body), 1
    if len(steps) >= 2 and steps[1] == "id":
        return f"{scope.prefix}{root}.{steps[0]}", 2
    if len(steps) >= 3 and steps[2] == "id" and isinstance(steps[1], (str, int)) and not isinstance(steps[1], bool):
        key = f"[{steps[1]}]" if isinstance(steps[1], int) else f'["{steps[1]}"]'
        return f"{scope.prefix}{root}.{steps[0]}{key}", 3
    return _after_apply(scope, root, steps)


#: The resources whose ``count`` or ``for_each`` is being read (a resource whose expansion names itself: a cycle).
_EXPANDING: set[str] = set()


def _whole_resource(scope: Scope, rtype: str, name: str, body: Mapping[str, Any]) -> Any:
    """A resource with ``count`` or ``for_each`` named as a value (``for_each = databricks_job.x``), as Terraform
    gives it: with ``for_each`` a map of its instances by key, with ``count`` a list (terraform 1.11.4 plans
    ``for_each = terraform_data.x`` over x's keys, and refuses the list of a ``count``: "must be a map, or set of
    strings, and you have provided a value of type tuple"). Each instance is a `ResourceInstance`: its ``id`` is its
    address (as the plan reader names an id known after apply), its other attributes unknown. Unknown when the
    count or for_each is not known here."""
    address = f"{scope.prefix}{rtype}.{name}"
    if address in _EXPANDING:
        return Unknown(ANY, f"{address} refers to itself")
    _EXPANDING.add(address)
    try:
        base = scope.instance()
        if "count" in body:
            count = value(body["count"], base)
            if isinstance(count, bool) or not isinstance(count, (int, float)) or count < 0 or count != int(count):
                return Unknown(ANY, f"the count of {address} is not known here")
            return [ResourceInstance(id=f"{address}[{i}]") for i in range(int(count))]
        each = value(body["for_each"], base)
        keys = list(each) if isinstance(each, (dict, list)) else None
        if keys is None or not all(isinstance(k, str) for k in keys):
            return Unknown(ANY, f"the for_each of {address} is not known here")
        return {k: ResourceInstance(id=f'{address}["{k}"]') for k in keys}
    finally:
        _EXPANDING.discard(address)


_ROOTS = {"var": _var, "local": _local, "each": _each, "count": _count, "path": _path, "terraform": _terraform,
          "data": _after_apply, "module": _after_apply, "self": _after_apply}


# --------------------------------------------------------------------------------------------------------------------
# Values as python-hcl2 gives them
# --------------------------------------------------------------------------------------------------------------------

def value(raw: Any, scope: Scope, symbols: dict[str, Any] | None = None) -> Any:
    """A value as python-hcl2 gives it (literals, lists, objects, blocks, strings holding templates), evaluated; an
    expression Terraform would refuse, or one this reader cannot parse, is unknown with a note."""
    if isinstance(raw, str):
        return expression(raw, scope, symbols)
    if isinstance(raw, list):
        return [value(v, scope, symbols) for v in raw]
    if isinstance(raw, dict):
        dynamic = _is_dynamic(raw.get("dynamic"))
        out = {_key(k, scope, symbols): value(v, scope, symbols) for k, v in raw.items()
               if not k.startswith("__") and not (k == "dynamic" and dynamic)}
        if dynamic:
            _expand_dynamic(raw["dynamic"], out, scope, symbols)
        return out
    return raw


def _is_dynamic(raw: Any) -> bool:
    """``dynamic "label" { ... }`` blocks as python-hcl2 gives them (a list of ``{label: {for_each, content}}``),
    not an attribute named ``dynamic`` (``tags = { dynamic = "x" }``)."""
    return isinstance(raw, list) and bool(raw) and all(
        isinstance(block, dict) and all(isinstance(body, dict) and "content" in body
                                        for label, body in block.items() if not label.startswith("__"))
        for block in raw)


def _key(key: str, scope: Scope, symbols: dict[str, Any] | None) -> str:
    """An object key as python-hcl2 gives it: a name, or a template (``"${var.k}"``)."""
    if "${" not in key:
        return key
    got = expression(key, scope, symbols)
    return got if isinstance(got, str) else key


def expression(text: str, scope: Scope, symbols: dict[str, Any] | None = None) -> Any:
    """One string python-hcl2 gives (a template, an expression as ``${...}``, a heredoc), evaluated."""
    written = _parenthesized(text)
    if written is not None:
        return value(written, scope, symbols)
    try:
        return evaluate(parsed(text), scope, symbols)
    except tfexpr.ParseError as exc:
        why = f"{text[:80]!r} is not read here ({exc})"
    except EvalError as exc:
        why = f"{text[:80]!r}: {exc}"
    except RecursionError:
        why = f"{text[:80]!r} is nested too deeply to evaluate"
    scope.note(f"{scope.prefix.rstrip('.') or 'the module'}: {why}; its value is unknown")
    return Unknown(ANY, why)


_PARENTHESIZED = re.compile(r"^\$\{\((\{.*\}|\[.*\])\)\}$", re.S)


def _parenthesized(text: str) -> Any:
    """An object or tuple in parentheses (``tags = ({ ... })``), which python-hcl2 8.1 writes as the Python
    ``repr`` of what it read inside (``"${({'a': '${var.x}'})}"``): that value, as python-hcl2 would have given it
    without the parentheses; None for any other string."""
    found = _PARENTHESIZED.match(text) if text.startswith("${(") else None
    if found is None:
        return None
    try:
        return ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _expand_dynamic(raw: Any, out: dict[str, Any], scope: Scope, symbols: dict[str, Any] | None) -> None:
    """``dynamic "label" { for_each, iterator, content }`` blocks, each made into the ``label`` blocks it makes,
    after the ``label`` blocks written as such (python-hcl2 does not keep their order among each other); a
    ``for_each`` that is unknown makes ``label`` unknown (a plan knows neither how many there are nor what)."""
    for block in raw if isinstance(raw, list) else [raw]:
        for label, body in (block.items() if isinstance(block, dict) else ()):
            if not isinstance(body, dict) or label.startswith("__"):
                continue
            made = _dynamic_blocks(label, body, scope, symbols)
            existing = out.get(label, [])
            if isinstance(made, Unknown) or isinstance(existing, Unknown):
                out[label] = made if isinstance(made, Unknown) else existing
            else:
                out[label] = [*(existing if isinstance(existing, list) else [existing]), *made]


def _dynamic_blocks(label: str, body: dict[str, Any], scope: Scope, symbols: dict[str, Any] | None) -> Any:
    collection = value(body.get("for_each"), scope, symbols)
    iterator = str(body.get("iterator") or label).removeprefix("${").removesuffix("}")
    if isinstance(collection, Unknown):
        return Unknown(ANY, f'dynamic "{label}": its for_each is known only after apply'
                       + (f" ({collection.why})" if collection.why else ""))
    if isinstance(collection, dict):
        items = [(k, collection[k]) for k in sorted(collection)]
    elif isinstance(collection, list):  # a set's key is the element, a list's its index (Terraform's dynamic)
        items = [(v, v) for v in collection] if isinstance(collection, SetValue) else list(enumerate(collection))
    else:
        scope.note(f'{scope.prefix}dynamic "{label}": for_each is no collection: its blocks are unknown')
        return Unknown(ANY, f'dynamic "{label}": for_each is no collection')
    contents = [c for c in (body.get("content") or []) if isinstance(c, dict)]
    made: list[Any] = []
    for key, item in items:
        inner = {**(symbols or {}), iterator: {"key": key, "value": item}}
        made.extend(value(content, scope, inner) for content in contents)
    return made


# --------------------------------------------------------------------------------------------------------------------
# Variables
# --------------------------------------------------------------------------------------------------------------------

class VariableError(ValueError):
    """A variable's value that its declared type refuses (Terraform's "Invalid value for input variable")."""


def declared_type(raw: Any, scope: Scope) -> Type:
    """A variable's ``type`` (`ANY` when it has none); `VariableError` for one Terraform would not read."""
    try:
        return read_type(raw, lambda node: evaluate(node, scope))
    except (TypeError_, EvalError) as exc:
        raise VariableError(f"type {raw!r} {exc}") from None


def typed_variable(given: Any, type_: Type) -> Any:
    """A variable's value converted to its type, ``optional()`` defaults applied, as Terraform sets it."""
    try:
        return convert(given, type_)
    except ConversionError as exc:
        raise VariableError(f"{exc} (the variable's type is {type_})") from None


def environment_value(text: str, type_: Type) -> Any:
    """A ``TF_VAR_<name>`` value, read as Terraform reads it: the text itself for a variable of a primitive type or
    of none; an HCL expression (``["a"]``, ``{a = 1}``) for a collection or object type."""
    if type_.kind in ("string", "number", "bool", "any"):
        return text
    try:
        return evaluate(tfexpr.parse(text), _NOTHING)
    except (tfexpr.ParseError, EvalError) as exc:
        raise VariableError(f"{text!r} is not an HCL value of type {type_} ({exc})") from None


class _Nothing:
    """The scope of a value given outside the code (``TF_VAR_``): literals only."""

    directory = Path(".")

    def reference(self, root: str, steps: list[Any]) -> tuple[Any, int]:
        raise EvalError(f"a variable's value cannot refer to {root}")

    def note(self, text: str) -> None:
        return None

    def read_file(self, path: str) -> str:
        raise EvalError("a variable's value cannot read files")

    def list_files(self, path: str, pattern: str) -> list[str]:
        raise EvalError("a variable's value cannot list files")


_NOTHING = _Nothing()
