"""What a resolved stack decided, as WorkloadLimits per workload (the input of policy_definition)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import MAX_AUTOTERMINATION_MINUTES, REQUIRED_TAGS
from dbx_ai_infra.gpucatalog import Catalog, load_catalog
from dbx_ai_infra.stackspec import ResolvedStack
from dbx_ai_infra.stackspec.models import InferenceSpec, TrainingSpec

from .definitions import WorkloadLimits, policy_definition

#: Headroom of a policy's dbus_per_hour ceiling over the catalog's DBU/h of the largest size. The workspace checks the
#: ceiling with its own DBU table, which can sit a little above the catalog figures (the 2026-04 list in
#: dbx_ai_infra/gpucatalog/node_types.yaml); without headroom the stack's own largest cluster could be refused.
DBU_CEILING_HEADROOM = 0.10


def _ceiling(dbu_per_node: float | None, nodes: int) -> float | None:
    """The dbus_per_hour ceiling: the largest size's DBU/h plus `DBU_CEILING_HEADROOM`."""
    return dbu_per_node * nodes * (1 + DBU_CEILING_HEADROOM) if dbu_per_node else None


def max_idle_minutes(limits: Mapping[str, Any]) -> int:
    """The longest auto-termination a workspace policy allows: the mandatory ``require-autotermination`` policy's
    threshold the stack was validated against (a ``--policy-config`` moves it), else the default. An advisory or
    disabled policy leaves the spec unbounded (an infinite limit); the workspace policy keeps the default cap."""
    value = limits.get("max_autotermination_minutes", MAX_AUTOTERMINATION_MINUTES)
    return int(value) if math.isfinite(value) else MAX_AUTOTERMINATION_MINUTES


def limits_for_stack(stack: ResolvedStack, catalog: Catalog | None = None) -> dict[str, WorkloadLimits]:
    """Limits per workload of the stack, by its name."""
    catalog = catalog or load_catalog()
    spec = stack.spec
    limits: dict[str, WorkloadLimits] = {}
    named = spec.named_workloads()
    for name, workload in stack.workloads.items():
        section = named[name].spec
        node = workload.node
        family_nodes = [n.node_type_id for n in catalog.family_nodes(spec.cloud, node.family)]
        common: dict[str, Any] = dict(
            cloud=spec.cloud, node_types=family_nodes, tags=spec.tags, required_tags=REQUIRED_TAGS,
            autotermination_minutes=section.autotermination_minutes,
            max_autotermination_minutes=max_idle_minutes(stack.limits),
            pool_backed=spec.pool_of(named[name]) is not None,
            driver_node_types=[workload.driver.node_type_id] if workload.driver else [])
        dbu = node.dbu_per_hour
        if isinstance(section, TrainingSpec):
            limits[name] = WorkloadLimits(
                role="training", num_workers=section.workers, spot=section.spot,
                dbus_per_hour_max=_ceiling(dbu, section.workers + 1), **common)
        elif isinstance(section, InferenceSpec):
            limits[name] = WorkloadLimits(
                role="inference", min_workers=section.min_workers, max_workers=section.max_workers,
                dbus_per_hour_max=_ceiling(dbu, section.max_workers + 1), **common)
        else:
            limits[name] = WorkloadLimits(role="interactive", dbus_per_hour_max=_ceiling(dbu, 1), **common)
    return limits


def definitions_for_stack(stack: ResolvedStack, catalog: Catalog | None = None) -> dict[str, dict]:
    return {name: policy_definition(lim) for name, lim in limits_for_stack(stack, catalog).items()}
