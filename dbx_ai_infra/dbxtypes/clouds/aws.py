"""AWS. Availability words: databricks-sdk ``compute.AwsAvailability``; the backend default ``SPOT_WITH_FALLBACK``
(Terraform provider docs, databricks_cluster ``aws_attributes.availability``: "Backend default value is
SPOT_WITH_FALLBACK"; shared/reference databricks-facts.md). Tags: keys up to 128, values up to 256 characters
(Databricks docs, "Tag cluster resources", read 2026-12)."""

from __future__ import annotations

import re

from .profile import CloudProfile

# "<family>.<size>", e.g. i3.xlarge, m5d.2xlarge, r6gd.metal, m7i-flex.large, u-6tb1.112xlarge.
NODE_ID = re.compile(r"^(?P<family>[a-z][a-z0-9-]*\d[a-z0-9-]*)\.(?:\d*xlarge|large|medium|small|micro|nano|"
                     r"metal(?:-\d+xl)?)$")
# Leading letters of a family ("m" for m5d, "inf" for inf2, "u" for u-6tb1).
_CLASS = re.compile(r"^([a-z]+)")
_CPU_CLASSES = frozenset({"a", "c", "d", "h", "hpc", "i", "im", "is", "m", "mac", "r", "t", "u", "x", "z"})
# Accelerated classes (GPU, Inferentia, Trainium, FPGA, ...: dl, f, g, inf, p, trn, vt): recognised, but only the
# node catalog says "GPU node".


def cpu_node(node_type_id: str) -> bool | None:
    found = NODE_ID.match(node_type_id)
    klass = _CLASS.match(found.group("family")) if found else None
    return False if klass and klass.group(1) in _CPU_CLASSES else None


PROFILE = CloudProfile(
    name="aws", display="AWS", attributes_block="aws_attributes",
    on_demand="ON_DEMAND", spot_with_fallback="SPOT_WITH_FALLBACK", spot="SPOT",
    default_availability="SPOT_WITH_FALLBACK", pool_availability_field="availability",
    spot_bid={"spot_bid_price_percent": 100},
    tag_key_max=128, tag_value_max=256,
    # "Do not use aws:, AWS:, or any upper or lowercase combination of such as a prefix for either keys or values as
    # it is reserved for AWS use" (AWS Tagging Best Practices / EC2 "Tag restrictions", read 2026-12-03)
    tag_reserved_prefixes=("aws:",),
    reference_region="us-east-1", region_name=re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$"), region_example="eu-west-1",
    storage_schemes=("s3://",),
    node_id=NODE_ID, cpu_node=cpu_node,
)
