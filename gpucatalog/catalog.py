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
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import yaml

__all__ = [
    "CLOUDS",
    "GPU_FAMILIES",
    "Catalog",
    "CatalogError",
    "NodeType",
    "DEFAULT_CATALOG_PATH",
    "load_catalog",
]

CLOUDS: tuple[str, ...] = ("aws", "azure", "gcp")
GPU_FAMILIES: tuple[str, ...] = ("t4", "a10g", "v100", "a100", "a100-80gb", "h100", "l4", "l40s")

DEFAULT_CATALOG_PATH = Path(__file__).with_name("node_types.yaml")


class CatalogError(ValueError):
    """The catalog data file is missing, unreadable or has an invalid entry."""


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


# --- naming patterns for node types that are not in the catalog ------------------------------------------------

# AWS: "<family>.<size>", e.g. i3.xlarge, m5d.2xlarge, r6gd.metal, m7i-flex.large, u-6tb1.112xlarge.
_AWS_RE = re.compile(
    r"^(?P<family>[a-z][a-z0-9-]*\d[a-z0-9-]*)\."
    r"(?:\d*xlarge|large|medium|small|micro|nano|metal(?:-\d+xl)?)$"
)
# Leading letters of an AWS family ("m" for m5d, "inf" for inf2, "u" for u-6tb1).
_AWS_CLASS_RE = re.compile(r"^([a-z]+)")
_AWS_CPU_CLASSES = frozenset(
    {"a", "c", "d", "h", "hpc", "i", "im", "is", "m", "mac", "r", "t", "u", "x", "z"}
)
# Accelerated AWS classes (GPU, Inferentia, Trainium, FPGA, ...): recognised, but only the catalog says "GPU node".
_AWS_ACCELERATED_CLASSES = frozenset({"dl", "f", "g", "inf", "p", "trn", "vt"})

# Azure: "Standard_<series><size>...", e.g. Standard_DS3_v2, Standard_E8ds_v5, Standard_NC4as_T4_v3.
_AZURE_RE = re.compile(r"^Standard_(?P<series>[A-Za-z]+)\d", re.IGNORECASE)
_AZURE_PREFIX = "standard_"
_AZURE_CPU_SERIES_INITIALS = frozenset("ABDEFHLM")  # A, B, D*, E*, F*, H* (HPC CPU), L* (storage), M* (memory)

# GCP: "<series>-<class>[-<size>]...", e.g. n2-highmem-8, e2-medium, a2-highgpu-1g, g2-standard-4, n2-custom-4-16384.
_GCP_RE = re.compile(r"^(?P<series>[a-z]\d[a-z]?)-(?P<klass>[a-z]+)(?:-\d+[a-z]*)*(?:-lssd)?$")
_GCP_CPU_SERIES = frozenset(
    {"n1", "n2", "n2d", "n4", "e2", "c2", "c2d", "c3", "c3d", "c4", "c4a", "c4d", "m1", "m2", "m3", "t2a", "t2d",
     "h3", "z3"}
)


class Catalog:
    """An immutable set of GPU node types with lookups by id, cloud and GPU family."""

    def __init__(self, nodes: Iterable[NodeType], sources: dict[str, str] | None = None) -> None:
        self.nodes: tuple[NodeType, ...] = tuple(nodes)
        self.sources: dict[str, str] = dict(sources or {})
        self._by_id: dict[str, NodeType] = {}
        for node in self.nodes:
            if node.node_type_id in self._by_id:
                raise CatalogError(f"duplicate node_type_id {node.node_type_id!r} in the catalog")
            self._by_id[node.node_type_id] = node

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
        """The node type with this exact id, or None."""
        return self._by_id.get(node_type_id)

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
        _check_cloud(cloud)
        if family not in GPU_FAMILIES:
            raise ValueError(f"unknown GPU family {family!r}; known families: {', '.join(GPU_FAMILIES)}")
        nodes = [
            n for n in self.nodes
            if n.cloud == cloud and n.family == family and (include_retired or not n.retired)
        ]
        return sorted(nodes, key=_sort_key)

    def cloud_of(self, node_type_id: str) -> str | None:
        """The cloud a node type id belongs to: from the catalog first, then from the naming pattern; else None."""
        node = self.get(node_type_id)
        if node is not None:
            return node.cloud
        return _cloud_by_pattern(node_type_id)

    def is_gpu_node(self, node_type_id: str) -> bool | None:
        """True for a catalog GPU node type, False for a recognisable CPU node type, None when unknown.

        Accelerated node types that Databricks does not list (e.g. AWS p5.4xlarge) are "unknown" (None):
        the catalog is the only authority for "this is a usable GPU node type".
        """
        if self.get(node_type_id) is not None:
            return True
        if not isinstance(node_type_id, str):
            return None
        cloud = _cloud_by_pattern(node_type_id)
        if cloud == "aws":
            family = _AWS_RE.match(node_type_id).group("family")
            klass = _AWS_CLASS_RE.match(family).group(1)
            if klass in _AWS_CPU_CLASSES:
                return False
            return None
        if cloud == "azure":
            m = _AZURE_RE.match(node_type_id)
            if m and m.group("series")[0].upper() in _AZURE_CPU_SERIES_INITIALS:
                return False
            return None
        if cloud == "gcp":
            series = _GCP_RE.match(node_type_id).group("series")
            if series in _GCP_CPU_SERIES:
                return False
            return None
        return None


def _check_cloud(cloud: str) -> None:
    if cloud not in CLOUDS:
        raise ValueError(f"unknown cloud {cloud!r}; use one of {', '.join(CLOUDS)}")


def _cloud_by_pattern(node_type_id: object) -> str | None:
    if not isinstance(node_type_id, str) or not node_type_id:
        return None
    if node_type_id.lower().startswith(_AZURE_PREFIX):
        return "azure"
    if _GCP_RE.match(node_type_id):
        return "gcp"
    if _AWS_RE.match(node_type_id):
        return "aws"
    return None


# --- loading and validation ---------------------------------------------------------------------------------------

_REQUIRED_FIELDS = (
    "cloud", "node_type_id", "family", "gpu", "gpu_count", "gpu_memory_gb", "vcpus", "memory_gb",
    "usd_per_hour_on_demand", "price_region", "price_date", "dbu_per_hour", "dbu_date", "sources",
)
_OPTIONAL_FIELDS = ("retired", "retired_on")
_KNOWN_FIELDS = frozenset(_REQUIRED_FIELDS + _OPTIONAL_FIELDS)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _iso_date(value: Any) -> str | None:
    """An ISO date string (YYYY-MM-DD) from a YAML string or date; None when not a valid date."""
    if isinstance(value, _dt.datetime):
        return None
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value).isoformat() if len(value) == 10 else None
        except ValueError:
            return None
    return None


def _parse_node(raw: Any, where: str, source_keys: set[str]) -> NodeType:
    def fail(problem: str) -> CatalogError:
        return CatalogError(f"{where}: {problem}")

    if not isinstance(raw, dict):
        raise fail(f"expected a mapping of fields, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _KNOWN_FIELDS, key=str)
    if unknown:
        raise fail(f"unknown field(s) {', '.join(map(str, unknown))}")
    missing = [f for f in _REQUIRED_FIELDS if f not in raw]
    if missing:
        raise fail(f"missing field(s) {', '.join(missing)}")

    cloud = raw["cloud"]
    if cloud not in CLOUDS:
        raise fail(f"cloud {cloud!r} is not one of {', '.join(CLOUDS)}")
    family = raw["family"]
    if family not in GPU_FAMILIES:
        raise fail(f"family {family!r} is not one of {', '.join(GPU_FAMILIES)}")
    for text_field in ("node_type_id", "gpu"):
        if not isinstance(raw[text_field], str) or not raw[text_field].strip():
            raise fail(f"{text_field} must be a non-empty string")

    for int_field in ("gpu_count", "vcpus"):
        if not _is_int(raw[int_field]) or raw[int_field] <= 0:
            raise fail(f"{int_field} must be a positive integer, got {raw[int_field]!r}")
    for num_field in ("gpu_memory_gb", "memory_gb"):
        if not _is_number(raw[num_field]) or raw[num_field] <= 0:
            raise fail(f"{num_field} must be a positive number, got {raw[num_field]!r}")

    price = raw["usd_per_hour_on_demand"]
    if price is not None and (not _is_number(price) or price < 0):
        raise fail(f"usd_per_hour_on_demand must be a non-negative number or null, got {price!r}")
    dbu = raw["dbu_per_hour"]
    if dbu is not None and (not _is_number(dbu) or dbu <= 0):
        raise fail(f"dbu_per_hour must be a positive number or null, got {dbu!r}")

    region = raw["price_region"]
    if region is not None and (not isinstance(region, str) or not region.strip()):
        raise fail("price_region must be a non-empty string or null")
    if price is not None and region is None:
        raise fail("usd_per_hour_on_demand is set but price_region is null")

    dates: dict[str, str | None] = {}
    for date_field in ("price_date", "dbu_date"):
        value = raw[date_field]
        if value is None:
            dates[date_field] = None
            continue
        iso = _iso_date(value)
        if iso is None:
            raise fail(f"{date_field} must be a date like '2026-04-10', got {value!r}")
        dates[date_field] = iso
    if price is not None and dates["price_date"] is None:
        raise fail("usd_per_hour_on_demand is set but price_date is null")
    if dbu is not None and dates["dbu_date"] is None:
        raise fail("dbu_per_hour is set but dbu_date is null")

    sources = raw["sources"]
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) for s in sources):
        raise fail("sources must be a non-empty list of source keys")
    undefined = [s for s in sources if s not in source_keys]
    if undefined:
        raise fail(f"source key(s) {', '.join(undefined)} not defined in the top-level 'sources' map")
    if len(set(sources)) != len(sources):
        raise fail("sources lists a key more than once")

    retired = raw.get("retired", False)
    if not isinstance(retired, bool):
        raise fail(f"retired must be true or false, got {retired!r}")
    retired_on_raw = raw.get("retired_on")
    retired_on = None
    if retired_on_raw is not None:
        retired_on = _iso_date(retired_on_raw)
        if retired_on is None:
            raise fail(f"retired_on must be a date like '2025-09-30', got {retired_on_raw!r}")
    if retired and retired_on is None:
        raise fail("retired is true but retired_on is missing")
    if not retired and retired_on is not None:
        raise fail("retired_on is set but retired is not true")

    return NodeType(
        cloud=cloud,
        node_type_id=raw["node_type_id"],
        family=family,
        gpu=raw["gpu"],
        gpu_count=raw["gpu_count"],
        gpu_memory_gb=float(raw["gpu_memory_gb"]),
        vcpus=raw["vcpus"],
        memory_gb=float(raw["memory_gb"]),
        usd_per_hour_on_demand=None if price is None else float(price),
        dbu_per_hour=None if dbu is None else float(dbu),
        price_region=region,
        price_date=dates["price_date"],
        dbu_date=dates["dbu_date"],
        sources=tuple(sources),
        retired=retired,
        retired_on=retired_on,
    )


def _read_catalog(path: Path) -> Catalog:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read the catalog file ({exc.strerror or exc})") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path}: not valid YAML ({exc})") from exc

    if not isinstance(data, dict):
        raise CatalogError(f"{path}: expected a mapping with 'sources' and 'node_types' at the top")
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        raise CatalogError(f"{path}: 'sources' must be a non-empty map of source key -> description")
    for key, description in sources.items():
        if not isinstance(key, str) or not isinstance(description, str) or not description.strip():
            raise CatalogError(f"{path}: source {key!r} must map a string key to a one-line description")
    raw_nodes = data.get("node_types")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise CatalogError(f"{path}: 'node_types' must be a non-empty list")

    nodes: list[NodeType] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_nodes):
        label = raw.get("node_type_id") if isinstance(raw, dict) else None
        where = f"{path}: node_types[{index}]" + (f" ({label})" if label else "")
        node = _parse_node(raw, where, set(sources))
        if node.node_type_id in seen:
            raise CatalogError(f"{where}: duplicate node_type_id, already at node_types[{seen[node.node_type_id]}]")
        seen[node.node_type_id] = index
        nodes.append(node)
    return Catalog(nodes, sources)


@functools.lru_cache(maxsize=1)
def _default_catalog() -> Catalog:
    return _read_catalog(DEFAULT_CATALOG_PATH)


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Load and validate a catalog file (default: the packaged ``node_types.yaml``, read once and cached).

    Raises :class:`CatalogError`, naming the file and the entry, when the file is invalid.
    """
    if path is None:
        return _default_catalog()
    return _read_catalog(Path(path))
