"""Rules that need the node catalog: the node type of each workload, from its model or its pin."""

from __future__ import annotations

from dataclasses import dataclass, field

from dbxtypes.errors import InputError, Problem
from dbxtypes.vocabulary import PROJECT, SECTIONS
from gpucatalog import Catalog, NodeType, SizingError, load_catalog, memory_need_gb, pick_node_type

from .models import StackSpec


@dataclass(frozen=True)
class Workload:
    """A workload's resolved node: the node type and the GPU memory need that chose it."""

    role: str
    node: NodeType
    need_gb: float | None


@dataclass(frozen=True)
class ResolvedStack:
    spec: StackSpec
    source: str
    workloads: dict[str, Workload] = field(default_factory=dict)


def _need(spec: StackSpec, role: str) -> float | None:
    section = getattr(spec, role)
    model = section.model
    if model is None:
        return None
    workload = "training" if role == "training" else "inference"
    return memory_need_gb(model.params_billions, model.precision, workload, model.method)


def resolve(spec: StackSpec, source: str, catalog: Catalog | None = None) -> ResolvedStack:
    """Pick each workload's node type; every problem names its field."""
    catalog = catalog or load_catalog()
    problems: list[Problem] = []
    workloads: dict[str, Workload] = {}
    for role in SECTIONS:
        section = getattr(spec, role)
        if section is None:
            continue
        family = section.gpu_family or spec.gpu_family
        if family not in catalog.families(spec.cloud):
            where = f"{role}.gpu_family" if section.gpu_family else "gpu_family"
            problem = Problem(
                f"{PROJECT}:{where}", f"GPU family {family!r} has no Databricks node type on {spec.cloud}.",
                f"use one of: {', '.join(catalog.families(spec.cloud))}.")
            if problem not in problems:  # a stack-wide family is reported once, not per workload
                problems.append(problem)
            continue
        need = _need(spec, role)
        field_path = f"{PROJECT}:{role}.node_type_id" if section.node_type_id else f"{PROJECT}:{role}.model"
        try:
            node = pick_node_type(catalog, spec.cloud, family, need or 0.0, pinned=section.node_type_id)
        except SizingError as exc:
            problems.append(Problem(field_path, str(exc)))
            continue
        workloads[role] = Workload(role, node, need)
    if problems:
        raise InputError(source, problems)
    return ResolvedStack(spec, source, workloads)
