"""What a Terraform plan's configuration says an attribute references, resolved to a resource instance of the plan.

A plan leaves the id of a resource it creates unknown (``instance_pool_id`` of a cluster on a pool of the same
plan), so the reference is read from the plan's ``configuration`` (``expressions.<attribute>.references``, as
``terraform show -json`` writes them) and the referenced resource's address stands for its id. Terraform lists a
static reference with its ``.id`` (``["databricks_instance_pool.gpu[0].id", ...]``) and a dynamic one without it
(``databricks_instance_pool.gpu[count.index].id`` gives ``["databricks_instance_pool.gpu", "count.index"]``), so:

- ``x.id`` is resource ``x`` (with its module path);
- ``x`` with ``count.index`` or ``each.key`` is the instance of ``x`` with the referencing instance's own key (the
  usual pairing: the cluster and the pool share a count or a ``for_each``);
- ``each.value.id`` in a resource whose ``for_each`` iterates another resource is that resource, same key;
- ``var.<name>`` inside a module is what the module call passes as ``<name>``, resolved in the caller (through any
  depth of modules; a call with ``count``/``for_each`` gives the module instance's key).

A module path is resolved per instance: ``module.ml[1].databricks_cluster.c`` references
``module.ml[1].databricks_instance_pool.gpu``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import UNKNOWN_ARGUMENT

#: Attributes that name another resource by its id (a cluster's pools and policy; a ``databricks_permissions``'
#: target).
TERRAFORM_REFERENCES = ("instance_pool_id", "driver_instance_pool_id", "policy_id", "cluster_id", "job_id")

_NOT_RESOURCES = ("data.", "local.", "var.", "each.", "count.", "module.", "path.", "terraform.", "self.")
#: An instance key: ``[0]`` or ``["a"]`` (a quoted key may hold a ``]``).
_KEY_TEXT = r'\[(?:"[^"]*"|[^\]]*)\]'
_KEY = re.compile(_KEY_TEXT + "$")
_RESOURCE = re.compile(rf"^[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_-]*(?:{_KEY_TEXT})?$")
_MODULE_SEGMENT = re.compile(rf"module\.[A-Za-z_][A-Za-z0-9_-]*(?:{_KEY_TEXT})?\.")
#: Where a reference's key comes from: the referencing resource instance.
OWN_KEY = -1


@dataclass(frozen=True)
class Reference:
    """A configured reference: the target's configuration address (module path without keys) and where its
    instance key comes from (None: the address is complete; `OWN_KEY`: the referencing instance's key; n >= 0: the key
    of the referencing instance's n-th module segment)."""

    target: str
    key_from: int | None = None


def _modules(address: str) -> tuple[list[str], str]:
    """An address's module segments (``module.ml[0]``, with their keys) and the resource part."""
    segments = []
    rest = address
    while (m := _MODULE_SEGMENT.match(rest)) is not None:
        segments.append(m.group(0)[:-1])
        rest = rest[m.end():]
    return segments, rest


def config_address(address: str) -> str:
    """A resource instance's address as its configuration names it, every key dropped
    (``module.ml[0].databricks_cluster.x["a"]`` -> ``module.ml.databricks_cluster.x``)."""
    return re.sub(_KEY_TEXT, "", address)


def _key(segment: str) -> str:
    m = _KEY.search(segment)
    return m.group(0) if m else ""


def resolve(reference: Reference, instance: str) -> str:
    """The instance address ``reference`` names for the resource instance ``instance``."""
    own_modules, own_resource = _modules(instance)
    target_modules, target_resource = _modules(reference.target)
    # the target's module path takes the instance's keys where the paths agree (a module in the same module)
    for i, segment in enumerate(target_modules):
        if i < len(own_modules) and config_address(own_modules[i]) == segment:
            target_modules[i] = own_modules[i]
    if reference.key_from == OWN_KEY and not _key(target_resource):
        target_resource += _key(own_resource)
    elif reference.key_from is not None and reference.key_from >= 0 and not _key(target_resource):
        target_resource += _key(own_modules[reference.key_from]) if reference.key_from < len(own_modules) else ""
    return ".".join([*target_modules, target_resource])


def _is_resource(name: str) -> bool:
    """A managed resource's address (``databricks_instance_pool.gpu``, ``...gpu[0]``), not a variable, a local, a
    data source or an iterator."""
    return _RESOURCE.match(name) is not None and not name.startswith(_NOT_RESOURCES)


def _read(refs: Any, prefix: str, variables: Mapping[str, Reference], for_each: str | None,
          key_from: int) -> Reference | None:
    """The reference a list of ``references`` makes, or None (a constant, a data source, a local); a keyed one takes
    its key from ``key_from`` (`Reference.key_from`)."""
    names = [str(r) for r in refs or []]
    keyed = any(r in ("count.index", "each.key") for r in names)
    for r in names:
        if r.startswith("var."):
            found = variables.get(r.split(".")[1])
            if found is not None:
                return found
        elif r.startswith("each.value") and for_each:
            return Reference(for_each, key_from)
        elif r.endswith(".id") and _is_resource(r[:-3]):
            return Reference(f"{prefix}{r[:-3]}")
    for r in names:
        if keyed and _is_resource(r):
            return Reference(f"{prefix}{r}", key_from)
    return None


def _for_each_target(block: Mapping[str, Any], prefix: str) -> str | None:
    """The resource a ``for_each`` iterates (``for_each = databricks_instance_pool.gpu``), or None."""
    expression = block.get("for_each_expression")
    refs = expression.get("references") if isinstance(expression, Mapping) else None
    return next((f"{prefix}{r}" for r in (str(x) for x in refs or []) if _is_resource(r)), None)


def configured_references(doc: Mapping[str, Any]) -> dict[str, dict[str, Reference]]:
    """From the plan's ``configuration``: resource configuration address -> {attribute: `Reference`}, for
    `TERRAFORM_REFERENCES`, through every module."""
    out: dict[str, dict[str, Reference]] = {}
    _walk_references(_root_module(doc), "", {}, -1, out)
    return out


def _root_module(doc: Mapping[str, Any]) -> Any:
    configuration = doc.get("configuration")
    return configuration.get("root_module") if isinstance(configuration, Mapping) else None


def _expressions(block: Mapping[str, Any]) -> Mapping[str, Any]:
    """A configuration block's ``expressions`` ({} when it has none)."""
    given = block.get("expressions")
    return given if isinstance(given, Mapping) else {}


def _references(expression: Any) -> Any:
    """An expression's ``references`` (None for a constant or no expression)."""
    return expression.get("references") if isinstance(expression, Mapping) else None


def _walk_references(module: Any, prefix: str, variables: Mapping[str, Reference], depth: int,
                     out: dict[str, dict[str, Reference]]) -> None:
    """``depth``: the index of this module's segment in an instance address (-1: the root module)."""
    if not isinstance(module, Mapping):
        return
    for resource in module.get("resources") or []:
        if isinstance(resource, Mapping) and resource.get("address"):
            _resource_references(resource, prefix, variables, out)
    for name, call in (module.get("module_calls") or {}).items():
        if isinstance(call, Mapping):
            _walk_references(call.get("module"), f"{prefix}module.{name}.", _module_inputs(call, prefix, variables,
                                                                                          depth), depth + 1, out)


def _resource_references(resource: Mapping[str, Any], prefix: str, variables: Mapping[str, Reference],
                         out: dict[str, dict[str, Reference]]) -> None:
    expressions = _expressions(resource)
    for attribute in TERRAFORM_REFERENCES:
        found = _read(_references(expressions.get(attribute)), prefix, variables, _for_each_target(resource, prefix),
                      OWN_KEY)
        if found is not None:
            out.setdefault(f"{prefix}{resource['address']}", {})[attribute] = found


def _module_inputs(call: Mapping[str, Any], prefix: str, variables: Mapping[str, Reference],
                   depth: int) -> dict[str, Reference]:
    """The variables a module call passes a reference to: variable name -> `Reference`."""
    passed = {}
    for var, expression in _expressions(call).items():
        found = _read(_references(expression), prefix, variables, _for_each_target(call, prefix), depth + 1)
        if found is not None:
            passed[str(var)] = found
    return passed


#: Attributes a data source may select, and the type of data source that selects each (the provider's
#: ``databricks_spark_version`` and ``databricks_node_type``, whose ``id`` is the runtime key or node type).
SELECTED_BY: Mapping[str, str] = {"spark_version": "databricks_spark_version",
                                  "node_type_id": "databricks_node_type",
                                  "driver_node_type_id": "databricks_node_type"}
#: A data source's address (``data.databricks_spark_version.lts``), as a reference names it.
DATA_ADDRESS = r"data\.[a-z][a-z0-9_]*\.[A-Za-z_][A-Za-z0-9_-]*"
_DATA_REFERENCE = re.compile(rf"^({DATA_ADDRESS})")


def configured_selections(doc: Mapping[str, Any]) -> dict[str, dict[str, tuple[str, str, dict[str, Any]]]]:
    """From the plan's ``configuration``: resource configuration address -> {attribute: (data source address, its
    type, its arguments)} for each `SELECTED_BY` attribute set from a data source's ``id``. An argument is its
    ``constant_value``, or `UNKNOWN_ARGUMENT` when the configuration computes it."""
    out: dict[str, dict[str, tuple[str, str, dict[str, Any]]]] = {}
    _walk_selections(_root_module(doc), "", 0, out)
    return out


def _walk_selections(module: Any, prefix: str, depth: int,
                     out: dict[str, dict[str, tuple[str, str, dict[str, Any]]]]) -> None:
    if not isinstance(module, Mapping) or depth > 50:
        return
    resources = [r for r in module.get("resources") or [] if isinstance(r, Mapping) and r.get("address")]
    data = _selecting_data(resources)
    for resource in resources:
        selected = _selections(resource, prefix, data)
        if selected:
            out.setdefault(f"{prefix}{resource['address']}", {}).update(selected)
    for name, call in (module.get("module_calls") or {}).items():
        if isinstance(call, Mapping):
            _walk_selections(call.get("module"), f"{prefix}module.{name}.", depth + 1, out)


def _selecting_data(resources: list[Mapping[str, Any]]) -> dict[str, tuple[str, dict[str, Any]]]:
    """A module's data sources of a `SELECTED_BY` type: address -> (type, arguments)."""
    data: dict[str, tuple[str, dict[str, Any]]] = {}
    for resource in resources:
        if resource.get("mode") == "data" and resource.get("type") in SELECTED_BY.values():
            data[str(resource["address"])] = (str(resource["type"]), {
                key: e["constant_value"] if "constant_value" in e else UNKNOWN_ARGUMENT
                for key, e in _expressions(resource).items() if isinstance(e, Mapping)})
    return data


def _selections(resource: Mapping[str, Any], prefix: str,
                data: Mapping[str, tuple[str, dict[str, Any]]]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """The `SELECTED_BY` attributes of one resource that a data source of the module selects."""
    expressions = _expressions(resource)
    selected: dict[str, tuple[str, str, dict[str, Any]]] = {}
    for attribute, data_type in SELECTED_BY.items():
        for ref in _references(expressions.get(attribute)) or []:
            found = _DATA_REFERENCE.match(str(ref))
            if found and data.get(found.group(1), ("",))[0] == data_type:
                selected[attribute] = (f"{prefix}{found.group(1)}", data_type, data[found.group(1)][1])
                break
    return selected
