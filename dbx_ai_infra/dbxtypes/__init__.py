"""The bottom layer every package reads: the vocabulary, `ClusterShape`, the typed plan and the input error.

It imports no other package of the project (``docs/ARCHITECTURE.md``, checked by import-linter in ``make lint``).
"""

from .errors import InputError, Problem, clip, problems_from_pydantic
from .plan import Cost, CostEntry, Plan, Resource, Violation, coerce_plan, plan_json_schema
from .shape import ClusterShape, PoolShape, cluster_shape, pool_shape, shapes_of_resource

__all__ = ["ClusterShape", "Cost", "CostEntry", "InputError", "Plan", "PoolShape", "Problem", "Resource", "Violation",
           "clip", "cluster_shape", "coerce_plan", "plan_json_schema", "pool_shape", "problems_from_pydantic",
           "shapes_of_resource"]
