"""Databricks cluster-policy definitions: generation and an offline evaluator (see
``dbx_ai_infra.guardrails.evaluator``)."""

from dbx_ai_infra.guardrails.evaluator import (
    DefinitionError,
    ElementViolation,
    PolicyResult,
    evaluate,
    evaluate_shape,
    parse_definition,
)

__all__ = [
    "DefinitionError",
    "ElementViolation",
    "PolicyResult",
    "evaluate",
    "evaluate_shape",
    "parse_definition",
]
