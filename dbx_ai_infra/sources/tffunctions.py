"""Terraform's built-in functions, as Terraform v1.11 evaluates them (the semantics of cty's ``stdlib`` and
Terraform's ``internal/lang/funcs``, checked against ``terraform console``: ``tests/test_tf_functions.py``).

`FUNCTIONS` maps a name to a `Function`: its implementation over values (`dbx_ai_infra.sources.tfvalues`) and its
result type. The evaluator (`dbx_ai_infra.sources.tfeval`) handles what every function shares, as cty does: an
argument that is unknown makes the result an unknown of the result type, unless the function takes unknowns itself
(``coalesce``, ``length`` of a collection with unknown elements, ``merge`` of maps holding unknowns...). A function
whose arguments are wrong raises `FunctionError` (Terraform's "Invalid function argument"), which ``try`` and
``can`` catch. ``try``, ``can``, ``file``, ``templatefile`` need the evaluator and live there.

Functions not here are unknown where they are called, with a note naming them; ``timestamp``, ``uuid`` and the
like are unknown in a plan too.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from dbx_ai_infra.sources.tfvalues import (
    ANY,
    BOOL,
    NUMBER,
    STRING,
    ConversionError,
    Type,
    Unknown,
    convert,
    equal,
    is_number,
    non_null,
    number,
    set_of,
    text_of,
    to_bool,
    to_number,
    type_name,
    wholly_known,
)

LIST = Type("list", ANY)
MAP = Type("map", ANY)


class FunctionError(ValueError):
    """Arguments a function refuses (Terraform's "Invalid function argument")."""


@dataclass(frozen=True)
class Function:
    """One built-in: ``impl`` over the argument values; ``result`` its type (an unknown result is of it);
    ``takes_unknown`` when it is called with unknown arguments (else the result is unknown)."""

    impl: Callable[..., Any]
    result: Type = ANY
    takes_unknown: bool = False


def _string(value: Any, what: str = "argument") -> str:
    return non_null(value, text_of, FunctionError, f"the {what} must not be null", lambda exc: f"the {what}: {exc}")


def _list(value: Any, what: str = "argument") -> list[Any]:
    if not isinstance(value, list):
        raise FunctionError(f"the {what} must be a list, set or tuple, not {type_name(value)}")
    return value


def _map(value: Any, what: str = "argument") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FunctionError(f"the {what} must be a map or object, not {type_name(value)}")
    return value


def _num(value: Any) -> int | float:
    return non_null(value, to_number, FunctionError, "a number is required, got null", str)


def _int(value: Any) -> int:
    got = _num(value)
    if got != int(got):
        raise FunctionError(f"a whole number is required, got {got}")
    return int(got)


# --- collections ---------------------------------------------------------------------------------------------------

def _merge(*maps: Any) -> Any:
    out: dict[str, Any] = {}
    for m in maps:
        if m is not None:
            out.update(_map(m))
    return out


def _lookup(mapping: Any, key: Any, *default: Any) -> Any:
    if len(default) > 1:
        raise FunctionError("lookup takes two or three arguments")
    mapping, key = _map(mapping), _string(key, "key")
    if key in mapping:
        return mapping[key]
    if default:
        return default[0]
    raise FunctionError(f'the given key "{key}" does not exist in the map and no default was given')


def _coalesce(*values: Any) -> Any:
    for v in values:
        if isinstance(v, Unknown):
            return Unknown(ANY, v.why)
        if v is not None and v != "":
            return v
    raise FunctionError("no non-null, non-empty-string arguments")


def _coalescelist(*lists: Any) -> Any:
    for v in lists:
        if isinstance(v, Unknown):
            return Unknown(LIST, v.why)
        if v:
            return _list(v)
    raise FunctionError("no non-null arguments")


def _length(value: Any) -> Any:
    if isinstance(value, Unknown):
        return Unknown(NUMBER, value.why)
    if isinstance(value, (list, dict)):
        return len(value)
    if isinstance(value, str):
        return len(value)
    raise FunctionError(f"length of {type_name(value)} is not defined")


def _flatten(value: Any) -> Any:
    out: list[Any] = []
    for v in _list(value):
        if isinstance(v, Unknown):
            return Unknown(LIST, v.why)
        if isinstance(v, list):
            inner = _flatten(v)
            if isinstance(inner, Unknown):
                return inner
            out.extend(inner)
        else:
            out.append(v)
    return out


def _toset(value: Any) -> Any:
    items = _list(value)
    if not wholly_known(items):
        return Unknown(Type("set", ANY))
    return set_of(_same_type(items))


def _same_type(items: list[Any]) -> list[Any]:
    kinds = {type_name(v) for v in items if v is not None}
    if len(kinds) > 1 and kinds <= {"string", "number", "bool"}:
        return [text_of(v) if v is not None else v for v in items]
    return items


def _contains(values: Any, value: Any) -> Any:
    results = [equal(v, value) for v in _list(values)]
    if any(r is True for r in results):
        return True
    return Unknown(BOOL) if any(isinstance(r, Unknown) for r in results) else False


def _distinct(values: Any) -> Any:
    out: list[Any] = []
    for v in _same_type(_list(values)):
        if not any(equal(v, o) is True for o in out):
            out.append(v)
    return out


def _element(values: Any, index: Any) -> Any:
    values, at = _list(values), _int(index)
    if not values:
        raise FunctionError("cannot use element function with an empty list")
    if at < 0:
        raise FunctionError("cannot use element function with a negative index")
    return values[at % len(values)]


def _range(*args: Any) -> Any:
    numbers = [_num(a) for a in args]
    if not 1 <= len(numbers) <= 3:
        raise FunctionError("range takes one to three arguments")
    start, limit, step = (0, numbers[0], 1) if len(numbers) == 1 else (numbers[0], numbers[1],
                                                                       numbers[2] if len(numbers) == 3 else 1)
    if len(numbers) < 3 and limit < start:
        step = -1
    if step == 0 or (step > 0) != (limit >= start) and limit != start:
        raise FunctionError("range's step must move the start toward the limit")
    out: list[Any] = []
    value = start
    while (value < limit) if step > 0 else (value > limit):
        out.append(number(value))
        if len(out) > 1024:
            raise FunctionError("more than 1024 numbers in a range")
        value += step
    return out


def _zipmap(keys: Any, values: Any) -> Any:
    keys, values = _list(keys), _list(values)
    if len(keys) != len(values):
        raise FunctionError(f"number of keys ({len(keys)}) does not match number of values ({len(values)})")
    if not all(isinstance(k, (str, int, float)) for k in keys):
        return Unknown(MAP)
    return {_string(k, "key"): v for k, v in zip(keys, values, strict=True)}


def _keys(value: Any) -> Any:
    return sorted(_map(value))


def _values(value: Any) -> Any:
    mapping = _map(value)
    return [mapping[k] for k in sorted(mapping)]


def _slice(values: Any, start: Any, end: Any) -> Any:
    values, first, last = _list(values), _int(start), _int(end)
    if not 0 <= first <= last <= len(values):
        raise FunctionError(f"slice indices {first}, {last} are out of range for a list of {len(values)}")
    return values[first:last]


def _index(values: Any, value: Any) -> Any:
    values = _list(values)
    if not wholly_known(values):
        return Unknown(NUMBER)
    for at, v in enumerate(values):
        if equal(v, value) is True:
            return at
    raise FunctionError("item not found")


def _one(values: Any) -> Any:
    values = _list(values)
    if len(values) > 1:
        raise FunctionError(f"must be a list, set, or tuple value with either zero or one elements, "
                            f"not {len(values)}")
    return values[0] if values else None


def _sort(values: Any) -> Any:
    items = _list(values)
    if not wholly_known(items):
        return Unknown(LIST)
    return sorted(_string(v, "element") for v in items)


def _set_op(op: str) -> Callable[..., Any]:
    def apply(*sets: Any) -> Any:
        lists = [_list(s) for s in sets]
        if not all(wholly_known(s) for s in lists):
            return Unknown(Type("set", ANY))
        result: list[Any] = set_of(_same_type(lists[0]))
        for other in lists[1:]:
            other = _same_type(other)
            def inside(v: Any, o: list[Any] = other) -> bool:
                return any(equal(v, x) is True for x in o)
            result = (set_of(result + other) if op == "union" else
                      [v for v in result if inside(v)] if op == "intersection" else
                      [v for v in result if not inside(v)])
        return set_of(result)
    return apply


def _tomap(value: Any) -> Any:
    return _map(value)


def _tolist(value: Any) -> Any:
    return list(_list(value))


def _compact(values: Any) -> Any:
    items = _list(values)
    if any(isinstance(v, Unknown) for v in items):
        return Unknown(LIST)
    return [_string(v, "element") for v in items if v is not None and v != ""]


# --- strings -------------------------------------------------------------------------------------------------------

def _go_pattern(pattern: str) -> re.Pattern[str]:
    """An RE2 pattern (Terraform's regular expressions) as Python reads it: the syntax they share."""
    try:
        return re.compile(pattern.replace("(?P<", "(?P<").replace("\\z", "\\Z"))
    except re.error as exc:
        raise FunctionError(f"invalid regular expression {pattern!r}: {exc}") from None


def _replace(text: Any, search: Any, replacement: Any) -> Any:
    text, search, replacement = _string(text), _string(search), _string(replacement)
    if len(search) > 1 and search.startswith("/") and search.endswith("/"):
        python = re.sub(r"\$(\d+|\{(\w+)\})", lambda m: f"\\g<{m.group(2) or m.group(1)}>",
                        replacement.replace("\\", "\\\\"))
        return _go_pattern(search[1:-1]).sub(python, text)
    return text.replace(search, replacement)


def _regex(pattern: Any, text: Any) -> Any:
    compiled = _go_pattern(_string(pattern))
    if compiled.groupindex and len(compiled.groupindex) != compiled.groups:
        raise FunctionError("invalid regexp pattern: cannot mix both named and unnamed capture groups")
    found = compiled.search(_string(text))
    if found is None:
        raise FunctionError("pattern did not match any part of the given string")
    return _captures(compiled, found)


def _captures(compiled: re.Pattern[str], found: re.Match[str]) -> Any:
    if compiled.groupindex:
        return {name: found.group(name) for name in compiled.groupindex}
    if compiled.groups:
        return list(found.groups())
    return found.group(0)


def _regexall(pattern: Any, text: Any) -> Any:
    compiled = _go_pattern(_string(pattern))
    return [_captures(compiled, m) for m in compiled.finditer(_string(text))]


def _substr(text: Any, offset: Any, length: Any) -> Any:
    text, start, size = _string(text), _int(offset), _int(length)
    if start < 0:
        start = max(len(text) + start, 0)
    if start > len(text):
        raise FunctionError("offset is beyond the end of the string")
    return text[start:] if size == -1 else text[start:start + size]


def _join(separator: Any, *lists: Any) -> Any:
    items = [v for values in lists for v in _list(values)]
    if any(isinstance(v, Unknown) for v in items):
        return Unknown(STRING)
    return _string(separator).join(_string(v, "element") for v in items)


def _split(separator: Any, text: Any) -> Any:
    separator, text = _string(separator), _string(text)
    if text == "":
        return [""]
    return text.split(separator) if separator else list(text)


_VERB = re.compile(r"%([-+ #0]*)(?:\[(\d+)\])?(\d+)?(?:\.(\d+))?([a-zA-Z%])")


def _format(spec: Any, *args: Any) -> Any:
    """cty's ``format``: each verb takes the next argument, or the one ``%[n]`` names (1-based; the verbs after it
    go on from n + 1, as Go's fmt); every argument up to the highest taken must be used (terraform 1.11.4:
    ``format("%[2]s %[1]s", "a", "b")`` is ``"b a"``, ``format("%[1]s", "a", "b")`` is refused)."""
    spec = _string(spec, "format")
    if not wholly_known(list(args)):
        return Unknown(STRING)
    position = used = 0

    def verb(m: re.Match[str]) -> str:
        nonlocal position, used
        flags, index, width, precision, letter = m.groups()
        if letter == "%":
            return "%"
        if index is not None:
            if int(index) < 1:
                raise FunctionError(f"unrecognized format character {index!r}")
            position = int(index) - 1
        if position >= len(args):
            raise FunctionError(f"not enough arguments for %{letter}: need index {position + 1} but have "
                                f"{len(args)} total")
        position += 1
        used = max(used, position)
        return _format_one(args[position - 1], flags, width, precision, letter)

    out = _VERB.sub(verb, spec)
    if used < len(args):
        raise FunctionError(f"too many arguments; only {used} used by format string")
    return out


def _formatlist(spec: Any, *args: Any) -> Any:
    """``format`` over lists, element by element: a list argument gives the n-th element to the n-th string, any
    other argument is repeated; the lists must be of one length (terraform 1.11.4: ``formatlist("%s, %s!",
    "Salutations", ["Valentina", "Ander"])``; with no list, one string)."""
    lengths = {len(a) for a in args if isinstance(a, list)}
    if len(lengths) > 1:
        raise FunctionError("the list arguments are of different lengths")
    count = lengths.pop() if lengths else 1
    return [_format(spec, *(a[i] if isinstance(a, list) else a for a in args)) for i in range(count)]


def _format_one(arg: Any, flags: str, width: str | None, precision: str | None, letter: str) -> str:
    python = f"%{flags}{width or ''}{'.' + precision if precision else ''}"
    if letter in "dboxXeEfgG":
        value = _num(arg)
        if letter in "dboxX":
            value = _int(value)
            if letter == "b":
                return (python + "s") % format(value, "b")
        return (python + letter) % value
    if letter == "s":
        return (python + "s") % _string(arg)
    if letter == "q":
        return (python + "s") % json.dumps(_string(arg), ensure_ascii=False)
    if letter == "t":
        return (python + "s") % ("true" if to_bool(arg) else "false")
    if letter == "v":
        shown = _encode(arg) if isinstance(arg, (list, dict)) or arg is None or "#" in flags else _string(arg)
        return (python.replace("#", "") + "s") % shown
    raise FunctionError(f"unsupported format verb %{letter}")


# --- IP networks ---------------------------------------------------------------------------------------------------

def _network(prefix: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(_string(prefix, "prefix"), strict=False)
    except ValueError as exc:
        raise FunctionError(f"invalid CIDR expression: {exc}") from None


def _cidrhost(prefix: Any, hostnum: Any) -> Any:
    """The address of host ``hostnum`` in ``prefix``; a negative number counts from the end (terraform 1.11.4:
    ``cidrhost("10.12.112.0/20", -2)`` is ``"10.12.127.254"``)."""
    net, host = _network(prefix), _int(hostnum)
    number = host + net.num_addresses if host < 0 else host
    if not 0 <= number < net.num_addresses:
        raise FunctionError(f"prefix of {net.prefixlen} does not accommodate a host numbered {host}")
    return str(net.network_address + number)


def _cidrsubnet(prefix: Any, newbits: Any, netnum: Any) -> Any:
    """Subnet ``netnum`` of ``prefix`` extended by ``newbits`` (``cidrsubnet("172.16.0.0/12", 4, 2)`` is
    ``"172.18.0.0/16"``). A negative ``netnum`` is refused here (terraform 1.11.4 gives an address outside the
    prefix for it)."""
    net, bits, number = _network(prefix), _int(newbits), _int(netnum)
    length = net.prefixlen + bits
    if bits < 0 or length > net.max_prefixlen:
        raise FunctionError(f"insufficient address space to extend prefix of {net.prefixlen} by {bits}")
    if not 0 <= number < 2 ** bits:
        raise FunctionError(f"prefix extension of {bits} does not accommodate a subnet numbered {number}")
    base = int(net.network_address) + (number << (net.max_prefixlen - length))
    return f"{ipaddress.ip_address(base) if net.version == 4 else ipaddress.IPv6Address(base)}/{length}"


def _cidrnetmask(prefix: Any) -> Any:
    net = _network(prefix)
    if net.version != 4:
        raise FunctionError(f"IPv6 addresses cannot have a netmask: {prefix}")
    return str(net.netmask)


# --- YAML ----------------------------------------------------------------------------------------------------------

_YAML_TRUE = frozenset({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
_YAML_FALSE = frozenset({"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
_YAML_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_YAML_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_YAML_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class _NotHere(Exception):
    """A YAML value this reader does not convert as Terraform does (the call's value is unknown)."""


def _yaml_scalar(node: Any) -> Any:
    """A plain scalar resolved as Terraform's yamldecode resolves it (checked with terraform 1.11.4: ``yes``, ``on``
    and ``y`` are true; ``010`` is 10, ``1e3`` 1000, ``0x1F`` 31, ``0o17`` 15; ``1_000`` and ``12:30`` stay strings;
    a date becomes a timestamp); a quoted one is a string."""
    text = node.value
    if node.style is not None:  # quoted, or a literal or folded block
        return text
    if node.tag != _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)):  # an explicit tag (!!str 5)
        if node.tag == "tag:yaml.org,2002:str":
            return text
        if node.tag not in _PLAIN_TAGS:
            raise _NotHere(f"the YAML tag {node.tag}")
    return _plain_scalar(text)


#: A plain scalar's constants: Terraform's (YAML 1.1) booleans and nulls.
_YAML_CONSTANTS: Mapping[str, Any] = {**dict.fromkeys(_YAML_TRUE, True), **dict.fromkeys(_YAML_FALSE, False),
                                      **dict.fromkeys(_YAML_NULL, None)}


def _yaml_number(text: str) -> Any:
    return number(float(text)) if re.search(r"[.eE]", text) else int(text)


def _yaml_not_here(text: str) -> Any:
    raise _NotHere(f"the YAML number {text}")


#: (test, conversion) of a plain scalar that is no constant, the first that matches converts it (else a string).
_YAML_PLAIN: tuple[tuple[Callable[[str], Any], Callable[[str], Any]], ...] = (
    (_YAML_NUMBER.match, _yaml_number),
    (re.compile(r"[-+]?0x[0-9a-fA-F]+").fullmatch, lambda text: int(text, 16)),
    (re.compile(r"[-+]?0o[0-7]+").fullmatch, lambda text: int(text.replace("0o", ""), 8)),
    (_YAML_DATE.match, lambda text: f"{text}T00:00:00Z"),
    (lambda text: text.lower().lstrip("+-") in (".inf", ".nan"), _yaml_not_here),
)


def _plain_scalar(text: str) -> Any:
    """A plain scalar of a plain tag resolved as `_yaml_scalar` says."""
    if text in _YAML_CONSTANTS:
        return _YAML_CONSTANTS[text]
    for matches, conversion in _YAML_PLAIN:
        if matches(text):
            return conversion(text)
    return text


_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp"))
_RESOLVER = yaml.resolver.Resolver()


def _yaml_node(node: Any, depth: int = 0) -> Any:
    if depth > 100:
        raise _NotHere("YAML nested over 100 levels")
    if isinstance(node, yaml.MappingNode):
        return {str(_yaml_node(k, depth + 1)): _yaml_node(v, depth + 1) for k, v in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [_yaml_node(v, depth + 1) for v in node.value]
    return _yaml_scalar(node)


def _yamldecode(text: Any) -> Any:
    """One YAML document as Terraform's yamldecode reads it (`_yaml_scalar`); a value it would read otherwise than
    this reader does (a custom tag, an infinity) is unknown."""
    try:
        node = yaml.compose(_string(text, "yamldecode"), Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise FunctionError(f"not valid YAML: {exc}") from None
    if node is None:
        raise FunctionError("missing start of document")
    try:
        return _yaml_node(node)
    except _NotHere as why:
        return Unknown(ANY, f"yamldecode(): {why} is not read here")


# --- numbers and encodings -----------------------------------------------------------------------------------------

def _minmax(pick: Callable[..., Any]) -> Callable[..., Any]:
    def apply(*values: Any) -> Any:
        if not values:
            raise FunctionError("must have at least one argument")
        return pick(_num(v) for v in values)
    return apply


def _sum(values: Any) -> Any:
    items = _list(values)
    if not items:
        raise FunctionError("cannot sum an empty list")
    if not wholly_known(items):
        return Unknown(NUMBER)
    return number(math.fsum(_num(v) for v in items)) if any(isinstance(_num(v), float) for v in items) \
        else sum(_int(v) for v in items)


def _encode(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def _jsonencode(value: Any) -> Any:
    if not wholly_known(value):
        return Unknown(STRING)
    return _encode(value)


def _jsondecode(text: Any) -> Any:
    try:
        return _numbers(json.loads(_string(text)))
    except json.JSONDecodeError as exc:
        raise FunctionError(f"invalid JSON: {exc}") from None


def _numbers(value: Any) -> Any:
    if isinstance(value, float):
        return number(value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value


def _base64decode(text: Any) -> Any:
    try:
        return base64.b64decode(_string(text), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as exc:
        raise FunctionError(f"failed to decode base64 data: {exc}") from None


def _digest(name: str, encode: Callable[[bytes], str]) -> Callable[..., Any]:
    return lambda text: encode(hashlib.new(name, _string(text).encode()).digest())


def _parseint(text: Any, base: Any) -> Any:
    try:
        return int(_string(text), _int(base))
    except ValueError:
        raise FunctionError(f"cannot parse {text!r} as a base {base} integer") from None


def _tostring(value: Any) -> Any:
    return None if value is None else _string(value)


def _converter(type_: Type) -> Callable[[Any], Any]:
    def apply(value: Any) -> Any:
        try:
            return convert(value, type_)
        except ConversionError as exc:
            raise FunctionError(str(exc)) from None
    return apply


def _substring_test(test: Callable[[str, str], bool]) -> Callable[..., Any]:
    return lambda text, part: test(_string(text), _string(part))


def _trim(text: Any, chars: Any) -> Any:
    return _string(text).strip(_string(chars))


FUNCTIONS: dict[str, Function] = {
    # collections
    "merge": Function(_merge, MAP), "lookup": Function(_lookup), "concat": Function(
        lambda *lists: [v for values in lists for v in _list(values)], LIST),
    "coalesce": Function(_coalesce, ANY, takes_unknown=True),
    "coalescelist": Function(_coalescelist, LIST, takes_unknown=True),
    "length": Function(_length, NUMBER), "keys": Function(_keys, LIST), "values": Function(_values, LIST),
    "contains": Function(_contains, BOOL), "distinct": Function(_distinct, LIST), "element": Function(_element),
    "flatten": Function(_flatten, LIST), "range": Function(_range, LIST), "zipmap": Function(_zipmap, MAP),
    "slice": Function(_slice, LIST), "reverse": Function(lambda v: list(reversed(_list(v))), LIST),
    "sort": Function(_sort, LIST), "index": Function(_index, NUMBER), "one": Function(_one),
    "compact": Function(_compact, LIST), "sum": Function(_sum, NUMBER),
    "setunion": Function(_set_op("union"), LIST), "setintersection": Function(_set_op("intersection"), LIST),
    "setsubtract": Function(_set_op("subtract"), LIST),
    "alltrue": Function(lambda v: all(to_bool(x) for x in _list(v)), BOOL),
    "anytrue": Function(lambda v: any(to_bool(x) for x in _list(v)), BOOL),
    "toset": Function(_toset, LIST), "tolist": Function(_tolist, LIST), "tomap": Function(_tomap, MAP),
    # strings
    "format": Function(_format, STRING), "formatlist": Function(_formatlist, LIST),
    "join": Function(_join, STRING), "split": Function(_split, LIST),
    "replace": Function(_replace, STRING), "lower": Function(lambda s: _string(s).lower(), STRING),
    "upper": Function(lambda s: _string(s).upper(), STRING),
    "title": Function(lambda s: re.sub(r"\b\w", lambda m: m.group().upper(), _string(s)), STRING),
    "trimspace": Function(lambda s: _string(s).strip(), STRING), "trim": Function(_trim, STRING),
    "trimprefix": Function(lambda s, p: _string(s).removeprefix(_string(p)), STRING),
    "trimsuffix": Function(lambda s, p: _string(s).removesuffix(_string(p)), STRING),
    "chomp": Function(lambda s: _string(s).rstrip("\r\n"), STRING),
    "startswith": Function(_substring_test(str.startswith), BOOL),
    "endswith": Function(_substring_test(str.endswith), BOOL),
    "strcontains": Function(_substring_test(lambda a, b: b in a), BOOL),
    "strrev": Function(lambda s: _string(s)[::-1], STRING), "substr": Function(_substr, STRING),
    "regex": Function(_regex), "regexall": Function(_regexall, LIST),
    # numbers
    "min": Function(_minmax(min), NUMBER), "max": Function(_minmax(max), NUMBER),
    "abs": Function(lambda n: abs(_num(n)), NUMBER), "ceil": Function(lambda n: math.ceil(_num(n)), NUMBER),
    "floor": Function(lambda n: math.floor(_num(n)), NUMBER),
    "signum": Function(lambda n: (_num(n) > 0) - (_num(n) < 0), NUMBER),
    "pow": Function(lambda a, b: number(float(_num(a)) ** _num(b)), NUMBER),
    "parseint": Function(_parseint, NUMBER),
    # conversions and encodings
    "tostring": Function(_tostring, STRING), "tonumber": Function(_converter(NUMBER), NUMBER),
    "tobool": Function(_converter(BOOL), BOOL),
    "jsonencode": Function(_jsonencode, STRING), "jsondecode": Function(_jsondecode),
    "yamldecode": Function(_yamldecode),
    "cidrhost": Function(_cidrhost, STRING), "cidrsubnet": Function(_cidrsubnet, STRING),
    "cidrnetmask": Function(_cidrnetmask, STRING),
    "base64encode": Function(lambda s: base64.b64encode(_string(s).encode()).decode(), STRING),
    "base64decode": Function(_base64decode, STRING),
    "md5": Function(_digest("md5", bytes.hex), STRING), "sha1": Function(_digest("sha1", bytes.hex), STRING),
    "sha256": Function(_digest("sha256", bytes.hex), STRING),
    "base64sha256": Function(_digest("sha256", lambda b: base64.b64encode(b).decode()), STRING),
}

#: Functions whose value a plan does not know either.
AFTER_APPLY = frozenset({"timestamp", "uuid", "bcrypt", "uuidv5"})

__all__ = ["AFTER_APPLY", "FUNCTIONS", "Function", "FunctionError", "is_number"]
