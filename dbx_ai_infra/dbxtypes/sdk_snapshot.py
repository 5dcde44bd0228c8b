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


def generate() -> dict[str, Any]:
    """The snapshot, read from the installed databricks-sdk (imports it: for `make sdk-types` and the test)."""
    def name_of(tp: type) -> str:
        return f"{tp.__module__.rsplit('.', 1)[-1]}.{tp.__name__}"

    def unwrap(tp: Any) -> Any:
        if typing.get_origin(tp) in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            return args[0] if len(args) == 1 else tp
        return tp

    out_types: dict[str, dict[str, Any]] = {}
    out_enums: dict[str, list[str]] = {}
    todo: list[Any] = []  # dataclasses and enums still to describe
    for root in ROOTS:
        module, cls = root.split(".")
        todo.append(getattr(importlib.import_module(f"databricks.sdk.service.{module}"), cls))

    def describe(tp: Any) -> dict[str, Any]:
        tp = unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            todo.append(tp)
            return {"enum": name_of(tp)}
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            todo.append(tp)
            return {"type": name_of(tp)}
        if typing.get_origin(tp) is list:
            (item,) = typing.get_args(tp) or (Any,)
            return {"list": describe(item)}
        return {}

    while todo:
        tp = todo.pop()
        name = name_of(tp)
        if name in out_types or name in out_enums:
            continue
        if issubclass(tp, enum.Enum):
            out_enums[name] = [str(e.value) for e in tp]
            continue
        hints = typing.get_type_hints(tp)
        out_types[name] = {}  # before walking its fields: a type may contain itself
        out_types[name] = {f.name: describe(hints[f.name]) for f in dataclasses.fields(tp)}
    return {"sdk_version": version("databricks-sdk"), "types": dict(sorted(out_types.items())),
            "enums": dict(sorted(out_enums.items()))}


if __name__ == "__main__":  # make sdk-types
    print(json.dumps(generate(), indent=1, sort_keys=True))
