"""An offline evaluator of Databricks cluster policy definitions.

A policy definition is a JSON object mapping an *attribute path* to one *limitation element*. ``evaluate`` says
whether a cluster, in the Clusters API (snake_case) shape, satisfies a definition, and which elements it breaks.
Nothing here talks to Databricks; Pulumi camelCase inputs should be normalised first
(``dbx_ai_infra.policies.common.normalize_cluster``).

Paths
-----
* Dotted attribute names: ``spark_version``, ``autoscale.max_workers``, ``aws_attributes.first_on_demand``.
* Map-typed attributes (``custom_tags``, ``spark_conf``, ``spark_env_vars``) take the whole rest of the path as one
  key: ``spark_conf.spark.databricks.cluster.profile`` is the key ``spark.databricks.cluster.profile`` of
  ``spark_conf``. A ``*`` or a number after a map attribute is a literal key, not a wildcard or an index.
* List items: ``*`` matches every item (``init_scripts.*.volumes.destination``); a number matches the item at that
  index (``init_scripts.0.workspace.destination``). An index past the end of the list means "absent".
* Virtual attributes: ``cluster_type`` (``all-purpose`` | ``job`` | ``dlt``) and ``dbus_per_hour`` are not read from
  the cluster but passed by the caller (``evaluate(..., cluster_type=..., dbus_per_hour=...)``).

Presence
--------
A value is *present* when it is not ``None`` (JSON null) and, for an object or a list, when it holds at least one
present value: ``"autoscale": {}``, ``"autoscale": {"min_workers": null}`` and ``"init_scripts": []`` set nothing,
so they count as absent. An empty string, ``0`` and ``false`` are present.

Limitation types (an element's ``type``)
----------------------------------------
``fixed`` (``value``, optional ``hidden``)
    Present and different from ``value`` -> violation. Absent -> fine: Databricks fills the value in.
``forbidden``
    Any present value at the path *or below it* -> violation (``autoscale`` forbidden rejects a cluster with
    ``autoscale.min_workers``). Absent -> fine.
``allowlist`` (``values``) / ``blocklist`` (``values``)
    The value must be / must not be equal to one of ``values``.
``regex`` (``pattern``)
    The value must be a string that matches ``pattern`` in full (anchored at both ends, Python ``re.fullmatch``).
    Choice: a non-string value (number, boolean) is a violation; it is not converted to text.
``range`` (``minValue`` and/or ``maxValue``)
    The value must be a number (booleans are not numbers) with ``minValue <= value <= maxValue``; both bounds are
    inclusive and either may be left out. A non-number is a violation.
``unlimited``
    Any value, or none.

Equality (``fixed``, ``allowlist``, ``blocklist``): numbers compare numerically (``2 == 2.0``); booleans only equal
booleans (``true`` is not ``1``); strings compare exactly (case-sensitive, and the string ``"2"`` is not the number
``2``); objects and lists compare item by item with the same rules.

Absent attributes
-----------------
For ``fixed``, ``forbidden`` and ``unlimited`` an absent attribute is fine. For ``allowlist``, ``blocklist``,
``regex`` and ``range``:

1. with a ``defaultValue``, the cluster gets that default, so the default is checked against the limit (a failing
   default is reported under the element's own type, with ``actual=None``);
2. else with ``"isOptional": true``, absent is fine;
3. else the attribute is required: a violation with ``limit="required"``.

``hidden`` only changes the UI; it has no effect here. ``isOptional`` and ``defaultValue`` never excuse a present
value that breaks the limit.

Wildcard and indexed paths
--------------------------
Every value a ``*`` path matches must satisfy the element; each failing item is its own violation (``path`` is the
policy path, the message names the concrete one, e.g. ``init_scripts.1.volumes.destination``). Choice: items that
do not carry the attribute at all (a ``workspace`` init script under ``init_scripts.*.volumes.destination``) are
not checked by that element. When a ``*`` path matches no value at all (no list, an empty list, or no item carrying
the attribute) the absent-attribute rules above apply once to the path. A ``*`` element and an indexed element on
the same list both apply to the indexed item. ``*`` only walks lists; it matches nothing on an object.

Virtual attributes
------------------
``cluster_type`` is always present (the caller's value, default ``all-purpose``) and is checked like any value.
``dbus_per_hour`` is checked like any value when the caller gives an estimate. When the caller passes ``None`` and
the policy limits it (any type other than ``unlimited``), nothing is reported as a violation; instead
``PolicyResult.unchecked`` carries one line, starting with the path, saying it was not checked.

Definition validation (``parse_definition``)
--------------------------------------------
``DefinitionError`` (a ``ValueError``) is raised, naming the path and the fix, for: text that is not JSON, a JSON
value that is not an object, a path given twice in the JSON text, an empty path or empty path segment, an element
that is not an object, a missing or unknown ``type``, a key the element's type does not take (a typo such as
``isoptional``), ``fixed`` without ``value``, ``allowlist``/``blocklist`` without a non-empty ``values`` list,
``regex`` without a string ``pattern`` or with one that does not compile, ``range`` with neither bound, a
non-numeric bound or ``minValue > maxValue``, a non-boolean ``isOptional``/``hidden``, and a ``cluster_type``
value other than ``all-purpose``/``job``/``dlt``. A ``defaultValue`` that breaks its own limit is *not* a definition
error; ``evaluate`` reports it when the attribute is absent.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.dbxtypes.errors import clip, cut
from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import JOBS_COMPUTE

__all__ = [
    "CLUSTER_TYPES",
    "LIMIT_TYPES",
    "MAP_ATTRIBUTES",
    "VIRTUAL_ATTRIBUTES",
    "DefinitionError",
    "ElementViolation",
    "PolicyResult",
    "evaluate",
    "parse_definition",
]

#: Limitation types of the Databricks policy definition language.
LIMIT_TYPES = ("fixed", "forbidden", "allowlist", "blocklist", "regex", "range", "unlimited")

#: Values of the ``cluster_type`` virtual attribute.
CLUSTER_TYPES = ("all-purpose", "job", "dlt")

#: Attributes whose keys are user data: the rest of a policy path after them is one key.
MAP_ATTRIBUTES = frozenset({"custom_tags", "spark_conf", "spark_env_vars"})

#: Paths the caller supplies rather than the cluster.
VIRTUAL_ATTRIBUTES = frozenset({"cluster_type", "dbus_per_hour"})

_COMMON_KEYS = frozenset({"type", "defaultValue", "isOptional", "hidden"})
_TYPE_KEYS: dict[str, frozenset[str]] = {
    "fixed": frozenset({"value"}),
    "forbidden": frozenset(),
    "allowlist": frozenset({"values"}),
    "blocklist": frozenset({"values"}),
    "regex": frozenset({"pattern"}),
    "range": frozenset({"minValue", "maxValue"}),
    "unlimited": frozenset(),
}

_ABSENT_IS_FINE = frozenset({"fixed", "forbidden", "unlimited"})
#: Attributes a job cluster (``cluster_type`` job) cannot carry: the Jobs API has no auto-termination for job
#: clusters, which end with their run (``jobs.JobSettings`` ``job_clusters[].new_cluster``; read 2026-12).
JOB_CLUSTER_ABSENT = frozenset({"autotermination_minutes"})


# --------------------------------------------------------------------------------------------------------------------
# Results and errors
# --------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ElementViolation:
    """One policy element the cluster breaks."""

    path: str  #: the policy path, e.g. ``autoscale.max_workers`` (``init_scripts.*.volumes.destination`` for lists)
    limit: str  #: ``fixed`` | ``forbidden`` | ``allowlist`` | ``blocklist`` | ``regex`` | ``range`` | ``required``
    actual: object  #: the cluster's value (``None`` when absent)
    message: str  #: e.g. ``autoscale.max_workers is 20; the policy allows at most 10 (range)``


@dataclass(frozen=True)
class PolicyResult:
    """The outcome of ``evaluate``: the violations, and what could not be checked offline."""

    violations: tuple[ElementViolation, ...] = ()
    unchecked: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        """True when the cluster breaks no element (``unchecked`` entries do not count)."""
        return not self.violations


class DefinitionError(ValueError):
    """A policy definition that is not valid policy-definition JSON; the message names the path and the fix."""


# --------------------------------------------------------------------------------------------------------------------
# Definition parsing and validation
# --------------------------------------------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DefinitionError(
                f"key {key!r} appears more than once in one JSON object of the policy definition; a path takes "
                "exactly one limitation element (and an element each key once), so merge the duplicates"
            )
        out[key] = value
    return out


def _validate_path(path: Any) -> None:
    if not isinstance(path, str) or not path:
        raise DefinitionError(f"policy path {path!r} is not a non-empty string; use an attribute path such as "
                              "'spark_version' or 'autoscale.max_workers'")
    if any(segment == "" for segment in _split_path(path)):
        raise DefinitionError(f"policy path {path!r} has an empty segment; remove the stray '.' "
                              "(paths look like 'aws_attributes.first_on_demand' or 'custom_tags.<tag>')")


def _validate_element(path: str, element: Any) -> None:
    """One element checked in the order its problems are reported: its form, its keys, its type's own keys, and
    what ``cluster_type`` may name."""
    kind = _element_kind(path, element)
    _check_keys(path, element, kind)
    _TYPE_VALIDATORS.get(kind, _no_type_keys)(path, element, kind)
    if path == "cluster_type":
        _validate_cluster_type(element, kind)


def _element_kind(path: str, element: Any) -> str:
    """The element's ``type``, once it is an object that names a known one."""
    if not isinstance(element, Mapping):
        raise DefinitionError(
            f"policy element {path!r} is {type(element).__name__} {_show(element)}, not an object; write it as "
            f'{{"type": "fixed", "value": ...}} or another limitation element'
        )
    if "type" not in element:
        raise DefinitionError(f"policy element {path!r} has no 'type'; add one of: {', '.join(LIMIT_TYPES)}")
    kind = element["type"]
    if kind not in _TYPE_KEYS:
        raise DefinitionError(
            f"policy element {path!r} has unknown type {_show(kind)}; use one of: {', '.join(LIMIT_TYPES)}"
        )
    return str(kind)


def _check_keys(path: str, element: Mapping[str, Any], kind: str) -> None:
    """No key the element's type does not take, and boolean flags."""
    unknown = sorted(set(element) - _COMMON_KEYS - _TYPE_KEYS[kind])
    if unknown:
        accepted = ", ".join(sorted(_COMMON_KEYS | _TYPE_KEYS[kind]))
        raise DefinitionError(
            f"policy element {path!r} ({kind}) has key(s) {', '.join(map(repr, unknown))} that a {kind} element "
            f"does not take; remove them or fix the spelling (accepted: {accepted})"
        )
    for flag in ("isOptional", "hidden"):
        if flag in element and not isinstance(element[flag], bool):
            raise DefinitionError(
                f"policy element {path!r}: {flag!r} is {_show(element[flag])}; write true or false"
            )


def _no_type_keys(path: str, element: Mapping[str, Any], kind: str) -> None:
    """``forbidden`` and ``unlimited`` take no key of their own."""


def _validate_fixed(path: str, element: Mapping[str, Any], kind: str) -> None:
    if "value" not in element:
        raise DefinitionError(f"policy element {path!r} is fixed but has no 'value'; add \"value\": <the value>")


def _validate_values(path: str, element: Mapping[str, Any], kind: str) -> None:
    """An allowlist's or a blocklist's ``values``: a non-empty list."""
    values = element.get("values")
    if "values" not in element:
        raise DefinitionError(f"policy element {path!r} is an {kind} but has no 'values'; "
                              "add \"values\": [<value>, ...]")
    if not isinstance(values, list):
        raise DefinitionError(f"policy element {path!r}: 'values' is {_show(values)}, not a list; "
                              "write \"values\": [<value>, ...]")
    if not values:
        other = "forbidden" if kind == "allowlist" else "unlimited"
        raise DefinitionError(f"policy element {path!r} is an {kind} with an empty 'values' list; "
                              f"list at least one value, or use type {other!r}")


def _validate_regex(path: str, element: Mapping[str, Any], kind: str) -> None:
    """A regex's ``pattern``: a string that compiles."""
    if "pattern" not in element:
        raise DefinitionError(f"policy element {path!r} is a regex but has no 'pattern'; "
                              "add \"pattern\": \"<regular expression>\"")
    pattern = element["pattern"]
    if not isinstance(pattern, str):
        raise DefinitionError(f"policy element {path!r}: 'pattern' is {_show(pattern)}, not a string; "
                              "write the regular expression as a JSON string")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise DefinitionError(f"policy element {path!r}: 'pattern' {pattern!r} is not a valid regular "
                              f"expression ({exc}); fix the expression") from None


def _validate_range(path: str, element: Mapping[str, Any], kind: str) -> None:
    """A range's bounds: at least one, numbers, in order."""
    if "minValue" not in element and "maxValue" not in element:
        raise DefinitionError(f"policy element {path!r} is a range with neither 'minValue' nor 'maxValue'; "
                              "add at least one bound, or use type 'unlimited'")
    for bound in ("minValue", "maxValue"):
        if bound in element and not _is_number(element[bound]):
            raise DefinitionError(f"policy element {path!r}: {bound!r} is {_show(element[bound])}, "
                                  "not a number; write a JSON number")
    if "minValue" in element and "maxValue" in element and element["minValue"] > element["maxValue"]:
        raise DefinitionError(
            f"policy element {path!r}: minValue {_show(element['minValue'])} is greater than maxValue "
            f"{_show(element['maxValue'])}; swap or correct the bounds"
        )


#: The checks of each limitation type's own keys.
_TYPE_VALIDATORS = {"fixed": _validate_fixed, "allowlist": _validate_values, "blocklist": _validate_values,
                    "regex": _validate_regex, "range": _validate_range}


def _offered_values(element: Mapping[str, Any], kind: str) -> list[Any]:
    """The values an element names: a fixed one's value, an allowlist's or blocklist's values."""
    if kind == "fixed":
        return [element["value"]]
    if kind in ("allowlist", "blocklist"):
        return list(element["values"])
    return []


def _validate_cluster_type(element: Mapping[str, Any], kind: str) -> None:
    bad = [value for value in _offered_values(element, kind) if value not in CLUSTER_TYPES]
    if bad:
        raise DefinitionError(
            f"policy element 'cluster_type' names {', '.join(_show(v) for v in bad)}; cluster_type takes "
            f"only {', '.join(map(repr, CLUSTER_TYPES))}"
        )


def parse_definition(definition: str | dict) -> dict:
    """A policy definition (JSON text or an already-parsed dict), validated; returns a fresh ``{path: element}``.

    Raises ``DefinitionError`` naming the offending path and the fix (see the module docstring for the cases).
    """
    if isinstance(definition, (bytes, bytearray)):
        definition = definition.decode("utf-8")
    if isinstance(definition, str):
        try:
            parsed = json.loads(definition, object_pairs_hook=_no_duplicate_keys)
        except json.JSONDecodeError as exc:
            raise DefinitionError(f"policy definition is not valid JSON ({exc}); fix the JSON syntax") from None
    else:
        parsed = definition
    if not isinstance(parsed, Mapping):
        raise DefinitionError(
            f"policy definition is {type(parsed).__name__}, not a JSON object; write it as "
            '{"<attribute path>": {"type": ...}, ...}'
        )
    for path, element in parsed.items():
        _validate_path(path)
        _validate_element(path, element)
    return {path: copy.deepcopy(dict(element)) for path, element in parsed.items()}


# --------------------------------------------------------------------------------------------------------------------
# The cluster side: presence, path resolution, flattening
# --------------------------------------------------------------------------------------------------------------------


def _present(value: Any) -> bool:
    """Not None, and for objects and lists: holding at least one present value."""
    if value is None:
        return False
    if isinstance(value, Mapping):
        return any(_present(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_present(item) for item in value)
    return True


def _split_path(path: str) -> list[str]:
    head, sep, rest = path.partition(".")
    if head in MAP_ATTRIBUTES and sep:
        return [head, rest]
    return path.split(".")


def _resolve(node: Any, tokens: list[str], where: str) -> Iterator[tuple[str, Any]]:
    """Every present value at ``tokens`` below ``node``, with its concrete dotted path."""
    if not tokens:
        if _present(node):
            yield where, node
        return
    token, rest = tokens[0], tokens[1:]
    if isinstance(node, Mapping):
        if token in node:
            yield from _resolve(node[token], rest, f"{where}.{token}" if where else token)
    elif isinstance(node, (list, tuple)):
        if token == "*":
            for index, item in enumerate(node):
                yield from _resolve(item, rest, f"{where}.{index}")
        elif token.isdigit() and int(token) < len(node):
            yield from _resolve(node[int(token)], rest, f"{where}.{token}")


# --------------------------------------------------------------------------------------------------------------------
# Checking one value against one element
# --------------------------------------------------------------------------------------------------------------------


def _show(value: Any) -> str:
    """A value as JSON for a message, cut to a readable length (a message never echoes a whole document)."""
    try:
        return cut(json.dumps(value, sort_keys=True))
    except (TypeError, ValueError):
        return clip(value)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if _is_number(value):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return a is None and b is None


def _range_text(element: Mapping[str, Any]) -> str:
    low, high = element.get("minValue"), element.get("maxValue")
    if "minValue" in element and "maxValue" in element:
        return f"a number from {_show(low)} to {_show(high)}"
    if "minValue" in element:
        return f"a number of at least {_show(low)}"
    return f"a number of at most {_show(high)}"


def _check(element: Mapping[str, Any], value: Any) -> str | None:
    """Why ``value`` breaks ``element`` ("the policy ..."), or None when it complies. ``value`` is present."""
    kind = element["type"]
    if kind not in _CHECKS:
        raise AssertionError(f"unvalidated element type {kind!r}")  # parse_definition rejects unknown types
    return _CHECKS[kind](element, value)


def _check_unlimited(element: Mapping[str, Any], value: Any) -> str | None:
    return None


def _check_forbidden(element: Mapping[str, Any], value: Any) -> str | None:
    return "the policy forbids setting it"


def _check_fixed(element: Mapping[str, Any], value: Any) -> str | None:
    if _equal(value, element["value"]):
        return None
    return f"the policy fixes it to {_show(element['value'])}"


def _check_allowlist(element: Mapping[str, Any], value: Any) -> str | None:
    if any(_equal(value, allowed) for allowed in element["values"]):
        return None
    return f"the policy allows only {_show(element['values'])}"


def _check_blocklist(element: Mapping[str, Any], value: Any) -> str | None:
    if not any(_equal(value, blocked) for blocked in element["values"]):
        return None
    return f"the policy blocks {_show(element['values'])}"


def _check_regex(element: Mapping[str, Any], value: Any) -> str | None:
    if isinstance(value, str) and re.fullmatch(element["pattern"], value):
        return None
    if isinstance(value, str):
        return f"the policy requires it to match {_show(element['pattern'])} in full"
    return f"the policy requires a string matching {_show(element['pattern'])} in full, not {_json_type(value)}"


def _check_range(element: Mapping[str, Any], value: Any) -> str | None:
    if not _is_number(value):
        return f"the policy requires {_range_text(element)}, not {_json_type(value)}"
    if "minValue" in element and value < element["minValue"]:
        return f"the policy requires at least {_show(element['minValue'])}"
    if "maxValue" in element and value > element["maxValue"]:
        return f"the policy allows at most {_show(element['maxValue'])}"
    return None


#: How each limitation type judges a present value.
_CHECKS = {"unlimited": _check_unlimited, "forbidden": _check_forbidden, "fixed": _check_fixed,
           "allowlist": _check_allowlist, "blocklist": _check_blocklist, "regex": _check_regex,
           "range": _check_range}


def _describe(element: Mapping[str, Any]) -> str:
    kind = element["type"]
    if kind == "allowlist":
        return f"one of {_show(element['values'])}"
    if kind == "blocklist":
        return f"a value outside {_show(element['values'])}"
    if kind == "regex":
        return f"a string matching {_show(element['pattern'])} in full"
    if kind == "range":
        return _range_text(element)
    if kind == "fixed":
        return _show(element["value"])
    return "any value"


# --------------------------------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------------------------------


def _present_violation(path: str, where: str, element: Mapping[str, Any], value: Any) -> ElementViolation | None:
    reason = _check(element, value)
    if reason is None:
        return None
    kind = element["type"]
    verb = "is set to" if kind == "forbidden" else "is"
    return ElementViolation(path, kind, value, f"{where} {verb} {_show(value)}; {reason} ({kind})")


def _absent_violation(path: str, element: Mapping[str, Any], final: bool = False) -> ElementViolation | None:
    kind = element["type"]
    if final and kind == "fixed":
        # the cluster as it exists (an export): a policy applies its fixed values at creation, so one that is not
        # there was never applied
        return ElementViolation(path, kind, None, f"{path} is not set, but the policy fixes it to "
                                                  f"{_show(element.get('value'))} (fixed)")
    if kind in _ABSENT_IS_FINE:
        return None
    if "defaultValue" in element:
        default = element["defaultValue"]
        reason = _check(element, default)
        if reason is None:
            return None
        return ElementViolation(
            path, kind, None,
            f"{path} is not set, so it gets the policy's defaultValue {_show(default)}; {reason} ({kind})",
        )
    if element.get("isOptional") is True:
        return None
    return ElementViolation(
        path, "required", None,
        f"{path} is not set; the policy requires it ({kind}: {_describe(element)})",
    )


def evaluate(
    definition: str | dict,
    cluster: dict,
    *,
    cluster_type: str = "all-purpose",
    dbus_per_hour: float | None = None,
    final: bool = False,
) -> PolicyResult:
    """Check a cluster (Clusters API JSON shape) against a policy definition (JSON text or dict).

    ``cluster_type`` and ``dbus_per_hour`` feed the virtual attributes of the same names. ``final``: the cluster as
    it exists (a workspace export), not a request: a ``fixed`` attribute it lacks breaks the policy (Databricks
    would have set it when the cluster was made under the policy). Violations come in the
    definition's order (list items in list order). Raises ``DefinitionError`` for an invalid definition,
    ``TypeError``/``ValueError`` for a cluster that is not a mapping or an unknown ``cluster_type``.
    """
    elements = parse_definition(definition)
    _check_arguments(cluster, cluster_type, dbus_per_hour)
    violations: list[ElementViolation] = []
    unchecked: list[str] = []
    for path, element in elements.items():
        found = _values_at(path, element, cluster, cluster_type, dbus_per_hour, unchecked)
        if found is not None:
            violations += _element_violations(path, element, found, cluster_type, final)
    return PolicyResult(tuple(violations), tuple(unchecked))


def _check_arguments(cluster: Any, cluster_type: str, dbus_per_hour: Any) -> None:
    """`evaluate`'s arguments: a cluster mapping, a known ``cluster_type``, a number or None for the DBU rate."""
    if not isinstance(cluster, Mapping):
        raise TypeError(f"expected a cluster mapping, got {type(cluster).__name__}")
    if cluster_type not in CLUSTER_TYPES:
        raise ValueError(f"cluster_type {cluster_type!r} is not one of {', '.join(map(repr, CLUSTER_TYPES))}")
    if dbus_per_hour is not None and not _is_number(dbus_per_hour):
        raise TypeError(f"dbus_per_hour must be a number or None, got {dbus_per_hour!r}")


def _values_at(path: str, element: Mapping[str, Any], cluster: Mapping[str, Any], cluster_type: str,
               dbus_per_hour: float | None, unchecked: list[str]) -> list[tuple[str, Any]] | None:
    """The present values a path names (a virtual attribute's from the caller), with their concrete paths; None
    when a limited ``dbus_per_hour`` has no estimate (said in ``unchecked``) or an unlimited one none."""
    if path == "cluster_type":
        return [(path, cluster_type)]
    if path != "dbus_per_hour":
        return list(_resolve(cluster, _split_path(path), ""))
    if dbus_per_hour is not None:
        return [(path, dbus_per_hour)]
    if element["type"] != "unlimited":
        unchecked.append(
            f"dbus_per_hour not checked: no DBU-per-hour estimate was given "
            f"(the policy's {element['type']} limit: {_describe(element)})"
        )
    return None


def _element_violations(path: str, element: Mapping[str, Any], found: list[tuple[str, Any]], cluster_type: str,
                        final: bool) -> list[ElementViolation]:
    """One element's violations: of each value found, else of its absence (on a job cluster, of an attribute it
    cannot carry)."""
    if not found and cluster_type == "job" and path in JOB_CLUSTER_ABSENT:
        return _job_cluster_absent(path, element)
    if not found:
        absent = _absent_violation(path, element, final)
        return [] if absent is None else [absent]
    present = (_present_violation(path, where, element, value) for where, value in found)
    return [violation for violation in present if violation is not None]


def _job_cluster_absent(path: str, element: Mapping[str, Any]) -> list[ElementViolation]:
    """A job cluster cannot carry this attribute, so a default cannot be applied either: the policy admits job
    clusters only if the element is optional (or one that is fine when absent)."""
    if element["type"] in _ABSENT_IS_FINE or element.get("isOptional") is True:
        return []
    return [ElementViolation(
        path, "required", None,
        f"{path} cannot be set on a job cluster, but the policy requires it ({element['type']}: "
        f"{_describe(element)}); no job cluster can meet this policy. Fix: mark it isOptional.")]


def evaluate_shape(definition: str | dict, shape: ClusterShape, *, dbus_per_hour: float | None = None,
                   final: bool = False) -> PolicyResult:
    """`evaluate` for a `ClusterShape`: its Clusters API props, and ``cluster_type`` from its compute kind (a job
    cluster is ``job``, an all-purpose cluster ``all-purpose``)."""
    cluster_type = "job" if shape.compute_kind == JOBS_COMPUTE else "all-purpose"
    return evaluate(definition, dict(shape.props), cluster_type=cluster_type, dbus_per_hour=dbus_per_hour,
                    final=final)
