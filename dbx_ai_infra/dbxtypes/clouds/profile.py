"""The record of a cloud: everything the rest of the project reads about one cloud, in one module per cloud
(`dbx_ai_infra.dbxtypes.clouds`). The per-cloud tables of `dbx_ai_infra.dbxtypes.vocabulary` are built from these
records; the node catalog, the spec's tag checks, the components' attribute blocks and the policies read them. A new
cloud is a profile module, a line in the registry, its word in `dbx_ai_infra.dbxtypes.vocabulary.Cloud`, and its data
rows (node types, serving workload types, DBU rates and spot factors)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


def _no_rule(key: str, value: str) -> str | None:
    return None


@dataclass(frozen=True)
class CloudProfile:
    #: The stack's ``cloud`` word.
    name: str
    #: How reports name it.
    display: str
    #: The cluster's attribute block for this cloud (Clusters API JSON, snake_case).
    attributes_block: str
    #: The block's ``availability`` words (databricks-sdk ``compute.AwsAvailability``, ``AzureAvailability``,
    #: ``GcpAvailability``).
    on_demand: str
    spot_with_fallback: str
    spot: str
    #: What a cluster runs on when the block (or its availability) is absent.
    default_availability: str
    #: The field an instance pool's block names its availability by.
    pool_availability_field: str
    #: What the components add to a block that asks for spot: the price cap.
    spot_bid: Mapping[str, Any]
    #: Tag limits where Databricks applies cluster tags: longest key, longest value.
    tag_key_max: int
    tag_value_max: int
    #: A node type id of this cloud (by its naming scheme, for ids not in the node catalog; the clouds' schemes do
    #: not overlap).
    node_id: re.Pattern[str]
    #: A node type id of this cloud that names a CPU machine (None: cannot tell from the name).
    cpu_node: Callable[[str], bool | None]
    #: The region whose list prices the data files hold when a stack names none (`dbx_ai_infra/pricing/rates.yaml`, the
    #: node catalog's VM prices), what a region name of this cloud looks like, and one for an error's fix.
    reference_region: str = ""
    region_name: re.Pattern[str] = re.compile(r"^$")
    region_example: str = ""
    #: The URI schemes of the cloud storage a Unity Catalog managed location names (a catalog's ``storage_root``).
    storage_schemes: tuple[str, ...] = ()
    #: Anything else the cloud refuses in a tag (key, value) -> why, or None.
    tag_rule: Callable[[str, str], str | None] = field(default=_no_rule)
    #: Key and value prefixes the cloud keeps for itself (compared without case).
    tag_reserved_prefixes: tuple[str, ...] = ()

    def owns_node_id(self, node_type_id: str) -> bool:
        return bool(self.node_id.match(node_type_id))

    def owns_region(self, region: str) -> bool:
        return bool(self.region_name.match(region))

    def region_problem(self, region: object) -> str | None:
        """Why ``region`` is not a region name of this cloud (another cloud's, or no region's form), said of the value
        ("is not an AWS region name ..."); None: it is."""
        if isinstance(region, str) and self.owns_region(region):
            return None
        article = "an" if self.display[0] in "AEIOU" else "a"
        return f"is not {article} {self.display} region name (like {self.region_example} or {self.reference_region})"

    def tag_problem(self, key: str, value: str) -> str | None:
        """Why a tag cannot be applied on this cloud (an empty key, control characters, a reserved prefix, lengths,
        then the cloud's characters); None when it can."""
        if not key.strip():
            return "a tag key is empty; name the tag"
        control = next((c for c in key + value if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F), None)
        if control is not None:
            return (f"tag {key!r} holds the control character \\x{ord(control):02x}; no cloud applies it to a "
                    f"resource, remove it")
        reserved = next((p for p in self.tag_reserved_prefixes for text in (key, value)
                         if text.lower().startswith(p)), None)
        if reserved is not None:
            return f"tag {key!r} starts with {reserved!r}, which {self.name.upper()} keeps for itself; rename it"
        if len(key) > self.tag_key_max or len(value) > self.tag_value_max:
            return (f"{key[:40]!r} is longer than {self.name.upper()} allows (keys up to {self.tag_key_max}, values "
                    f"up to {self.tag_value_max} characters); shorten it")
        return self.tag_rule(key, value)
