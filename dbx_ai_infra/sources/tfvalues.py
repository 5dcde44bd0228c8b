"""Terraform's values as this reader holds them, and Terraform's type conversions.

A value is what cty (the value system of Terraform and HCL) holds, mapped to Python: ``None`` (null), ``bool``,
a number (``int`` when whole, else ``float``), ``str``, a ``list`` (a tuple, list or set: a set's elements are
unique and, for strings and numbers, in Terraform's order), a ``dict`` (an object or a map), or an `Unknown`:
a value known only after apply, or one this reader cannot know (a data source's attribute, another resource's
attribute, a variable with no value, a function not implemented). An unknown is a value, never absent, false or
zero: an operation on it is unknown, as in Terraform (cty's rule: a function or operator whose argument is wholly
unknown returns an unknown of its result type); a collection may hold unknown elements and still be known (its
length is known).

Types are Terraform's type constraints (``string``, ``list(object({a = optional(number, 10)}))``): `Type` below,
made by `dbx_ai_infra.sources.tftypes` from a variable's ``type`` expression; `convert` applies one to a value as
Terraform does when a variable is set (cty's ``convert`` package, with the ``optional()`` defaults applied first, as
Terraform's ``typeexpr.Defaults`` does).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar


@dataclass(frozen=True)
class Type:
    """A type constraint: ``kind`` is ``string``, ``number``, ``bool``, ``any``, ``list``, ``set``, ``map``,
    ``tuple`` or ``object``; ``element`` the element type of a collection; ``items`` a tuple's element types;
    ``attributes`` an object's, with the ``optional`` names and their ``defaults``."""

    kind: str
    element: Type | None = None
    items: tuple[Type, ...] = ()
    attributes: dict[str, Type] = field(default_factory=dict, hash=False, compare=False)
    optional: frozenset[str] = frozenset()
    defaults: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def __str__(self) -> str:
        if self.element is not None:
            return f"{self.kind}({self.element})"
        if self.kind == "object":
            return "object({" + ", ".join(f"{k} = {t}" for k, t in self.attributes.items()) + "})"
        if self.kind == "tuple":
            return "tuple([" + ", ".join(str(t) for t in self.items) + "])"
        return self.kind


ANY = Type("any")
STRING = Type("string")
NUMBER = Type("number")
BOOL = Type("bool")


class Unknown:
    """A value not known here: ``type`` what it will be where that is known (else `ANY`), ``why`` what made it
    unknown (the first cause, for a note)."""

    __slots__ = ("type", "why")

    def __init__(self, type_: Type = ANY, why: str = "") -> None:
        self.type = type_
        self.why = why

    def __repr__(self) -> str:
        return f"<unknown {self.type}>"

    def __eq__(self, other: object) -> bool:  # an unknown equals nothing, itself neither (as cty's Equals)
        return False

    __hash__ = object.__hash__


class ResourceInstance(dict):
    """One instance of a resource named as a value: the attributes known here (its ``id``, the address the plan reader
    names it by); any other attribute is computed, known only after apply (`tfeval.get_attribute` reads it as
    unknown)."""


def unknown(type_: Type = ANY, *causes: Any) -> Unknown:
    """An unknown of ``type_``, carrying the first cause's reason."""
    why = next((c.why for c in causes if isinstance(c, Unknown) and c.why), "")
    return Unknown(type_, why)


def wholly_known(value: Any) -> bool:
    """No unknown anywhere in ``value`` (cty's ``IsWhollyKnown``)."""
    if isinstance(value, Unknown):
        return False
    if isinstance(value, dict):
        return all(wholly_known(v) for v in value.values())
    if isinstance(value, list):
        return all(wholly_known(v) for v in value)
    return True


def first_unknown(value: Any) -> Unknown | None:
    if isinstance(value, Unknown):
        return value
    for inner in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        found = first_unknown(inner)
        if found is not None:
            return found
    return None


class SetValue(list[Any]):
    """A set's elements: a list to whatever reads a list, but a ``for`` expression, a ``dynamic`` block and a
    ``for_each`` key each element by itself, as Terraform keys a set (a list's key is its index)."""

    __slots__ = ()


class ConversionError(ValueError):
    """A value that the type constraint refuses, with Terraform's reason."""


_T = TypeVar("_T")


def non_null(value: Any, to: Callable[[Any], _T], error: Callable[[str], Exception], null: str,
             wrong: Callable[[ConversionError], str]) -> _T:
    """``value`` converted by ``to``, where Terraform takes no null (an operand, a template's interpolation, a
    function's argument): ``error(null)`` for a null, ``error(wrong(failure))`` for a value that does not convert."""
    if value is None:
        raise error(null)
    try:
        return to(value)
    except ConversionError as exc:
        raise error(wrong(exc)) from None


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number(value: float | int) -> int | float:
    """A number as this reader holds it: an ``int`` when it is whole (Terraform prints ``2``, not ``2.0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 63:
        return int(value)
    return value


def number_text(value: float | int) -> str:
    """A number as Terraform writes it in a string (no exponent, no trailing zeros)."""
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def parse_number(text: str) -> int | float:
    """A string as cty reads a number (``"1"``, ``"-1.5"``, ``"1e3"``; no spaces, no ``0x``); `ConversionError`."""
    try:
        if text.strip() != text or not text or text.lower().lstrip("+-") in ("inf", "infinity", "nan"):
            raise ValueError(text)
        return number(float(text)) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        raise ConversionError(f'cannot convert "{text}" to number; given string must be a decimal representation '
                              "of a number") from None


def text_of(value: Any) -> str:
    """A primitive as a string, as Terraform converts it (``true``, ``1.5``); `ConversionError` for others."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_number(value):
        return number_text(value)
    raise ConversionError(f"cannot convert {type_name(value)} to string")


def type_name(value: Any) -> str:
    """The type Terraform names in its messages (``string``, ``tuple``, ``object``...)."""
    if value is None:
        return "null"
    if isinstance(value, Unknown):
        return str(value.type)
    if isinstance(value, bool):
        return "bool"
    if is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    return "tuple" if isinstance(value, list) else "object"


def to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value in ("true", "1"):
            return True
        if value in ("false", "0"):
            return False
        hint = f'; to convert from string, use lowercase "{value.lower()}"' if value.lower() in ("true", "false") \
            else ""
        raise ConversionError(f"a bool is required{hint}")
    raise ConversionError(f"a bool is required, got {type_name(value)}")


def to_number(value: Any) -> int | float:
    if is_number(value):
        return value
    if isinstance(value, str):
        return parse_number(value)
    raise ConversionError(f"a number is required, got {type_name(value)}")


def set_of(values: list[Any]) -> SetValue:
    """A set's elements: unique, strings and numbers in cty's order (numbers ascending, then strings by text)."""
    unique: list[Any] = []
    for v in values:
        if not any(equal(v, u) is True for u in unique):
            unique.append(v)
    if all(isinstance(v, str) for v in unique) or all(is_number(v) for v in unique):
        return SetValue(sorted(unique))
    return SetValue(unique)


def equal(left: Any, right: Any) -> Any:
    """Terraform's ``==``: of the same type and value (``true == 1`` is false); unknown if either is unknown."""
    if isinstance(left, Unknown) or isinstance(right, Unknown):
        return Unknown(BOOL, getattr(left, "why", "") or getattr(right, "why", ""))
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if is_number(left) and is_number(right):
        return left == right
    if isinstance(left, list) and isinstance(right, list):
        return _all_equal(list(zip(left, right, strict=False)), len(left) == len(right))
    if isinstance(left, dict) and isinstance(right, dict):
        return _all_equal([(left[k], right[k]) for k in left if k in right], left.keys() == right.keys())
    return type(left) is type(right) and left == right


def _all_equal(pairs: list[tuple[Any, Any]], same_shape: bool) -> Any:
    if not same_shape:
        return False
    results = [equal(a, b) for a, b in pairs]
    if any(r is False for r in results):
        return False
    return Unknown(BOOL) if any(isinstance(r, Unknown) for r in results) else True


# --------------------------------------------------------------------------------------------------------------------
# Conversion to a type constraint
# --------------------------------------------------------------------------------------------------------------------

def convert(value: Any, type_: Type, path: str = "") -> Any:
    """``value`` converted to ``type_`` as Terraform converts a variable's value (cty's ``convert.Convert``, after
    the ``optional()`` defaults); `ConversionError` naming the path within the value where it fails."""
    if isinstance(value, Unknown):
        return Unknown(type_ if value.type == ANY else value.type, value.why)
    if value is None:
        return None
    try:
        return _CONVERTERS[type_.kind](value, type_, path)
    except ConversionError as exc:
        if path and not str(exc).startswith(path):
            raise ConversionError(f"{path}: {exc}") from None
        raise


def _to_any(value: Any, type_: Type, path: str) -> Any:
    return value


def _to_string(value: Any, type_: Type, path: str) -> Any:
    return text_of(value)


def _to_list(value: Any, type_: Type, path: str) -> Any:
    if not isinstance(value, list):
        raise ConversionError(f"{type_.kind} of {type_.element} required, got {type_name(value)}")
    element = type_.element or ANY
    items = [convert(v, element, f"{path}[{i}]") for i, v in enumerate(value)]
    if element.kind == "any":
        items = _unified(items)
    if type_.kind == "set":
        return set_of(items) if wholly_known(items) else SetValue(items)
    return items


def _to_map(value: Any, type_: Type, path: str) -> Any:
    if not isinstance(value, dict):
        raise ConversionError(f"map of {type_.element} required, got {type_name(value)}")
    element = type_.element or ANY
    items = {k: convert(v, element, f'{path}["{k}"]') for k, v in value.items()}
    if element.kind == "any":
        items = dict(zip(items, _unified(list(items.values())), strict=True))
    return items


def _to_tuple(value: Any, type_: Type, path: str) -> Any:
    if not isinstance(value, list) or len(value) != len(type_.items):
        raise ConversionError(f"tuple of {len(type_.items)} elements required, got {type_name(value)}")
    return [convert(v, t, f"{path}[{i}]") for i, (v, t) in enumerate(zip(value, type_.items, strict=True))]


def _to_object(value: Any, type_: Type, path: str) -> Any:
    if not isinstance(value, dict):
        raise ConversionError(f"object required, got {type_name(value)}")
    out: dict[str, Any] = {}
    for name, attribute in type_.attributes.items():
        given = value.get(name)
        if given is None and name in type_.defaults:
            given = type_.defaults[name]
        if name not in value and name not in type_.optional:
            raise ConversionError(f'attribute "{name}" is required')
        out[name] = convert(given, attribute, f"{path}.{name}")
    return out


def _unified(items: list[Any]) -> list[Any]:
    """Elements of a ``list(any)`` or ``map(any)``: one type, as Terraform unifies them (strings when primitives of
    several kinds are mixed: ``["a", 1]`` is ``["a", "1"]``)."""
    kinds = {type_name(v) for v in items if v is not None and not isinstance(v, Unknown)}
    if len(kinds) > 1 and kinds <= {"string", "number", "bool"}:
        return [text_of(v) if v is not None and not isinstance(v, Unknown) else v for v in items]
    return items


_CONVERTERS: dict[str, Any] = {
    "any": _to_any, "string": _to_string, "number": lambda v, t, p: to_number(v),
    "bool": lambda v, t, p: to_bool(v), "list": _to_list, "set": _to_list, "map": _to_map,
    "tuple": _to_tuple, "object": _to_object,
}
