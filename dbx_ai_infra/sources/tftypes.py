"""A variable's ``type`` (Terraform's type constraint expression: ``bool``, ``map(object({a = optional(number,
10)}))``) read into a `dbx_ai_infra.sources.tfvalues.Type`, with the ``optional()`` attributes and their defaults,
as Terraform's ``typeexpr`` package reads it."""

from __future__ import annotations

from typing import Any

from dbx_ai_infra.sources import tfexpr
from dbx_ai_infra.sources.tfvalues import ANY, Type

_PRIMITIVES = {"string": Type("string"), "number": Type("number"), "bool": Type("bool"), "any": ANY}
#: The bare collection keywords Terraform still takes (older modules write them: GoogleCloudPlatform's, for one):
#: terraform 1.11.4 plans `type = map` as map(any) and `type = list` as list(any), and refuses a bare `set`
#: ("The set type constructor requires one argument").
_LEGACY = {"map": Type("map", ANY), "list": Type("list", ANY)}


class TypeError_(ValueError):
    """A type expression Terraform would not accept."""


def read_type(raw: Any, default_value: Any = None) -> Type:
    """The type constraint python-hcl2 gives as ``raw`` (``"bool"``, ``"${list(string)}"``); `ANY` when there is
    none. ``default_value(node)`` evaluates an ``optional()`` default (literals only, as Terraform requires)."""
    if raw is None:
        return ANY
    if not isinstance(raw, str):
        raise TypeError_(f"{raw!r} is no type")
    try:
        node = tfexpr.source(raw)
    except tfexpr.ParseError as exc:
        raise TypeError_(f"{raw!r} is no type: {exc}") from None
    if node[0] == "tmpl" and len(node[1]) == 1 and isinstance(node[1][0], str):
        node = ("var", node[1][0])  # python-hcl2 gives a bare keyword (type = bool) as its text
    elif node[0] == "tmpl" and len(node[1]) == 1:
        node = node[1][0]
    return _type(node, default_value)


def _type(node: tfexpr.Node, evaluate: Any) -> Type:
    if node[0] == "var" and node[1] in _PRIMITIVES:
        return _PRIMITIVES[node[1]]
    if node[0] == "var" and node[1] in _LEGACY:
        return _LEGACY[node[1]]
    if node[0] == "call" and node[1] in ("list", "set", "map") and len(node[2]) == 1:
        return Type(node[1], _type(node[2][0], evaluate))
    if node[0] == "call" and node[1] == "tuple" and len(node[2]) == 1 and node[2][0][0] == "tuple":
        return Type("tuple", items=tuple(_type(item, evaluate) for item in node[2][0][1]))
    if node[0] == "call" and node[1] == "object" and len(node[2]) == 1 and node[2][0][0] == "object":
        return _object(node[2][0][1], evaluate)
    raise TypeError_("is no type constraint (string, number, bool, any, list(...), set(...), map(...), "
                     "tuple([...]), object({...}))")


def _object(pairs: list[tuple[tfexpr.Node, tfexpr.Node]], evaluate: Any) -> Type:
    attributes: dict[str, Type] = {}
    optional: set[str] = set()
    defaults: dict[str, Any] = {}
    for key, inner in pairs:
        name = key[1] if key[0] in ("lit", "var") else key[1][0] if key[0] == "tmpl" and key[1] else None
        if not isinstance(name, str):
            raise TypeError_("an object type's attribute names must be names")
        if inner[0] == "call" and inner[1] == "optional" and len(inner[2]) in (1, 2):
            optional.add(name)
            attributes[name] = _type(inner[2][0], evaluate)
            if len(inner[2]) == 2:
                defaults[name] = evaluate(inner[2][1]) if evaluate else None
        else:
            attributes[name] = _type(inner, evaluate)
    return Type("object", attributes=attributes, optional=frozenset(optional), defaults=defaults)
