"""The resource kinds: one module per Pulumi resource type, each a `dbx_ai_infra.pricing.kinds.kind.ResourceKind`
record, registered here. The cost model (`dbx_ai_infra.pricing.plan_cost`) and the reports' facts
(`dbx_ai_infra.reports.summary`) iterate this registry; a new resource type is one module and one line below (and its
token in `dbx_ai_infra.dbxtypes.vocabulary`)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from . import (
    catalog,
    cluster,
    cluster_policy,
    external_location,
    grant,
    grants,
    instance_pool,
    job,
    permissions,
    provisioned_throughput,
    schema,
    serving_endpoint,
    storage_credential,
    volume,
    workspace_file,
)
from .kind import ResourceKind

KINDS: tuple[ResourceKind, ...] = (
    cluster.KIND,
    job.KIND,
    instance_pool.KIND,
    serving_endpoint.KIND,
    provisioned_throughput.KIND,
    catalog.KIND,
    schema.KIND,
    volume.KIND,
    storage_credential.KIND,
    external_location.KIND,
    grant.KIND,
    grants.KIND,
    permissions.KIND,
    cluster_policy.KIND,
    workspace_file.KIND,
)
BY_TOKEN: Mapping[str, ResourceKind] = MappingProxyType({k.token: k for k in KINDS})


def kind_of(token: str) -> ResourceKind | None:
    return BY_TOKEN.get(token)


def short_type(token: str) -> str:
    """The short name reports show for a type token (``Cluster``); the token's last part for an unknown type."""
    kind = BY_TOKEN.get(token)
    return kind.short if kind is not None else token.rsplit(":", 1)[-1]
