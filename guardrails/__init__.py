"""Databricks cluster-policy definitions: generation and an offline evaluator (see ``guardrails.evaluator``)."""

from guardrails.evaluator import (
    DefinitionError,
    ElementViolation,
    PolicyResult,
    evaluate,
    flatten_cluster,
    parse_definition,
)

__all__ = [
    "DefinitionError",
    "ElementViolation",
    "PolicyResult",
    "evaluate",
    "flatten_cluster",
    "parse_definition",
]
