"""Databricks cluster-policy definitions: generation and an offline evaluator (see ``guardrails.evaluator``)."""

from guardrails.evaluator import (
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
