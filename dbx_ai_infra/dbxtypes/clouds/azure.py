"""Azure. Availability words: databricks-sdk ``compute.AzureAvailability``; on demand unless spot is asked for.
Tags: names up to 512, values up to 256 characters, names without < > % & \\ ? / (Databricks docs, "Tag cluster
resources", read 2026-12). Spot: ``spot_bid_max_price`` -1 pays up to the on-demand price rather than be evicted on
price."""

from __future__ import annotations

import re

from .profile import CloudProfile

# "Standard_<series><size>...", e.g. Standard_DS3_v2, Standard_E8ds_v5, Standard_NC4as_T4_v3.
NODE_ID = re.compile(r"^standard_", re.IGNORECASE)
_SERIES = re.compile(r"^Standard_(?P<series>[A-Za-z]+)\d", re.IGNORECASE)
_CPU_SERIES_INITIALS = frozenset("ABDEFHLM")  # A, B, D*, E*, F*, H* (HPC CPU), L* (storage), M* (memory)
_FORBIDDEN = set("<>%&\\?/")


def cpu_node(node_type_id: str) -> bool | None:
    found = _SERIES.match(node_type_id)
    return False if found and found.group("series")[0].upper() in _CPU_SERIES_INITIALS else None


def tag_rule(key: str, value: str) -> str | None:
    if _FORBIDDEN & set(key):
        return f"key {key!r} has a character Azure refuses in tag names (< > % & \\ ? /); rename it"
    return None


PROFILE = CloudProfile(
    name="azure", display="Azure", attributes_block="azure_attributes",
    on_demand="ON_DEMAND_AZURE", spot_with_fallback="SPOT_WITH_FALLBACK_AZURE", spot="SPOT_AZURE",
    default_availability="ON_DEMAND_AZURE", pool_availability_field="availability",
    spot_bid={"spot_bid_max_price": -1},
    tag_key_max=512, tag_value_max=256,
    reference_region="eastus", region_name=re.compile(r"^[a-z]+\d?$"), region_example="westeurope",
    storage_schemes=("abfss://",),
    node_id=NODE_ID, cpu_node=cpu_node, tag_rule=tag_rule,
)
