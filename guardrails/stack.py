"""What a resolved stack decided, as WorkloadLimits per workload (the input of policy_definition)."""

from __future__ import annotations

from dbxtypes.vocabulary import MAX_AUTOTERMINATION_MINUTES, REQUIRED_TAGS
from gpucatalog import Catalog, load_catalog
from stackspec import ResolvedStack

from .definitions import WorkloadLimits, policy_definition


def limits_for_stack(stack: ResolvedStack, catalog: Catalog | None = None) -> dict[str, WorkloadLimits]:
    """Limits per spec section (training, inference, dev) that the stack defines."""
    catalog = catalog or load_catalog()
    spec = stack.spec
    limits: dict[str, WorkloadLimits] = {}
    for section_name, workload in stack.workloads.items():
        section = getattr(spec, section_name)
        node = workload.node
        family_nodes = [n.node_type_id for n in catalog.family_nodes(spec.cloud, node.family)]
        common = dict(cloud=spec.cloud, node_types=family_nodes, tags=spec.tags, required_tags=REQUIRED_TAGS,
                      autotermination_minutes=section.autotermination_minutes,
                      max_autotermination_minutes=MAX_AUTOTERMINATION_MINUTES,
                      pool_backed=getattr(spec.instance_pools, section_name) is not None)
        dbu = node.dbu_per_hour
        if section_name == "training":
            limits[section_name] = WorkloadLimits(
                role="training", num_workers=section.num_workers, spot=section.spot,
                dbus_per_hour_max=dbu * (section.num_workers + 1) if dbu else None, **common)
        elif section_name == "inference":
            limits[section_name] = WorkloadLimits(
                role="inference", min_workers=section.min_workers, max_workers=section.max_workers,
                dbus_per_hour_max=dbu * (section.max_workers + 1) if dbu else None, **common)
        else:
            limits[section_name] = WorkloadLimits(role="interactive", dbus_per_hour_max=dbu, **common)
    return limits


def definitions_for_stack(stack: ResolvedStack, catalog: Catalog | None = None) -> dict[str, dict]:
    return {name: policy_definition(lim) for name, lim in limits_for_stack(stack, catalog).items()}
