"""Where a number belongs in what the readers read (an export, a Terraform plan, Terraform code as written), and
the refusal of a value that is not one.

A cluster's ``min_workers = "many"`` was read as no number, that is 0, and priced: a wrong answer with exit 0. What
the API and Terraform take there is a number: Terraform converts a quoted number ("3") and refuses anything else
("Inappropriate value for attribute "min_workers": a number is required"; terraform v1.11, checked with
``terraform validate`` against the provider schema), and the Clusters API's JSON takes a number (databricks-sdk
``compute.AutoScale.min_workers: int``). So a quoted number is read as the number
(`dbx_ai_infra.dbxtypes.shape.as_number`), a
value Terraform knows only after apply stays unknown, and anything else (a word, a boolean, an object) is exit 2
naming the file, the resource, the field and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError, clip
from dbx_ai_infra.dbxtypes.shape import as_number
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLUSTER,
    INSTANCE_POOL,
    JOB,
    MODEL_SERVING_ENDPOINT,
    PROVISIONED_THROUGHPUT_ENDPOINT,
    UNKNOWN_ARGUMENT,
    UNKNOWN_VALUE,
    SelectedValue,
)

_CLUSTER = ("num_workers", "autoscale.min_workers", "autoscale.max_workers", "autotermination_minutes",
            "aws_attributes.first_on_demand", "azure_attributes.first_on_demand",
            "aws_attributes.spot_bid_price_percent", "azure_attributes.spot_bid_max_price")
_IN_JOB = ("job_clusters.new_cluster", "tasks.new_cluster", "new_cluster")

#: A served entity's numbers (databricks-sdk ``serving.ServedEntityOutput``, ``ServedModelOutput``).
_ENTITY_NUMBERS = tuple(f"config.{entities}.{field}" for entities in ("served_entities", "served_models")
                        for field in ("min_provisioned_throughput", "max_provisioned_throughput",
                                      "provisioned_model_units", "min_provisioned_concurrency",
                                      "max_provisioned_concurrency"))

#: Per resource kind, the fields (dotted; a list on the way is each of its elements) that hold a number.
NUMERIC_FIELDS: Mapping[str, tuple[str, ...]] = {
    CLUSTER: _CLUSTER,
    JOB: (*(f"{where}.{field}" for where in _IN_JOB for field in _CLUSTER), "max_concurrent_runs", "timeout_seconds",
          "tasks.max_retries", "tasks.timeout_seconds"),
    INSTANCE_POOL: ("min_idle_instances", "max_capacity", "idle_instance_autotermination_minutes"),
    MODEL_SERVING_ENDPOINT: _ENTITY_NUMBERS,
    PROVISIONED_THROUGHPUT_ENDPOINT: _ENTITY_NUMBERS,
}


def _values(value: Any, parts: list[str], path: str) -> Iterator[tuple[str, Any]]:
    """The values at ``parts`` under ``value``, each with its path (a list on the way: each element, indexed)."""
    if isinstance(value, list) and parts:
        for i, element in enumerate(value):
            yield from _values(element, parts, f"{path}[{i}]")
        return
    if not parts:
        yield path, value
        return
    if isinstance(value, Mapping) and value.get(parts[0]) is not None:
        yield from _values(value[parts[0]], parts[1:], f"{path}.{parts[0]}" if path else parts[0])


#: `NUMERIC_FIELDS`, each field split at its dots once.
_PARTS: Mapping[str, tuple[tuple[str, ...], ...]] = {kind: tuple(tuple(f.split(".")) for f in fields)
                                                     for kind, fields in NUMERIC_FIELDS.items()}


def _is_number(value: Any) -> bool:
    """A number, a quoted number, or a value known only after apply."""
    kind = type(value)
    if kind is int:
        return True
    if kind is float:
        return math.isfinite(value)
    if isinstance(value, SelectedValue) or value in (UNKNOWN_VALUE, UNKNOWN_ARGUMENT):
        return True
    return as_number(value) is not None


#: A resource kind's fields as a tree: ``((part, subtree or None for a field), ...)``, so that a walk reads each object
#: on the way once for all the fields under it (a cluster's eight fields were eight walks from the top).
_Tree = tuple[tuple[str, Any], ...]


def _tree(fields: tuple[tuple[str, ...], ...]) -> _Tree:
    heads: dict[str, list[tuple[str, ...]]] = {}
    for parts in fields:
        heads.setdefault(parts[0], []).append(parts[1:])
    if any(() in rests and len(rests) > 1 for rests in heads.values()):
        raise ValueError("a numeric field is also the object of another: list the fields under it instead")
    return tuple((head, None if rests == [()] else _tree(tuple(r for r in rests if r)))
                 for head, rests in heads.items())


_TREES: Mapping[str, _Tree] = {kind: _tree(parts) for kind, parts in _PARTS.items()}


def _tree_numbers(value: Any, tree: _Tree) -> bool:
    """Whether every value at the fields of ``tree`` under ``value`` is a number: what `_values` finds at each field,
    read in one walk (a refusal is rare, and the walk runs for every object of an export)."""
    if isinstance(value, list):
        return all(_tree_numbers(element, tree) for element in value)
    if type(value) is not dict and not isinstance(value, Mapping):
        return True
    get = value.get
    for part, sub in tree:
        found = get(part)
        if found is None:
            continue
        if sub is None:
            if type(found) is not int and not _is_number(found):
                return False
        elif not _tree_numbers(found, sub):
            return False
    return True


def check_numbers(kind: str, props: Mapping[str, Any], where: str, source: str) -> None:
    """`InputError` for the first field of ``props`` (a resource of ``kind``, at ``where`` in ``source``) that holds
    what is not a number where a number belongs."""
    tree = _TREES.get(kind)
    if tree is None or _tree_numbers(props, tree):
        return
    for field in NUMERIC_FIELDS.get(kind, ()):  # the first field that is not, named with its path
        for path, value in _values(props, field.split("."), ""):
            if not _is_number(value):
                place = f"{where}.{path}" if where else path
                raise InputError.single(source, place, f"is {clip(value)}, where a number belongs: it can be neither "
                                        "priced nor judged.", f"write a number ({path.rsplit('.', 1)[-1]} = 2); "
                                        "Terraform and the Databricks API refuse anything else.")
