"""The Unity Catalog access a stack grants: the stack's own grants, what its workloads need, and the missing links
that make a grant chain work.

A principal can use a Volume only with ``USE_CATALOG`` on its catalog, ``USE_SCHEMA`` on its schema and
``READ_VOLUME`` / ``WRITE_VOLUME`` on it (Databricks docs, "Unity Catalog privileges": a privilege on an object needs
USE on every parent; read 2026-12). So:

* each identity the clusters run as (the stack's ``single_user_name``, a workload's own, which runs its
  clusters in dedicated access mode and its training job, and a ``dedicated_group``, as which its group cluster runs
  its init script and its members' code: `StackSpec.identities`) gets ``USE_CATALOG``, ``USE_SCHEMA`` on every schema of
  the layout, ``WRITE_VOLUME`` and ``READ_VOLUME`` on the Volumes the workloads write (``model_cache_volume``, the
  ``HF_HOME`` cache, the training ``checkpoint_volume`` and the collector's samples) and ``READ_VOLUME`` on the other
  Volumes (the data they read, and the code Volume, which only the deployer writes);
* each of ``registrars`` gets ``USE_SCHEMA`` and ``CREATE_MODEL`` on ``models_schema`` (and so ``USE_CATALOG``): what
  registering a model version needs (Databricks docs, "Manage model lifecycle in Unity Catalog": CREATE_MODEL on the
  schema, with USE_CATALOG and USE_SCHEMA; read 2026-12);
* a principal the stack grants something on a schema or a Volume, but not ``USE_CATALOG``, gets ``USE_CATALOG``;
  one with privileges on a Volume but no ``USE_SCHEMA`` on its schema gets ``USE_SCHEMA`` there.
"""

from __future__ import annotations

from .models import GrantSpec, StackSpec, TrainingSpec


def _add(grants: dict[tuple[str, str], list[str]], principal: str, securable: str, *privileges: str) -> None:
    held = grants.setdefault((principal, securable), [])
    held.extend(p for p in privileges if p not in held)


def _holds(grants: dict[tuple[str, str], list[str]], principal: str, securable: str, privilege: str) -> bool:
    held = grants.get((principal, securable), [])
    return privilege in held or "ALL_PRIVILEGES" in held


def _written_volumes(spec: StackSpec) -> set[str]:
    """The Volumes the workloads write: the model cache, each training checkpoint Volume, the collector's samples."""
    uc = spec.unity_catalog
    written = {uc.model_cache_volume} | {w.spec.checkpoint_volume for w in spec.named_workloads().values()
                                         if isinstance(w.spec, TrainingSpec)}
    if spec.monitoring.enabled:  # the GPU collector writes its samples there
        written.add(spec.monitoring.volume)
    return written


def _identity_grants(grants: dict[tuple[str, str], list[str]], spec: StackSpec) -> None:
    """What each identity a cluster runs as (the stack's, a workload's own) needs: USE on the catalog and every schema,
    READ_VOLUME on every Volume, WRITE_VOLUME on those the workloads write."""
    uc = spec.unity_catalog
    written = _written_volumes(spec)
    for user in spec.identities():
        _add(grants, user, "catalog", "USE_CATALOG")
        for schema, schema_spec in uc.schemas.items():
            _add(grants, user, schema, "USE_SCHEMA")
            for volume in schema_spec.volumes:
                ref = f"{schema}.{volume.name}"
                _add(grants, user, ref, "READ_VOLUME", *(("WRITE_VOLUME",) if ref in written else ()))


def _link_chain(grants: dict[tuple[str, str], list[str]], principal: str, securable: str) -> None:
    """The USE privileges a grant on ``securable`` (a schema or a Volume) needs above it: USE_CATALOG, and for a
    Volume USE_SCHEMA on its schema (unless held there or on the catalog)."""
    if not _holds(grants, principal, "catalog", "USE_CATALOG"):
        _add(grants, principal, "catalog", "USE_CATALOG")
    schema = securable.split(".", 1)[0]
    if "." in securable and not (_holds(grants, principal, schema, "USE_SCHEMA")
                                 or _holds(grants, principal, "catalog", "USE_SCHEMA")):
        _add(grants, principal, schema, "USE_SCHEMA")


def effective_grants(spec: StackSpec) -> list[GrantSpec]:
    """Every grant the stack makes, one per (principal, securable), in a stable order (see the module docstring)."""
    uc = spec.unity_catalog
    grants: dict[tuple[str, str], list[str]] = {}
    for grant in uc.grants:
        _add(grants, grant.principal, grant.securable, *grant.privileges)
    for registrar in uc.registrars:  # MLflow's model registration in Unity Catalog: CREATE_MODEL on the schema
        _add(grants, registrar, uc.models_schema, "USE_SCHEMA", "CREATE_MODEL")
    _identity_grants(grants, spec)
    for principal, securable in list(grants):
        if securable != "catalog":
            _link_chain(grants, principal, securable)

    order = {"catalog": 0}
    return [GrantSpec(principal=p, privileges=privs, securable=s)
            for (p, s), privs in sorted(grants.items(), key=lambda kv: (order.get(kv[0][1], 1), kv[0][1], kv[0][0]))]
