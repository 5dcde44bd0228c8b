"""GCP. Availability words: databricks-sdk ``compute.GcpAvailability``; on demand unless preemptible is asked for
(``gcp_attributes.use_preemptible_executors`` defaulted to false); a pool's block names it ``gcp_availability``.
Databricks applies tags as labels: keys and values up to 63 characters of lowercase letters, digits, - and _, keys
starting with a letter (Databricks docs, "Tag cluster resources", read 2026-12)."""

from __future__ import annotations

import re

from .profile import CloudProfile

# "<series>-<class>[-<size>]...", e.g. n2-highmem-8, e2-medium, a2-highgpu-1g, g2-standard-4, n2-custom-4-16384.
NODE_ID = re.compile(r"^(?P<series>[a-z]\d[a-z]?)-(?P<klass>[a-z]+)(?:-\d+[a-z]*)*(?:-lssd)?$")
_CPU_SERIES = frozenset({"n1", "n2", "n2d", "n4", "e2", "c2", "c2d", "c3", "c3d", "c4", "c4a", "c4d", "m1", "m2", "m3",
                         "t2a", "t2d", "h3", "z3"})
_LABEL = re.compile(r"^[a-z0-9_-]*$")


def cpu_node(node_type_id: str) -> bool | None:
    found = NODE_ID.match(node_type_id)
    return False if found and found.group("series") in _CPU_SERIES else None


def tag_rule(key: str, value: str) -> str | None:
    if not (_LABEL.match(key) and _LABEL.match(value) and key[:1].isalpha()):
        return (f"{key!r}: {value!r} is not a GCP label (lowercase letters, digits, - and _, a key starting with a "
                "letter); rename it")
    return None


PROFILE = CloudProfile(
    name="gcp", display="GCP", attributes_block="gcp_attributes",
    on_demand="ON_DEMAND_GCP", spot_with_fallback="PREEMPTIBLE_WITH_FALLBACK_GCP", spot="PREEMPTIBLE_GCP",
    default_availability="ON_DEMAND_GCP", pool_availability_field="gcp_availability",
    spot_bid={},
    tag_key_max=63, tag_value_max=63,
    reference_region="us-central1", region_name=re.compile(r"^[a-z]+-[a-z]+\d+$"), region_example="europe-west1",
    storage_schemes=("gs://",),
    node_id=NODE_ID, cpu_node=cpu_node, tag_rule=tag_rule,
)
