"""The clouds: one profile module each (`dbx_ai_infra.dbxtypes.clouds.profile.CloudProfile`), registered here in the
order
reports list them."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..errors import InputError
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


def region_problem(cloud: str, region: object) -> str | None:
    """Why ``region`` cannot be a region of ``cloud`` (naming the cloud whose name it has, if another's); None: it
    can. A region of the right form that no data file knows is accepted: it is priced at the reference region."""
    problem = profile(cloud).region_problem(region)
    if problem is None:
        return None
    other = next((p.display for p in PROFILES if isinstance(region, str) and p.owns_region(region)), None)
    return problem + (f"; it has the form of {'an' if other[0] in 'AEIOU' else 'a'} {other} region" if other else "")


def checked_region(region: str | None, cloud: str, where: str = "--region") -> str | None:
    """``region`` as given (``--region``), once it has the form of a region of ``cloud``; raises `InputError` naming
    ``where`` and the fix (exit 2)."""
    problem = region_problem(cloud, region) if region is not None else None
    if problem:
        record = profile(cloud)
        raise InputError.single(where, "", f"{region!r} {problem}.",
                                f"pass the workspace's {record.display} region, or leave {where} out to price at "
                                f"{record.reference_region}.")
    return region
