"""The clouds: one profile module each (`dbxtypes.clouds.profile.CloudProfile`), registered here in the order
reports list them."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from . import aws, azure, gcp
from .profile import CloudProfile

PROFILES: tuple[CloudProfile, ...] = (aws.PROFILE, azure.PROFILE, gcp.PROFILE)
BY_NAME: Mapping[str, CloudProfile] = MappingProxyType({p.name: p for p in PROFILES})


def profile(cloud: str) -> CloudProfile:
    """The profile of a cloud word the spec or the plan already checked (KeyError for another)."""
    return BY_NAME[cloud]


def cloud_of_node_id(node_type_id: object) -> str | None:
    """The cloud a node type id belongs to by its naming scheme (None: no cloud's)."""
    if not isinstance(node_type_id, str) or not node_type_id:
        return None
    return next((p.name for p in PROFILES if p.owns_node_id(node_type_id)), None)
