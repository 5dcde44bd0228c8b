"""Writes ``dbx_ai_infra/dbxtypes/data/sdk_types.json`` (`dbx_ai_infra.dbxtypes.sdk_types` reads it) from the installed
databricks-sdk:
``make sdk-types`` runs this module, and a test regenerates the snapshot and fails when it differs. Imports the SDK:
never imported by a run of the tool."""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import types
import typing
from importlib.metadata import version
from typing import Any

#: The API objects the project checks, by ``module.Class`` in ``databricks.sdk.service``; nested types come along.
ROOTS = ("compute.ClusterSpec", "compute.ClusterDetails", "compute.Library", "compute.InstancePoolAndStats",
         "jobs.JobSettings", "jobs.Job", "catalog.CatalogInfo", "catalog.SchemaInfo", "catalog.VolumeInfo",
         "catalog.Privilege", "compute.Policy", "serving.ServingModelWorkloadType")


def _name_of(tp: type) -> str:
    """A type's name in the snapshot: ``module.Class`` (the module under ``databricks.sdk.service``)."""
    return f"{tp.__module__.rsplit('.', 1)[-1]}.{tp.__name__}"


def _unwrap(tp: Any) -> Any:
    """``X | None`` (``Optional[X]``) as ``X``; any other annotation as it is."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def _describe(tp: Any, todo: list[Any]) -> dict[str, Any]:
    """A field's type in the snapshot (an enum, a dataclass, a list of one; ``{}`` for a plain value); an enum or a
    dataclass it names goes on ``todo``, to be described in turn."""
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        todo.append(tp)
        return {"enum": _name_of(tp)}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        todo.append(tp)
        return {"type": _name_of(tp)}
    if typing.get_origin(tp) is list:
        (item,) = typing.get_args(tp) or (Any,)
        return {"list": _describe(item, todo)}
    return {}


def generate() -> dict[str, Any]:
    """The snapshot, read from the installed databricks-sdk (imports it: for `make sdk-types` and the test)."""
    out_types: dict[str, dict[str, Any]] = {}
    out_enums: dict[str, list[str]] = {}
    todo: list[Any] = []  # dataclasses and enums still to describe
    for root in ROOTS:
        module, cls = root.split(".")
        todo.append(getattr(importlib.import_module(f"databricks.sdk.service.{module}"), cls))
    while todo:
        tp = todo.pop()
        name = _name_of(tp)
        if name in out_types or name in out_enums:
            continue
        if issubclass(tp, enum.Enum):
            out_enums[name] = [str(e.value) for e in tp]
            continue
        hints = typing.get_type_hints(tp)
        out_types[name] = {f.name: _describe(hints[f.name], todo) for f in dataclasses.fields(tp)}
    return {"sdk_version": version("databricks-sdk"), "types": dict(sorted(out_types.items())),
            "enums": dict(sorted(out_enums.items()))}


if __name__ == "__main__":  # make sdk-types
    print(json.dumps(generate(), indent=1, sort_keys=True))
