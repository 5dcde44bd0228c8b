"""The evaluation of an HCL expression tree (`dbx_ai_infra.sources.tfexpr`) as Terraform evaluates it, unknowns
included (`dbx_ai_infra.sources.tfvalues`): an operator or function with an unknown operand is unknown (of its result
type); a conditional whose condition is unknown is unknown unless both results are the same known value; ``try``
and ``can`` are unknown when what they would try depends on an unknown (hcl's ``tryfunc``); a ``for`` over an
unknown collection is unknown; a collection holding unknowns is known (its ``length`` is).

What a name refers to (``var.x``, ``local.y``, ``each.value``, a resource's ``id``) is the `Context`'s answer;
an error Terraform would report (an attribute an object lacks, a wrong operand type) raises `EvalError`, which
``try`` and ``can`` catch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from dbx_ai_infra.sources import tfexpr
from dbx_ai_infra.sources.tffunctions import AFTER_APPLY, FUNCTIONS, FunctionError
from dbx_ai_infra.sources.tfvalues import (
    ANY,
    BOOL,
    NUMBER,
    STRING,
    ConversionError,
    ResourceInstance,
    SetValue,
    Type,
    Unknown,
    equal,
    first_unknown,
    is_number,
    non_null,
    number,
    text_of,
    to_bool,
    to_number,
    type_name,
    unknown,
    wholly_known,
)

Node = tfexpr.Node


class EvalError(ValueError):
    """An expression Terraform would refuse to evaluate (its message says why)."""


class Context(Protocol):
    """What an expression of one module instance may name."""

    directory: Path  # the module's directory (``path.module``; ``file()`` reads relative to it)

    def reference(self, root: str, steps: list[Any]) -> tuple[Any, int]:
        """The value ``root`` with the leading ``steps`` (attribute names and index keys) names, and how many of
        the steps it took (the rest are applied to the value); raises `EvalError` for a name Terraform refuses."""

    def note(self, text: str) -> None:
        """Say what was not evaluated."""

    def read_file(self, path: str) -> str:
        """The text of a file ``file()`` or ``templatefile()`` names; raises `EvalError` for one not there."""

    def list_files(self, path: str, pattern: str) -> list[str]:
        """The files ``fileset()`` finds, sorted; raises `EvalError` where they cannot be listed."""


def evaluate(node: Node, context: Context, symbols: dict[str, Any] | None = None) -> Any:
    """The value of ``node``; ``symbols`` are the names a ``for`` or a ``dynamic`` block's iterator binds."""
    return _Evaluator(context).eval(node, symbols or {})


class _Evaluator:
    def __init__(self, context: Context) -> None:
        self.context = context

    def eval(self, node: Node, symbols: dict[str, Any]) -> Any:
        return _NODES[node[0]](self, node, symbols)

    # --- values and traversals -------------------------------------------------------------------------------------

    def literal(self, node: Node, symbols: dict[str, Any]) -> Any:
        return node[1]

    def template(self, node: Node, symbols: dict[str, Any]) -> Any:
        parts = node[1]
        if len(parts) == 1 and not isinstance(parts[0], str) and parts[0][0] not in ("if", "each"):
            return self.eval(parts[0], symbols)  # "${x}" alone is x itself, of its own type
        out: list[str] = []
        for part in parts:
            got = self.template_part(part, symbols)
            if isinstance(got, Unknown):
                return Unknown(STRING, got.why)
            out.append(got)
        return "".join(out)

    def template_part(self, part: Any, symbols: dict[str, Any]) -> Any:
        if isinstance(part, str):
            return part
        if part[0] == "if":
            condition = self.condition(self.eval(part[1], symbols))
            if isinstance(condition, Unknown):
                return condition
            return self.template(("tmpl", part[2] if condition else part[3] or [""]), symbols)
        if part[0] == "each":
            return self.template_for(part, symbols)
        got = self.eval(part, symbols)
        if isinstance(got, Unknown):
            return got
        return non_null(got, text_of, EvalError, "a template cannot interpolate a null value",
                        lambda _: f"a template cannot interpolate a {type_name(got)}")

    def template_for(self, part: Any, symbols: dict[str, Any]) -> Any:
        _, key_name, value_name, collection, body = part
        out: list[str] = []
        items = self.iterate(self.eval(collection, symbols))
        if isinstance(items, Unknown):
            return items
        for key, value in items:
            inner = {**symbols, value_name: value, **({key_name: key} if key_name else {})}
            got = self.template(("tmpl", body or [""]), inner)
            if isinstance(got, Unknown):
                return got
            out.append(got)
        return "".join(out)

    def variable(self, node: Node, symbols: dict[str, Any]) -> Any:
        return self.traverse(node, [], symbols)

    def step(self, node: Node, symbols: dict[str, Any]) -> Any:
        """An ``attr`` or ``index`` node: the traversal down to its root, resolved by the context at once (so
        ``databricks_instance_pool.gpu[0].id`` names the pool's address)."""
        steps: list[Node] = []
        while node[0] in ("attr", "index"):
            steps.insert(0, node)
            node = node[1]
        if node[0] == "var":
            return self.traverse(node, steps, symbols)
        return self.apply_steps(self.eval(node, symbols), steps, symbols)

    def traverse(self, root: Node, steps: list[Node], symbols: dict[str, Any]) -> Any:
        name = root[1]
        if name in symbols:
            return self.apply_steps(symbols[name], steps, symbols)
        keys: list[Any] = []
        for step in steps:
            key = step[2] if step[0] == "attr" else self.eval(step[2], symbols)
            if isinstance(key, Unknown):
                break
            keys.append(key)
        found, taken = self.context.reference(name, keys)
        return self.apply_steps(found, steps[taken:], symbols)

    def apply_steps(self, value: Any, steps: list[Node], symbols: dict[str, Any]) -> Any:
        for step in steps:
            key = step[2] if step[0] == "attr" else self.eval(step[2], symbols)
            value = get_attribute(value, key) if step[0] == "attr" else get_index(value, key)
        return value

    def splat(self, node: Node, symbols: dict[str, Any]) -> Any:
        source = self.eval(node[1], symbols)
        if isinstance(source, Unknown):
            return Unknown(Type("list", ANY), source.why)
        if source is None:
            return []
        items = source if isinstance(source, list) else [source]
        return [self.apply_steps(item, node[2], symbols) for item in items]

    # --- constructors and for ----------------------------------------------------------------------------------------

    def tuple_(self, node: Node, symbols: dict[str, Any]) -> Any:
        return [self.eval(item, symbols) for item in node[1]]

    def object_(self, node: Node, symbols: dict[str, Any]) -> Any:
        out: dict[str, Any] = {}
        for key_node, value_node in node[1]:
            key = self.eval(key_node, symbols)
            if isinstance(key, Unknown):
                return Unknown(Type("object", ANY), key.why)
            out[self.key(key)] = self.eval(value_node, symbols)
        return out

    @staticmethod
    def key(key: Any) -> str:
        if key is None or isinstance(key, (list, dict)):
            raise EvalError(f"an object key must be a string, not {type_name(key)}")
        return text_of(key)

    def iterate(self, collection: Any) -> Any:
        """``(key, value)`` pairs of a collection (a map's keys in Terraform's order), or an unknown."""
        if isinstance(collection, Unknown):
            return Unknown(ANY, collection.why)
        if isinstance(collection, dict):
            return [(k, collection[k]) for k in sorted(collection)]
        if isinstance(collection, SetValue):
            return [(v, v) for v in collection]
        if isinstance(collection, list):
            return list(enumerate(collection))
        raise EvalError(f"a for expression cannot iterate over a {type_name(collection)}")

    def for_(self, node: Node, symbols: dict[str, Any]) -> Any:
        _, key_name, value_name, collection, key_node, value_node, group, condition = node
        items = self.iterate(self.eval(collection, symbols))
        if isinstance(items, Unknown):
            return Unknown(Type("object" if key_node else "tuple", ANY), items.why)
        out_list: list[Any] = []
        out_map: dict[str, Any] = {}
        for key, value in items:
            inner = {**symbols, value_name: value, **({key_name: key} if key_name else {})}
            if condition is not None:
                keep = self.condition(self.eval(condition, inner))
                if isinstance(keep, Unknown):
                    return Unknown(ANY, keep.why)
                if not keep:
                    continue
            if key_node is None:
                out_list.append(self.eval(value_node, inner))
                continue
            name = self.eval(key_node, inner)
            if isinstance(name, Unknown):
                return Unknown(Type("object", ANY), name.why)
            self.put(out_map, self.key(name), self.eval(value_node, inner), group)
        return out_map if key_node is not None else out_list

    @staticmethod
    def put(out: dict[str, Any], name: str, value: Any, group: bool) -> None:
        if group:
            out.setdefault(name, []).append(value)
        elif name in out:
            raise EvalError(f'two elements of a for expression have the key "{name}" (group them with ...)')
        else:
            out[name] = value

    # --- conditionals and operators ----------------------------------------------------------------------------------

    @staticmethod
    def typed(value: Any, kind: Any, convert: Callable[[Any], Any], what: str, wrong: str) -> Any:
        """``value`` converted as an operator takes it (``convert``; an unknown stays unknown, now of ``kind``);
        null, or a value that does not convert, is an error naming ``what`` (``wrong``: the conversion's failure)."""
        if isinstance(value, Unknown):
            return Unknown(kind, value.why)
        return non_null(value, convert, EvalError, f"{what} cannot be null", lambda exc: f"{wrong}: {exc}")

    @classmethod
    def condition(cls, value: Any) -> Any:
        return cls.typed(value, BOOL, to_bool, "a condition", "a condition must be a bool")

    def conditional(self, node: Node, symbols: dict[str, Any]) -> Any:
        condition = self.condition(self.eval(node[1], symbols))
        if not isinstance(condition, Unknown):
            return self.eval(node[2] if condition else node[3], symbols)
        then, otherwise = self.eval(node[2], symbols), self.eval(node[3], symbols)
        if wholly_known(then) and wholly_known(otherwise) and equal(then, otherwise) is True:
            return then  # hcl: an unknown condition with two equal results is that result
        return unknown(ANY, condition)

    def unary(self, node: Node, symbols: dict[str, Any]) -> Any:
        operand = self.eval(node[2], symbols)
        if node[1] == "!":
            got = self.condition(operand)
            return got if isinstance(got, Unknown) else not got
        value = self.operand(operand)
        return value if isinstance(value, Unknown) else number(-value)

    @classmethod
    def operand(cls, value: Any) -> Any:
        return cls.typed(value, NUMBER, to_number, "an arithmetic operand", "an arithmetic operand")

    def binary(self, node: Node, symbols: dict[str, Any]) -> Any:
        _, op, left_node, right_node = node
        left, right = self.eval(left_node, symbols), self.eval(right_node, symbols)
        if op in ("==", "!="):
            same = equal(left, right)
            return same if isinstance(same, Unknown) else same is (op == "==")
        if op in ("&&", "||"):
            a, b = self.condition(left), self.condition(right)
            if isinstance(a, Unknown) or isinstance(b, Unknown):
                return unknown(BOOL, a, b)  # Terraform 1.11: `false && unknown` is unknown too
            return (a and b) if op == "&&" else (a or b)
        a, b = self.operand(left), self.operand(right)
        if isinstance(a, Unknown) or isinstance(b, Unknown):
            return unknown(BOOL if op in _COMPARISONS else NUMBER, a, b)
        return _ARITHMETIC[op](a, b)

    # --- function calls --------------------------------------------------------------------------------------------

    def call(self, node: Node, symbols: dict[str, Any]) -> Any:
        _, name, arg_nodes, expand = node
        special = _SPECIAL.get(name)
        if special is not None:
            return special(self, arg_nodes, symbols)
        args = [self.eval(a, symbols) for a in arg_nodes]
        if expand and args:
            last = args.pop()
            if isinstance(last, Unknown):
                return Unknown(ANY, last.why)
            if not isinstance(last, list):
                raise EvalError(f"the argument expanded with ... must be a list, not {type_name(last)}")
            args.extend(last)
        function = FUNCTIONS.get(name)
        if function is None:
            if name in AFTER_APPLY:
                return Unknown(ANY, f"{name}() is known only after apply")
            why = f"function {name}() is not evaluated here"
            self.context.note(f"{why}: its value is unknown")
            return Unknown(ANY, why)
        if not function.takes_unknown and any(isinstance(a, Unknown) for a in args):
            return unknown(function.result, *args)
        try:
            return function.impl(*args)
        except FunctionError as exc:
            raise EvalError(f"{name}(): {exc}") from None
        except TypeError:
            raise EvalError(f"{name}() was given {len(args)} argument(s), which it does not take") from None

    def try_(self, arg_nodes: list[Node], symbols: dict[str, Any]) -> Any:
        """hcl's ``try``: the first argument that evaluates without an error; unknown when one it reaches depends
        on an unknown value (it cannot tell yet whether that one would fail)."""
        for arg in arg_nodes:
            if self.depends_on_unknown(arg, symbols):
                return Unknown(ANY, "try() over a value known only after apply")
            try:
                return self.eval(arg, symbols)
            except EvalError:
                continue
        raise EvalError("try(): no expression succeeded")

    def can(self, arg_nodes: list[Node], symbols: dict[str, Any]) -> Any:
        if len(arg_nodes) != 1:
            raise EvalError("can() takes one argument")
        if self.depends_on_unknown(arg_nodes[0], symbols):
            return Unknown(BOOL, "can() over a value known only after apply")
        try:
            got = self.eval(arg_nodes[0], symbols)
        except EvalError:
            return False
        return True if wholly_known(got) else Unknown(BOOL, getattr(first_unknown(got), "why", ""))

    def depends_on_unknown(self, node: Node, symbols: dict[str, Any]) -> bool:
        """Any of the traversals ``node`` makes (as far as their steps are static) reaches an unknown (hcl's
        ``dependsOnUnknowns``); one that fails does not count."""
        for traversal in _traversals(node, frozenset()):
            try:
                got = self.eval(traversal, symbols)
            except EvalError:
                continue
            if not wholly_known(got):
                return True
        return False

    def file(self, arg_nodes: list[Node], symbols: dict[str, Any]) -> Any:
        path = self.eval(arg_nodes[0], symbols) if len(arg_nodes) == 1 else None
        if isinstance(path, Unknown):
            return Unknown(STRING, path.why)
        if not isinstance(path, str):
            raise EvalError("file() takes one path")
        return self.context.read_file(path)

    def two(self, arg_nodes: list[Node], symbols: dict[str, Any], usage: str) -> tuple[Any, Any]:
        """The values of a call's two arguments; another count of arguments is the error ``usage``."""
        if len(arg_nodes) != 2:
            raise EvalError(usage)
        return self.eval(arg_nodes[0], symbols), self.eval(arg_nodes[1], symbols)

    def fileset(self, arg_nodes: list[Node], symbols: dict[str, Any]) -> Any:
        """Terraform's ``fileset(path, pattern)``: the regular files under ``path`` whose path relative to it
        matches ``pattern``, as a set (`dbx_ai_infra.sources.tfscope.Scope.list_files`)."""
        path, pattern = self.two(arg_nodes, symbols, "fileset() takes a path and a pattern")
        if isinstance(path, Unknown) or isinstance(pattern, Unknown):
            return unknown(ANY, path, pattern)
        if not isinstance(path, str) or not isinstance(pattern, str):
            raise EvalError("fileset() takes a path and a pattern, both strings")
        return SetValue(self.context.list_files(path, pattern))

    def templatefile(self, arg_nodes: list[Node], symbols: dict[str, Any]) -> Any:
        path, variables = self.two(arg_nodes, symbols, "templatefile() takes a path and a map of variables")
        if isinstance(path, Unknown) or isinstance(variables, Unknown):
            return unknown(STRING, path, variables)
        if not isinstance(path, str) or not isinstance(variables, dict):
            raise EvalError("templatefile() takes a path and a map of variables")
        try:
            parts = tfexpr.template(self.context.read_file(path), heredoc=True)
        except tfexpr.ParseError as exc:
            raise EvalError(f"templatefile({path}): {exc}") from None
        return _Evaluator(_TemplateScope(self.context)).template(("tmpl", parts), dict(variables))


class _TemplateScope:
    """A template file's scope: the variables ``templatefile`` passes, and nothing of the module."""

    def __init__(self, outer: Any) -> None:
        self.outer = outer
        self.directory = outer.directory

    def reference(self, root: str, steps: list[Any]) -> tuple[Any, int]:
        raise EvalError(f"a template file can only name the variables templatefile() passes, not {root}")

    def note(self, text: str) -> None:
        self.outer.note(text)

    def read_file(self, path: str) -> str:
        return str(self.outer.read_file(path))

    def list_files(self, path: str, pattern: str) -> list[str]:
        return list(self.outer.list_files(path, pattern))


def _traversals(node: Any, bound: frozenset[str]) -> list[Node]:
    """The traversals in ``node`` (a root name and its static steps), as hcl's ``Variables()`` lists them; names
    a ``for`` binds inside ``node`` are not traversals."""
    if not isinstance(node, tuple) or not node:
        return []
    kind = node[0]
    if kind == "var":
        return [] if node[1] in bound else [node]
    if kind in ("attr", "index"):
        root = node
        while root[0] in ("attr", "index") and isinstance(root[1], tuple) \
                and (root[0] == "attr" or root[2][0] == "lit"):
            root = root[1]
        if root[0] == "var":
            return ([] if root[1] in bound else [node]) + (_traversals(node[2], bound) if kind == "index" else [])
    if kind == "for":
        inner = bound | {n for n in (node[1], node[2]) if n}
        return _traversals(node[3], bound) + [t for child in node[4:] for t in _traversals(child, inner)]
    out: list[Node] = []
    for child in node[1:]:
        children = child if isinstance(child, list) else [child]
        for item in children:
            for part in (item if isinstance(item, tuple) and item and not isinstance(item[0], str) else [item]):
                out.extend(_traversals(part, bound))
    return out


# --- traversal steps -----------------------------------------------------------------------------------------------

def get_attribute(value: Any, name: Any) -> Any:
    """``value.name``, as hcl traverses it."""
    if isinstance(value, Unknown):
        return Unknown(ANY, value.why)
    if value is None:
        raise EvalError(f'cannot read the attribute "{name}" of a null value')
    if isinstance(value, dict):
        if name in value:
            return value[name]
        if isinstance(value, ResourceInstance):  # a computed attribute: known only after apply
            return Unknown(ANY, f"{value.get('id')}.{name} is known only after apply")
        raise EvalError(f'the object has no attribute named "{name}"')
    raise EvalError(f'a {type_name(value)} has no attribute "{name}"')


def get_index(value: Any, key: Any) -> Any:
    """``value[key]``, as hcl indexes it."""
    if isinstance(value, Unknown) or isinstance(key, Unknown):
        return unknown(ANY, value, key)
    if value is None or key is None:
        raise EvalError("cannot index a null value" if value is None else "an index cannot be null")
    if isinstance(value, dict):
        name = text_of(key) if not isinstance(key, (list, dict)) else None
        if name not in value:
            raise EvalError(f'the map or object has no element "{name}"')
        return value[name]
    if isinstance(value, list):
        try:
            at = to_number(key)
        except ConversionError:
            raise EvalError(f"a list index must be a number, not {type_name(key)}") from None
        if at != int(at) or not 0 <= at < len(value):
            raise EvalError(f"the index {text_of(at)} is out of range for a list of {len(value)}")
        return value[int(at)]
    raise EvalError(f"a {type_name(value)} cannot be indexed")


def _divide(a: Any, b: Any) -> Any:
    if b == 0:
        raise EvalError("division by zero")
    return number(a / b)


def _modulo(a: Any, b: Any) -> Any:
    if b == 0:
        raise EvalError("modulo by zero")
    return number(math.fmod(a, b)) if isinstance(a, float) or isinstance(b, float) else int(math.fmod(a, b))


_COMPARISONS = ("<", "<=", ">", ">=")
_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: number(a + b), "-": lambda a, b: number(a - b), "*": lambda a, b: number(a * b),
    "/": _divide, "%": _modulo, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
_SPECIAL: dict[str, Callable[[_Evaluator, list[Node], dict[str, Any]], Any]] = {
    "try": _Evaluator.try_, "can": _Evaluator.can, "file": _Evaluator.file,
    "templatefile": _Evaluator.templatefile, "fileset": _Evaluator.fileset,
}
_NODES: dict[str, Callable[[_Evaluator, Node, dict[str, Any]], Any]] = {
    "lit": _Evaluator.literal, "tmpl": _Evaluator.template, "var": _Evaluator.variable, "attr": _Evaluator.step,
    "index": _Evaluator.step, "splat": _Evaluator.splat, "call": _Evaluator.call, "tuple": _Evaluator.tuple_,
    "object": _Evaluator.object_, "for": _Evaluator.for_, "cond": _Evaluator.conditional,
    "bin": _Evaluator.binary, "unary": _Evaluator.unary,
}

__all__ = ["Context", "EvalError", "evaluate", "get_attribute", "get_index", "is_number"]
