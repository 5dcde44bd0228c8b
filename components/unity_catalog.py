"""UnityCatalogStorage: a catalog, its schemas and Volumes, and grants; exposes the Volume paths."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_databricks as databricks

from dbxtypes.vocabulary import UNITY_CATALOG_TYPE


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
        if not args.existing_catalog:
            catalog = databricks.Catalog(f"{name}-catalog", name=args.catalog, properties=dict(args.tags),
                                         comment="AI workloads: data, model caches, checkpoints, vector indexes",
                                         storage_root=args.storage_root, opts=child)
            catalog_name = catalog.name
        schemas: dict[str, databricks.Schema] = {}
        volumes: dict[str, databricks.Volume] = {}
        self.volume_paths = {}
        for schema_name, schema_volumes in args.schemas.items():
            schema = databricks.Schema(f"{name}-schema-{schema_name}", catalog_name=catalog_name, name=schema_name,
                                       properties=dict(args.tags), opts=child)
            schemas[schema_name] = schema
            for vol in schema_volumes:
                ref = f"{schema_name}.{vol.name}"
                volumes[ref] = databricks.Volume(
                    f"{name}-volume-{schema_name}-{vol.name}", catalog_name=catalog_name, schema_name=schema.name,
                    name=vol.name, volume_type=vol.volume_type, comment=vol.comment,
                    storage_location=vol.storage_location, opts=child)
                self.volume_paths[ref] = volume_path(args.catalog, schema_name, vol.name)

        # A Grants resource is authoritative for its securable: one per securable, all principals in it.
        by_target: dict[str, list[GrantArgs]] = {}
        for grant in args.grants:
            by_target.setdefault(grant.securable, []).append(grant)
        for target, grants in by_target.items():
            if target == "catalog" and args.existing_catalog:
                # a catalog the stack does not own: add each principal's grants, leave the others' as they are
                for g in grants:
                    slug = "".join(c if c.isalnum() else "-" for c in g.principal.lower())
                    databricks.Grant(f"{name}-grant-catalog-{slug}", principal=g.principal,
                                     privileges=list(g.privileges), catalog=catalog_name, opts=child)
                continue
            entries = [databricks.GrantsGrantArgs(principal=g.principal, privileges=list(g.privileges)) for g in grants]
            databricks.Grants(
                f"{name}-grants-{target.replace('.', '-')}", grants=entries,
                catalog=catalog_name if target == "catalog" else None,
                schema=schemas[target].id if target in schemas else None,
                volume=volumes[target].id if target in volumes else None, opts=child)

        self.register_outputs({"catalog": args.catalog, "volume_paths": self.volume_paths})
