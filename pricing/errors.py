"""Errors of the pricing package."""

from __future__ import annotations


class PricingInputError(ValueError):
    """Invalid price input from a user: a ``--prices`` file, a stack's ``dbx-ai-infra:pricing`` config, or a plan's
    usage assumptions. The message names the file (or origin), the field path and the fix."""


class PricingDataError(ValueError):
    """The packaged price data (``pricing/rates.yaml``) is missing or malformed: a bug in the repository."""
