"""UnityCatalogStorage: a catalog, its schemas and Volumes, and grants; exposes the Volume paths."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.vocabulary import UNITY_CATALOG_TYPE


@dataclass(frozen=True, kw_only=True)
class VolumeArgs:
    name: str
    volume_type: str = "MANAGED"
    storage_location: str | None = None
    comment: str | None = None


@dataclass(frozen=True, kw_only=True)
class GrantArgs:
    principal: str
    privileges: Sequence[str]
    #: "catalog", a schema name, or "<schema>.<volume>".
    securable: str = "catalog"


@dataclass(frozen=True, kw_only=True)
class StorageCredentialArgs:
    """The cloud identity of the storage credential the stack creates for its catalog's managed location: exactly one
    (pulumi-databricks 1.118 StorageCredential: ``aws_iam_role.role_arn``, ``azure_managed_identity.
    access_connector_id``, ``databricks_gcp_service_account``)."""

    aws_iam_role_arn: str | None = None
    azure_access_connector_id: str | None = None
    gcp_databricks_service_account: bool = False

    def __post_init__(self) -> None:
        if sum(bool(v) for v in (self.aws_iam_role_arn, self.azure_access_connector_id,
                                 self.gcp_databricks_service_account)) != 1:
            raise ValueError("a storage credential names exactly one cloud identity")

    def identity(self) -> dict[str, Any]:
        """The provider's identity block."""
        if self.aws_iam_role_arn:
            return {"aws_iam_role": databricks.StorageCredentialAwsIamRoleArgs(role_arn=self.aws_iam_role_arn)}
        if self.azure_access_connector_id:
            return {"azure_managed_identity": databricks.StorageCredentialAzureManagedIdentityArgs(
                access_connector_id=self.azure_access_connector_id)}
        return {"databricks_gcp_service_account": databricks.StorageCredentialDatabricksGcpServiceAccountArgs()}


@dataclass(frozen=True, kw_only=True)
class UnityCatalogStorageArgs:
    catalog: str
    schemas: Mapping[str, Sequence[VolumeArgs]]
    tags: Mapping[str, str]
    grants: Sequence[GrantArgs] = field(default_factory=tuple)
    #: The catalog's managed location (``storage_root``); None: the metastore's root, which a workspace enabled for
    #: Unity Catalog automatically does not have (then the catalog create fails: "Metastore storage root URL does
    #: not exist"; Databricks docs, "Create catalogs", managed location).
    storage_root: str | None = None
    #: The catalog exists already: no Catalog resource; its grants are added per principal (`databricks.Grant`,
    #: authoritative only for that principal on the securable), never one `databricks.Grants`, which replaces every
    #: grant on the securable (pulumi-databricks 1.118.0 docs of Grant and Grants).
    existing_catalog: bool = False
    #: Schemas of ``schemas`` that exist already in the existing catalog: no Schema resource; their Volumes are made
    #: under them and their grants added per principal (`databricks.Grant`), as for an existing catalog.
    existing_schemas: Sequence[str] = ()
    #: Create a storage credential of this identity and an external location over ``storage_root`` (named
    #: ``<catalog>_credential`` and ``<catalog>_root``) before the catalog; None: they are prerequisites.
    storage_credential: StorageCredentialArgs | None = None
    #: Schemas and Volumes (``<schema>.<volume>``) the stack owns entirely: their grants are one authoritative
    #: ``databricks.Grants`` each (hand-made grants there are removed by the next ``pulumi up``); every other
    #: securable's are per principal (`databricks.Grant`).
    owned_securables: Sequence[str] = ()

    def __post_init__(self) -> None:
        if self.storage_credential is not None and self.storage_root is None:
            raise ValueError("storage_credential needs storage_root: the external location covers it")
        if self.existing_schemas and not self.existing_catalog:
            raise ValueError("existing_schemas needs existing_catalog: a catalog the stack creates has no schema yet")
        unknown = set(self.existing_schemas) - set(self.schemas)
        if unknown:
            raise ValueError(f"existing_schemas names schemas not in schemas: {', '.join(sorted(unknown))}")


def principal_slug(principal: str) -> str:
    """A principal as part of a resource name: a short digest of its name (6 hex digits). Principals are e-mail
    addresses, group names and application ids (36 characters): spelt out, they made names too long for a report's
    table; the resource's inputs name the principal."""
    return hashlib.sha256(principal.encode()).hexdigest()[:6]


def volume_path(catalog: str, schema: str, volume: str) -> str:
    return f"/Volumes/{catalog}/{schema}/{volume}"


class UnityCatalogStorage(pulumi.ComponentResource):
    """Catalog, schemas and Volumes for raw data, processed data, model caches, checkpoints, vector indexes."""

    #: "<schema>.<volume>" -> "/Volumes/<catalog>/<schema>/<volume>" (known before deployment).
    volume_paths: dict[str, str]

    def __init__(self, name: str, args: UnityCatalogStorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(UNITY_CATALOG_TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        catalog_name: pulumi.Input[str] = args.catalog
        location: list[pulumi.Resource] = []
        if args.storage_credential is not None and args.storage_root is not None:
            # a managed location must lie under an external location the deployer may use (Databricks docs,
            # "Specify a managed storage location in Unity Catalog": CREATE MANAGED STORAGE on it; its owner, the
            # deployer that creates it, holds every privilege on it)
            credential = databricks.StorageCredential(
                f"{name}-credential", name=f"{args.catalog}_credential", **args.storage_credential.identity(),
                comment=f"The managed location of catalog {args.catalog}", opts=child)
            location.append(databricks.ExternalLocation(
                f"{name}-location", name=f"{args.catalog}_root", url=args.storage_root,
                credential_name=credential.name, comment=f"The managed location of catalog {args.catalog}",
                opts=child))
        if not args.existing_catalog:
            catalog = databricks.Catalog(f"{name}-catalog", name=args.catalog, properties=dict(args.tags),
                                         comment="AI workloads: data, model caches, checkpoints, vector indexes",
                                         storage_root=args.storage_root,
                                         opts=pulumi.ResourceOptions(parent=self, depends_on=location))
            catalog_name = catalog.name
        schemas: dict[str, databricks.Schema] = {}
        volumes: dict[str, databricks.Volume] = {}
        self.volume_paths = {}
        for schema_name, schema_volumes in args.schemas.items():
            schema_ref: pulumi.Input[str] = schema_name  # an existing schema: adopted by name, never created
            if schema_name not in args.existing_schemas:
                schema = databricks.Schema(f"{name}-schema-{schema_name}", catalog_name=catalog_name,
                                           name=schema_name, properties=dict(args.tags), opts=child)
                schemas[schema_name] = schema
                schema_ref = schema.name
            for vol in schema_volumes:
                ref = f"{schema_name}.{vol.name}"
                volumes[ref] = databricks.Volume(
                    f"{name}-volume-{schema_name}-{vol.name}", catalog_name=catalog_name, schema_name=schema_ref,
                    name=vol.name, volume_type=vol.volume_type, comment=vol.comment,
                    storage_location=vol.storage_location, opts=child)
                self.volume_paths[ref] = volume_path(args.catalog, schema_name, vol.name)

        self._grants(name, args, catalog_name, schemas, volumes)
        self.register_outputs({"catalog": args.catalog, "volume_paths": self.volume_paths})

    def _grants(self, name: str, args: UnityCatalogStorageArgs, catalog_name: pulumi.Input[str],
                schemas: Mapping[str, databricks.Schema], volumes: Mapping[str, databricks.Volume]) -> None:
        """The grants, by securable. On a securable the stack owns entirely (``owned_securables``, a schema or Volume
        it creates) one ``databricks.Grants``, authoritative: the next ``pulumi up`` removes any grant made by hand
        there. Everywhere else, where people are expected to add grants (the catalog, the models schema, the data
        schemas), one ``databricks.Grant`` per principal, authoritative only for that principal on that securable,
        leaving the grants others made as they are (pulumi-databricks 1.118 docs of Grant and Grants)."""
        child = pulumi.ResourceOptions(parent=self)
        by_target: dict[str, list[GrantArgs]] = {}
        for grant in args.grants:
            by_target.setdefault(grant.securable, []).append(grant)
        for target, grants in by_target.items():
            on_catalog: pulumi.Input[str] | None = catalog_name if target == "catalog" else None
            on_volume: pulumi.Input[str] | None = volumes[target].id if target in volumes else None
            on_schema: pulumi.Input[str] | None = None if on_catalog is not None or on_volume is not None else \
                schemas[target].id if target in schemas else f"{args.catalog}.{target}"
            slug = target.replace(".", "-")
            if target in args.owned_securables and (target in schemas or target in volumes):
                databricks.Grants(f"{name}-grants-{slug}", grants=[
                    databricks.GrantsGrantArgs(principal=g.principal, privileges=list(g.privileges)) for g in grants],
                    catalog=on_catalog, schema=on_schema, volume=on_volume, opts=child)
                continue
            for g in grants:
                databricks.Grant(f"{name}-grant-{slug}-{principal_slug(g.principal)}", principal=g.principal,
                                 privileges=list(g.privileges), catalog=on_catalog, schema=on_schema,
                                 volume=on_volume, opts=child)
