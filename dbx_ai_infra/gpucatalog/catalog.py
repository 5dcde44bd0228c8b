"""The GPU node-type catalog: which Databricks GPU node types exist per cloud, with specs, prices and DBU rates.

The figures live in ``node_types.yaml`` next to this module (each entry names its sources and dates).
:func:`load_catalog` reads and validates that file and returns a :class:`Catalog`.

Besides lookups in the data file, :meth:`Catalog.cloud_of` and :meth:`Catalog.is_gpu_node` recognise node type ids
that are not in the catalog (CPU types, for instance) by their naming pattern, so that callers can tell
"a CPU node on AWS" from "a typo".
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from dbx_ai_infra.dbxtypes.clouds import cloud_of_node_id, profile
from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml, parse_yaml, read_text
from dbx_ai_infra.dbxtypes.errors import InputError, Problem, problems_from_pydantic
from dbx_ai_infra.dbxtypes.kept import kept
from dbx_ai_infra.dbxtypes.vocabulary import CLOUDS, GPU_FAMILIES, Cloud, GpuFamily

CPU_FAMILY = "cpu"

__all__ = [
    "CLOUDS",
    "CPU_FAMILY",
    "GPU_FAMILIES",
    "Catalog",
    "NodeType",
    "DEFAULT_CATALOG_PATH",
    "load_catalog",
]



DEFAULT_CATALOG_PATH = Path(__file__).with_name("node_types.yaml")
#: The CPU node types (common families per cloud), generated from public price lists by
#: ``dbx_ai_infra/pricing/tools/gen_vm_prices.py``: read with the packaged catalog.
CPU_CATALOG_PATH = Path(__file__).with_name("cpu_node_types.json")


@dataclass(frozen=True)
class NodeType:
    """One Databricks GPU node type on one cloud. ``gpu_memory_gb`` is per GPU."""

    cloud: str
    node_type_id: str
    family: str
    gpu: str
    gpu_count: int
    gpu_memory_gb: float
    vcpus: int
    memory_gb: float
    usd_per_hour_on_demand: float | None
    dbu_per_hour: float | None
    price_region: str | None
    price_date: str | None
    dbu_date: str | None
    sources: tuple[str, ...]
    retired: bool = False
    retired_on: str | None = None
    #: Published network bandwidth of the node, Gbps ("up to" where the cloud says so); None when not found.
    network_gbps: float | None = None
    network_is_estimate: bool = False
    #: GPU interconnect between nodes (AWS EFA, Azure InfiniBand, GCP GPUDirect-TCPX), Gbps; None without one.
    interconnect_gbps: float | None = None
    #: Being retired by Databricks or the cloud, without a retirement date yet: never picked by the sizer; a pin warns.
    deprecated: str | None = None

    @property
    def total_gpu_memory_gb(self) -> float:
        """GPU memory of the whole node: ``gpu_count * gpu_memory_gb``."""
        return self.gpu_count * self.gpu_memory_gb


def _sort_key(node: NodeType) -> tuple:
    price = node.usd_per_hour_on_demand
    return (
        node.total_gpu_memory_gb,
        math.inf if price is None else price,
        node.vcpus,
        node.node_type_id,  # only to make ties deterministic
    )


class Catalog:
    """An immutable set of GPU node types with lookups by id, cloud and GPU family."""

    def __init__(self, nodes: Iterable[NodeType], sources: dict[str, str] | None = None,
                 cpu_nodes: Iterable[NodeType] = (), cpu_drivers: Iterable[str] | None = None) -> None:
        self.nodes: tuple[NodeType, ...] = tuple(nodes)
        #: CPU node types offered as drivers of GPU clusters (family ``cpu``); never in ``nodes``, never sized.
        self.cpu_nodes: tuple[NodeType, ...] = tuple(cpu_nodes)
        #: The CPU node types a stack may name as a GPU cluster's driver (None: every one of ``cpu_nodes``); the others
        #: are priced (Terraform code, exports) but not offered as a driver.
        drivers = None if cpu_drivers is None else set(cpu_drivers)
        self.cpu_drivers: tuple[NodeType, ...] = tuple(n for n in self.cpu_nodes
                                                       if drivers is None or n.node_type_id in drivers)
        self.sources: dict[str, str] = dict(sources or {})
        self._by_id: dict[str, NodeType] = {}
        for node in self.nodes:
            if node.node_type_id in self._by_id:
                raise InputError.single("node catalog", node.node_type_id, "is a duplicate node_type_id.",
                                        "keep one entry per node type.")
            self._by_id[node.node_type_id] = node
        # Answers by node type id, kept: a workspace audit asks the same few node types thousands of times, and
        # the catalog never changes once loaded.
        self._gpu_answers: dict[Any, bool | None] = {}
        self._family_nodes: dict[tuple[str, str, bool], tuple[NodeType, ...]] = {}

    def __repr__(self) -> str:
        return f"Catalog({len(self.nodes)} node types, {len(self.sources)} sources)"

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    def __contains__(self, node_type_id: object) -> bool:
        return node_type_id in self._by_id

    # --- lookups --------------------------------------------------------------------------------------------

    def get(self, node_type_id: str) -> NodeType | None:
        """The GPU node type with this exact id, or None."""
        return self._by_id.get(node_type_id)

    def cpu_driver(self, cloud: str, node_type_id: str | None = None) -> NodeType | None:
        """A CPU driver node type of ``cloud``: the one named, else the first listed; None when there is none."""
        nodes = [n for n in self.cpu_drivers if n.cloud == cloud]
        if node_type_id is not None:
            return next((n for n in nodes if n.node_type_id == node_type_id), None)
        return nodes[0] if nodes else None

    def families(self, cloud: str) -> tuple[str, ...]:
        """GPU families with at least one non-retired node type on ``cloud``, in ``GPU_FAMILIES`` order."""
        _check_cloud(cloud)
        present = {n.family for n in self.nodes if n.cloud == cloud and not n.retired}
        return tuple(f for f in GPU_FAMILIES if f in present)

    def family_nodes(self, cloud: str, family: str, include_retired: bool = False) -> list[NodeType]:
        """Node types of ``family`` on ``cloud``, smallest first.

        Sorted by total GPU memory, then on-demand price (unknown prices last), then vCPUs.
        Retired node types are left out unless ``include_retired`` is true.
        """
        key = (cloud, family, include_retired)
        found = self._family_nodes.get(key)
        if found is None:
            _check_cloud(cloud)
            if family not in GPU_FAMILIES:
                raise ValueError(f"unknown GPU family {family!r}; known families: {', '.join(GPU_FAMILIES)}")
            members = (n for n in self.nodes
                       if n.cloud == cloud and n.family == family and (include_retired or not n.retired))
            found = self._family_nodes[key] = tuple(sorted(members, key=_sort_key))
        return list(found)

    def cloud_of(self, node_type_id: str) -> str | None:
        """The cloud a node type id belongs to: from the catalog first, then from the naming pattern; else None."""
        node = self.get(node_type_id)
        if node is not None:
            return node.cloud
        return cloud_of_node_id(node_type_id)

    def is_gpu_node(self, node_type_id: str) -> bool | None:
        """True for a catalog GPU node type, False for a recognisable CPU node type, None when unknown.

        Accelerated node types that Databricks does not list (e.g. AWS p5.4xlarge) are "unknown" (None):
        the catalog is the only authority for "this is a usable GPU node type".
        """
        try:
            return self._gpu_answers[node_type_id]
        except KeyError:
            answer = self._gpu_answers[node_type_id] = self._is_gpu_node(node_type_id)
            return answer
        except TypeError:  # not hashable: no node type id
            return None

    def _is_gpu_node(self, node_type_id: str) -> bool | None:
        if self.get(node_type_id) is not None:
            return True
        cloud = cloud_of_node_id(node_type_id)
        return profile(cloud).cpu_node(node_type_id) if cloud is not None else None


def _check_cloud(cloud: str) -> None:
    if cloud not in CLOUDS:
        raise ValueError(f"unknown cloud {cloud!r}; use one of {', '.join(CLOUDS)}")


# --- loading and validation ---------------------------------------------------------------------------------------

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_PositiveInt = Annotated[int, Field(strict=True, gt=0)]
_PositiveFloat = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
_Price = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]


def _iso_date(value: Any) -> Any:
    """YAML gives an unquoted date as a ``date`` and a quoted one as text: both become the ISO text."""
    if isinstance(value, _dt.datetime):
        raise ValueError(f"must be a date like '2026-04-10', got {value!r}")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            if len(value) == 10:
                return _dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
        raise ValueError(f"must be a date like '2026-04-10', got {value!r}")
    return value


_Date = Annotated[str, BeforeValidator(_iso_date)]


class _NodeEntry(BaseModel):
    """One entry of ``node_types``: every field is required (null where a figure is unknown) but the retirement."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    cloud: Cloud
    node_type_id: _Text
    family: GpuFamily
    gpu: _Text
    gpu_count: _PositiveInt
    gpu_memory_gb: _PositiveFloat
    vcpus: _PositiveInt
    memory_gb: _PositiveFloat
    usd_per_hour_on_demand: _Price | None
    price_region: _Text | None
    price_date: _Date | None
    dbu_per_hour: _PositiveFloat | None
    dbu_date: _Date | None
    sources: list[str] = Field(min_length=1)
    retired: Annotated[bool, Field(strict=True)] = False
    retired_on: _Date | None = None
    network_gbps: _PositiveFloat | None = None
    network_is_estimate: Annotated[bool, Field(strict=True)] = False
    interconnect_gbps: _PositiveFloat | None = None
    deprecated: _Text | None = None

    @model_validator(mode="after")
    def _figures_have_dates(self) -> _NodeEntry:
        if self.usd_per_hour_on_demand is not None and (self.price_region is None or self.price_date is None):
            raise ValueError("usd_per_hour_on_demand is set but price_region or price_date is null")
        if self.dbu_per_hour is not None and self.dbu_date is None:
            raise ValueError("dbu_per_hour is set but dbu_date is null")
        if len(set(self.sources)) != len(self.sources):
            raise ValueError("sources lists a key more than once")
        if self.retired and self.retired_on is None:
            raise ValueError("retired is true but retired_on is missing")
        if not self.retired and self.retired_on is not None:
            raise ValueError("retired_on is set but retired is not true")
        return self

    def node(self) -> NodeType:
        return NodeType(**{**self.model_dump(), "sources": tuple(self.sources)})


class _CpuNodeEntry(BaseModel):
    """One entry of ``cpu_node_types``: a CPU node type offered as a GPU cluster's driver."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    cloud: Cloud
    node_type_id: _Text
    vcpus: _PositiveInt
    memory_gb: _PositiveFloat
    usd_per_hour_on_demand: _Price
    price_region: _Text
    price_date: _Date
    dbu_per_hour: _PositiveFloat
    dbu_date: _Date
    sources: list[str] = Field(min_length=1)
    #: Offered as a GPU cluster's driver (the generated catalog offers one per cloud, its default).
    driver: bool = True

    def node(self) -> NodeType:
        return NodeType(cloud=self.cloud, node_type_id=self.node_type_id, family=CPU_FAMILY, gpu="none", gpu_count=0,
                        gpu_memory_gb=0.0, vcpus=self.vcpus, memory_gb=self.memory_gb,
                        usd_per_hour_on_demand=self.usd_per_hour_on_demand, dbu_per_hour=self.dbu_per_hour,
                        price_region=self.price_region, price_date=self.price_date, dbu_date=self.dbu_date,
                        sources=tuple(self.sources))


class _CpuCatalogFile(BaseModel):
    """``cpu_node_types.json`` (generated): its source keys and the CPU node types."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    note: str = ""
    sources: dict[str, _Text] = Field(min_length=1)
    cpu_node_types: list[_CpuNodeEntry] = Field(min_length=1)


class _CatalogFile(BaseModel):
    """``node_types.yaml``: the source keys, the GPU node types and the CPU driver node types."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    sources: dict[str, _Text] = Field(min_length=1)
    node_types: list[_NodeEntry] = Field(min_length=1)
    cpu_node_types: list[_CpuNodeEntry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _sources_defined_and_ids_unique(self) -> _CatalogFile:
        seen: dict[str, int] = {}
        for index, entry in enumerate(self.node_types):
            undefined = [k for k in entry.sources if k not in self.sources]
            if undefined:
                raise ValueError(f"node_types[{index}] ({entry.node_type_id}): source key(s) {', '.join(undefined)} "
                                 f"not defined in the top-level 'sources' map")
            if entry.node_type_id in seen:
                raise ValueError(f"node_types[{index}] ({entry.node_type_id}): duplicate node_type_id, already at "
                                 f"node_types[{seen[entry.node_type_id]}]")
            seen[entry.node_type_id] = index
        return self


_FIX = "correct the entry in the node catalog (each figure needs its source and date)."


def _read_catalog(path: Path, *, packaged: bool = False) -> Catalog:
    where = str(path)
    text = read_text(path, "node catalog file", fix_missing="restore gpucatalog/node_types.yaml.")
    data = parse_packaged_yaml(text, where) if packaged else parse_yaml(text, where)
    if not isinstance(data, dict):
        raise InputError.single(where, "", "expected a mapping with 'sources' and 'node_types' at the top.", _FIX)
    try:
        parsed = _CatalogFile.model_validate(data)
    except ValidationError as exc:
        problems = problems_from_pydantic(exc, root=_CatalogFile, fix=_FIX)
        raw = data.get("node_types")
        raw_nodes: list[Any] = raw if isinstance(raw, list) else []
        for i, problem in enumerate(problems):
            match = re.match(r"node_types\[(\d+)\]", problem.field)
            if match and int(match.group(1)) < len(raw_nodes) and isinstance(raw_nodes[int(match.group(1))], dict):
                label = raw_nodes[int(match.group(1))].get("node_type_id")
                if label:
                    field = problem.field.replace(match.group(0), f"{match.group(0)} ({label})", 1)
                    problems[i] = Problem(field, problem.message, problem.fix)
        raise InputError(where, problems) from None
    return Catalog([entry.node() for entry in parsed.node_types], dict(parsed.sources),
                   cpu_nodes=[entry.node() for entry in parsed.cpu_node_types])


_CPU_KEYS: dict[str, type | tuple[type, ...]] = {
    "cloud": str, "node_type_id": str, "vcpus": int, "memory_gb": (int, float), "usd_per_hour_on_demand": (int, float),
    "price_region": str, "price_date": str, "dbu_per_hour": (int, float), "dbu_date": str, "sources": list}


def _read_cpu_catalog(path: Path) -> tuple[dict[str, str], list[NodeType], list[str]]:
    """``cpu_node_types.json`` (generated, read at every start): its sources and CPU node types, checked entry by
    entry in plain Python (pydantic's validation of its 242 entries cost more than the rest of the catalog's read;
    tests/test_vm_prices.py holds the file to the `_CpuCatalogFile` model). `InputError` names a broken entry."""
    where = str(path)
    text = read_text(path, "CPU node catalog file", fix_missing="restore "
                                                                "dbx_ai_infra/gpucatalog/cpu_node_types.json (or run "
                     "dbx_ai_infra/pricing/tools/gen_vm_prices.py).")
    fix = "run dbx_ai_infra/pricing/tools/gen_vm_prices.py again."
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError.single(where, "", f"is not valid JSON: {exc}.", fix) from None
    sources, entries = data.get("sources") if isinstance(data, dict) else None, \
        data.get("cpu_node_types") if isinstance(data, dict) else None
    if not isinstance(sources, dict) or not isinstance(entries, list) or not entries:
        raise InputError.single(where, "", "expected 'sources' and a non-empty 'cpu_node_types' list.", fix)
    nodes, drivers = [], []
    for i, entry in enumerate(entries):
        wrong = [k for k, kind in _CPU_KEYS.items() if not isinstance(entry, dict) or not isinstance(entry.get(k), kind)
                 or (kind is not str and kind is not list and not entry[k] > 0)]
        if wrong or entry["cloud"] not in CLOUDS or not set(entry["sources"]) <= set(sources):
            what = ", ".join(wrong) or "cloud or source"
            raise InputError.single(where, f"cpu_node_types[{i}]", f"has a missing or wrong {what}.", fix)
        nodes.append(NodeType(cloud=entry["cloud"], node_type_id=entry["node_type_id"], family=CPU_FAMILY, gpu="none",
                              gpu_count=0, gpu_memory_gb=0.0, vcpus=entry["vcpus"], memory_gb=float(entry["memory_gb"]),
                              usd_per_hour_on_demand=float(entry["usd_per_hour_on_demand"]),
                              dbu_per_hour=float(entry["dbu_per_hour"]), price_region=entry["price_region"],
                              price_date=entry["price_date"], dbu_date=entry["dbu_date"],
                              sources=tuple(entry["sources"])))
        if entry.get("driver", True) is True:
            drivers.append(entry["node_type_id"])
    return {str(k): str(v) for k, v in sources.items()}, nodes, drivers


def _with_cpu_catalog(gpu: Catalog) -> Catalog:
    """The packaged catalog: the GPU node types of ``node_types.yaml`` and the generated CPU node types."""
    sources, cpu, drivers = _read_cpu_catalog(CPU_CATALOG_PATH)
    ids = {n.node_type_id for n in gpu.cpu_nodes}
    nodes = [*gpu.cpu_nodes, *(n for n in cpu if n.node_type_id not in ids)]
    return Catalog(gpu.nodes, {**gpu.sources, **sources}, cpu_nodes=nodes, cpu_drivers=[*ids, *drivers])


@functools.lru_cache(maxsize=1)
def _default_catalog() -> Catalog:
    """The packaged catalog, read once per process and kept between runs (`dbx_ai_infra.dbxtypes.kept`: its models
    are built, with ``defer_build``, only when a file is read afresh)."""
    return kept("node_catalog", [str(DEFAULT_CATALOG_PATH), str(CPU_CATALOG_PATH), __file__],
                lambda: _with_cpu_catalog(_read_catalog(DEFAULT_CATALOG_PATH, packaged=True)))


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Load and validate a catalog file (default: the packaged ``node_types.yaml``, read once and cached).

    Raises `InputError`, naming the file, the entry and the field, when the file is invalid.
    """
    if path is None:
        return _default_catalog()
    if Path(path).resolve() == DEFAULT_CATALOG_PATH.resolve():  # the packaged file, read afresh: with its CPU types
        return _with_cpu_catalog(_read_catalog(Path(path)))
    return _read_catalog(Path(path))
