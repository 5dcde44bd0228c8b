"""The cloud of each Terraform resource, and ``data "databricks_node_type"`` resolved to the node type Databricks
would pick, for ``cost --terraform`` / ``--terraform-plan``.

A resource's cloud is what it says of itself: its cloud attribute block (``aws_attributes``, ``azure_attributes``,
``gcp_attributes``, however deep: a job's clusters), else the naming of the node types it names (`Catalog.cloud_of`).
A module may mix clouds (two provider aliases, one per workspace): each resource keeps its own.

A node type a ``databricks_node_type`` data source chooses is read at apply, from the workspace's node type list.
The provider's data source (``clusters/data_node_type.go``, terraform-provider-databricks v1.128.0) calls
databricks-sdk-go's ``ListNodeTypesResponse.Smallest`` (``service/compute``): the node types sorted by deprecation,
cores, memory, local disks, GPUs and id, and the first one that meets every argument (``min_gpus`` at least that many
GPUs, and none when it is 0; ``min_cores``; ``min_memory_gb``; ``gb_per_core``; ``category``; Graviton only when
``arm``/``graviton``). The same walk over our node catalog gives the node type Databricks would pick where the catalog
lists every candidate: the GPU node types (the catalog is the list of GPU node types Databricks offers). A CPU pick
(``min_gpus`` 0) is made over the CPU node catalog (dbx_ai_infra/gpucatalog/cpu_node_types.json: the common families,
not every type a workspace lists), said as the catalog's choice; ``local_disk`` is read from the node type's name by the
cloud's naming rules (`local_disk`), and left unresolved where the name does not tell (GCP). A pick that filters on what
the catalogs do not hold (Graviton, fleet, Photon, IO cache, port forwarding, a CPU category, a local disk size) is not
made. For a GPU pick local disks are said, not filtered. Every choice and every refusal is a note.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import ATTRIBUTES_BLOCK, UNKNOWN_ARGUMENT, SelectedValue
from dbx_ai_infra.gpucatalog import Catalog, NodeType

#: The data source whose choice is resolved here.
NODE_TYPE_DATA = "databricks_node_type"
#: Arguments the catalog cannot judge, whose use leaves the choice unmade (the node type is then unknown).
UNJUDGED = ("arm", "graviton", "fleet", "photon_worker_capable", "photon_driver_capable", "is_io_cache_enabled",
            "support_port_forwarding")
#: Arguments the catalog does not hold but that a GPU pick keeps (GPU node types have local disks or not; the
#: choice is said with them left out).
NOT_FILTERED = ("local_disk", "local_disk_min_size")
_NODE_KEYS = ("node_type_id", "driver_node_type_id")


def resource_clouds(props: Any, catalog: Catalog) -> set[str]:
    """The clouds a resource names, however deep: its cloud attribute blocks, and its node types' naming."""
    found: set[str] = set()
    if isinstance(props, Mapping):
        for key, value in props.items():
            if key in _NODE_KEYS and isinstance(value, str) and not isinstance(value, SelectedValue):
                cloud = catalog.cloud_of(value)
                if cloud:
                    found.add(cloud)
            elif key in ATTRIBUTES_BLOCK.values() and value is not None:
                found.add(next(c for c, k in ATTRIBUTES_BLOCK.items() if k == key))
            else:
                found |= resource_clouds(value, catalog)
    elif isinstance(props, list):
        for value in props:
            found |= resource_clouds(value, catalog)
    return found


@dataclass(frozen=True)
class Pick:
    """A data source's node type as Databricks would pick it (``node_type_id``), or None, and what was done, said."""

    node_type_id: str | None
    note: str


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def pick_node_type(selected: SelectedValue, cloud: str | None, catalog: Catalog) -> Pick:
    """The node type ``selected`` (a ``databricks_node_type`` data source's ``id``) is on ``cloud``."""
    args = dict(selected.arguments)
    shown = ", ".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}" for k, v in sorted(args.items())
                      if k != "provider_config") or "no arguments"
    head = f"{selected.source} ({shown})"
    if cloud is None:
        return Pick(None, f"{head}: not resolved, the resource names no cloud (no cloud attribute block, no other "
                          "node type of a known cloud).")
    if any(v == UNKNOWN_ARGUMENT for v in args.values()):
        return Pick(None, f"{head}: not resolved, its arguments are not all known here.")
    unjudged = [k for k in UNJUDGED if args.get(k) is True]
    category = str(args.get("category") or "").strip().lower()
    gpus = _number(args.get("min_gpus"))
    if category == "gpu accelerated":
        gpus = max(gpus, 1)
    elif category:
        unjudged.append(f"category {args['category']!r}")
    if unjudged:
        return Pick(None, f"{head}: not resolved, the catalog does not hold {', '.join(unjudged)}.")
    if gpus < 1:
        return _cpu_pick(head, args, cloud, catalog)
    fits = [n for n in catalog if n.cloud == cloud and not n.retired and n.gpu_count >= gpus and _meets(n, args)]
    fits.sort(key=lambda n: (n.deprecated is not None, n.vcpus, n.memory_gb, n.gpu_count, n.node_type_id))
    if not fits:
        return Pick(None, f"{head}: not resolved, no {cloud} GPU node type of the catalog meets it (Databricks "
                          "would fall back to its cloud default).")
    skipped = [k for k in NOT_FILTERED if args.get(k)]
    why = f" ({', '.join(skipped)} not in the catalog: not filtered)" if skipped else ""
    return Pick(fits[0].node_type_id, f"{head}: {fits[0].node_type_id}, the smallest {cloud} node type of the "
                                      f"catalog that meets it, as Databricks picks it{why}.")


def _meets(node: NodeType, args: Mapping[str, Any]) -> bool:
    """The node type meets the data source's size arguments (``Smallest``: memory in whole GB, as the API's
    ``memory_mb / 1024``)."""
    return (node.vcpus >= _number(args.get("min_cores")) and int(node.memory_gb) >= _number(args.get("min_memory_gb"))
            and int(node.memory_gb) // max(node.vcpus, 1) >= _number(args.get("gb_per_core")))


_AWS_TYPE = re.compile(r"^([a-z]+)(\d+)([a-z-]*)\.")
_AZURE_TYPE = re.compile(r"^Standard_([A-Z]+)(\d+)([a-z]*)(?:_v(\d+))?$")


def local_disk(cloud: str, node_type_id: str) -> bool | None:
    """Whether a CPU node type has a local disk, read from its name by the cloud's naming rules; None when the name
    does not tell. AWS ("Amazon EC2 instance type naming conventions"): the attribute ``d`` is instance store
    volumes, and the storage-optimized series ``i`` and ``d`` always have them (``m5d``, ``m6id``, ``i3``, ``i4i``).
    Azure ("Azure virtual machine sizes naming conventions"; "Azure VM sizes with no local temporary disk"): from v4
    on, the feature ``d`` (diskful) is a local temporary disk; the v2 and v3 series (``DS3_v2``, ``D4s_v3``,
    ``F4s_v2``, ``L8s_v3``) have one. GCP: not told by the name (None)."""
    if cloud == "aws":
        found = _AWS_TYPE.match(node_type_id)
        return None if not found else found.group(1).startswith(("i", "d")) or "d" in found.group(3)
    if cloud == "azure":
        found = _AZURE_TYPE.match(node_type_id)
        if not found:
            return None
        version = int(found.group(4) or 1)
        return version < 4 or "d" in found.group(3)
    return None


def _cpu_pick(head: str, args: Mapping[str, Any], cloud: str, catalog: Catalog) -> Pick:
    """A CPU pick (``min_gpus`` 0: ``Smallest`` then skips every GPU node type) over the catalog's CPU node types
    (dbx_ai_infra/gpucatalog/cpu_node_types.json), sorted as ``Smallest`` sorts (cores, memory, local disks, id). The
    catalog holds the common families, not every node type a workspace lists, so the pick is said to be the catalog's: a
    smaller type outside it may be the workspace's choice."""
    disk = bool(args.get("local_disk"))
    if args.get("local_disk_min_size"):
        return Pick(None, f"{head}: not resolved, the catalog does not hold local disk sizes.")
    nodes = [n for n in catalog.cpu_nodes if n.cloud == cloud and _meets(n, args)]
    disks = {n.node_type_id: local_disk(cloud, n.node_type_id) for n in nodes}
    if disk and any(d is None for d in disks.values()):
        return Pick(None, f"{head}: not resolved, the local disks of {cloud} CPU node types are not known here.")
    fits = sorted((n for n in nodes if disks[n.node_type_id] or not disk),
                  key=lambda n: (n.vcpus, int(n.memory_gb * 1024), bool(disks[n.node_type_id]), n.node_type_id))
    if not fits:
        return Pick(None, f"{head}: not resolved, no {cloud} CPU node type of the catalog meets it.")
    count = sum(n.cloud == cloud for n in catalog.cpu_nodes)
    why = " with a local disk (read from its name)" if disk else ""
    return Pick(fits[0].node_type_id, f"{head}: {fits[0].node_type_id}, the smallest {cloud} CPU node type{why} of "
                                      f"the catalog's {count} (dbx_ai_infra/gpucatalog/cpu_node_types.json, the common "
                                      f"families) "
                                      "that meets it, as Databricks sorts them; the workspace lists more types, so its "
                                      "choice may be a smaller one outside the catalog.")


def resolve_node_types(props: Any, cloud: str | None, catalog: Catalog, notes: list[str]) -> Any:
    """``props`` with each node type a ``databricks_node_type`` data source chooses replaced by the one Databricks
    would pick on ``cloud`` (`pick_node_type`; left as it is where none is picked); each choice added to ``notes``
    once."""
    if isinstance(props, Mapping):
        out: dict[str, Any] = {}
        for key, value in props.items():
            if key in _NODE_KEYS and isinstance(value, SelectedValue) and value.data_type == NODE_TYPE_DATA:
                pick = pick_node_type(value, cloud, catalog)
                if pick.note not in notes:
                    notes.append(pick.note)
                out[key] = pick.node_type_id or value
            else:
                out[key] = resolve_node_types(value, cloud, catalog, notes)
        return out
    if isinstance(props, list):
        return [resolve_node_types(v, cloud, catalog, notes) for v in props]
    return props
