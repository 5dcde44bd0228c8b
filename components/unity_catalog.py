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


def volume_path(catalog: str, schema: str, volume: str) -> str:
    return f"/Volumes/{catalog}/{schema}/{volume}"


class UnityCatalogStorage(pulumi.ComponentResource):
    """Catalog, schemas and Volumes for raw data, processed data, model caches, checkpoints, vector indexes."""

    #: "<schema>.<volume>" -> "/Volumes/<catalog>/<schema>/<volume>" (known before deployment).
    volume_paths: dict[str, str]

    def __init__(self, name: str, args: UnityCatalogStorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(UNITY_CATALOG_TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        catalog = databricks.Catalog(f"{name}-catalog", name=args.catalog, properties=dict(args.tags),
                                     comment="AI workloads: data, model caches, checkpoints, vector indexes",
                                     opts=child)
        schemas: dict[str, databricks.Schema] = {}
        volumes: dict[str, databricks.Volume] = {}
        self.volume_paths = {}
        for schema_name, schema_volumes in args.schemas.items():
            schema = databricks.Schema(f"{name}-schema-{schema_name}", catalog_name=catalog.name, name=schema_name,
                                       properties=dict(args.tags), opts=child)
            schemas[schema_name] = schema
            for vol in schema_volumes:
                ref = f"{schema_name}.{vol.name}"
                volumes[ref] = databricks.Volume(
                    f"{name}-volume-{schema_name}-{vol.name}", catalog_name=catalog.name, schema_name=schema.name,
                    name=vol.name, volume_type=vol.volume_type, comment=vol.comment,
                    storage_location=vol.storage_location, opts=child)
                self.volume_paths[ref] = volume_path(args.catalog, schema_name, vol.name)

        # A Grants resource is authoritative for its securable: one per securable, all principals in it.
        by_target: dict[str, list[GrantArgs]] = {}
        for grant in args.grants:
            by_target.setdefault(grant.securable, []).append(grant)
        for target, grants in by_target.items():
            entries = [databricks.GrantsGrantArgs(principal=g.principal, privileges=list(g.privileges)) for g in grants]
            databricks.Grants(
                f"{name}-grants-{target.replace('.', '-')}", grants=entries,
                catalog=catalog.name if target == "catalog" else None,
                schema=schemas[target].id if target in schemas else None,
                volume=volumes[target].id if target in volumes else None, opts=child)

        self.register_outputs({"catalog": args.catalog, "volume_paths": self.volume_paths})
