"""Two stacks that can share a metastore never create the same catalog, schema or storage root.

A Unity Catalog metastore serves every workspace of one region (Databricks docs, "Create a Unity Catalog metastore":
one metastore per region, assigned to the region's workspaces), so catalog names, a catalog's schemas and the managed
storage locations are shared by every stack deployed into that region. The second stack that creates catalog ``ai``
fails its first ``pulumi up`` with "Catalog 'ai' already exists"; one that creates a schema of an existing catalog
another stack also creates fails with "Schema ... already exists"; two catalogs on one storage root (or one under the
other) put two stacks' managed tables in one place: a standard catalog's managed location must be contained in an
external location, and Unity Catalog prevents overlapping governance of locations (Databricks docs, "Specify a
managed storage location in Unity Catalog", read 2026-12). Two stacks can share a metastore when they are on the
same cloud and their regions are equal or one is unset (an unset region could be any). A many-stacks rule (``scope``
``"stacks"``): not a stack rule, which judges one stack, since it needs several at once; the run of several stacks
(``--all``, or ``--stack`` repeated, `dbx_ai_infra.engine.multi`) calls `collisions` with what each stack creates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dbx_ai_infra.policies.rule import Rule

NAME = "databricks-stack-unique-in-metastore"


@dataclass(frozen=True)
class StackClaims:
    """What one stack creates in its region's metastore."""

    stack: str
    source: str  #: the stack file, as reports show it
    cloud: str
    region: str | None
    #: catalog names the stack creates (not an existing one it adopts)
    catalogs: frozenset[str] = field(default_factory=frozenset)
    #: ``catalog.schema`` of each schema the stack creates
    schemas: frozenset[str] = field(default_factory=frozenset)
    #: storage roots (cloud URIs) the stack's catalogs and external locations take
    roots: frozenset[str] = field(default_factory=frozenset)


def can_share(a: StackClaims, b: StackClaims) -> bool:
    """Same cloud, and the same region or one of them unset."""
    return a.cloud == b.cloud and (a.region is None or b.region is None or a.region == b.region)


def _root(uri: str) -> str:
    return uri.rstrip("/") + "/"


def _overlap(a: str, b: str) -> bool:
    """One storage URI is the other or lies under it."""
    return _root(a).startswith(_root(b)) or _root(b).startswith(_root(a))


def _where(s: StackClaims) -> str:
    return f"{s.cloud}, region {s.region or 'unset'}"


def collisions(stacks: Sequence[StackClaims]) -> dict[str, list[str]]:
    """Messages by stack name: for each pair of stacks that can share a metastore, what both would create (each
    message names both stack files and is given to both stacks)."""
    out: dict[str, list[str]] = {s.stack: [] for s in stacks}
    for i, a in enumerate(stacks):
        for b in stacks[i + 1:]:
            if not can_share(a, b):
                continue
            both = [f"catalog {c}" for c in sorted(a.catalogs & b.catalogs)]
            both += [f"schema {s}" for s in sorted(a.schemas & b.schemas)
                     if s.split(".", 1)[0] not in a.catalogs & b.catalogs]
            both += [f"storage root {ra}" + ("" if ra == rb else f" (and {rb}, which overlaps it)")
                     for ra in sorted(a.roots) for rb in sorted(b.roots) if _overlap(ra, rb)]
            for what in both:
                message = (f"stacks {a.stack} ({a.source}; {_where(a)}) and {b.stack} ({b.source}; {_where(b)}) can "
                           f"share one Unity Catalog metastore and both create {what}: the second stack's first "
                           f"`pulumi up` fails (already exists, or an overlapping location). Fix: give one stack "
                           f"its own (unity_catalog.catalog, default ai_<stack>; unity_catalog.storage_root), adopt "
                           f"the other's (existing_catalog: true, existing: true on the schema), or set each stack's "
                           f"dbx-ai-infra:region where they are deployed to different regions.")
                out[a.stack].append(message)
                out[b.stack].append(message)
    return out


RULE = Rule(
    name=NAME,
    order=1020,
    description=("Two stacks that can share a metastore (same cloud, same or unset region) never create the same "
                 "catalog, schema or storage root (judged by a run of several stacks, --all)."),
    details=("Nor one storage root under the other: the second stack's first `pulumi up` would fail. Judged by "
             "`preview` and `check` of several stacks (`--all`, `--stack` repeated), each finding naming both stack "
             "files (see [several stacks, one metastore](../deploying.md#deploying-with-pulumi))."),
    enforcement="mandatory",
    scope="stacks",
    remediation="Give each stack its own catalog and storage root (unity_catalog.catalog, storage_root), or adopt the "
                "other stack's (existing_catalog, existing schemas).",
    severity="high",
    stack_fields=("unity_catalog.catalog", "unity_catalog.storage_root", "unity_catalog", "region"),
    sources=("pulumi",),
)
