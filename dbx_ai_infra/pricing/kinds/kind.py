"""The record of a resource kind: everything one Pulumi resource type means to the cost model, the reports and the
offline engine, in one module per type (`dbx_ai_infra.pricing.kinds`).

A kind lives in the pricing layer because pricing is the lowest layer that needs all of it (its pricer uses the cost
model's node and serving prices); the rest of the record is pure functions of the resource's inputs, which the
reports (`dbx_ai_infra.reports.summary`) and the offline engine's mocks (`dbx_ai_infra.engine.engine`) read from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.dbxtypes.plan import CostEntry, Resource

from ..model import PricingContext


def name_id(name: str, inputs: Mapping[str, Any]) -> str:
    """The offline id of a resource the provider names by a generated id: a readable ``<resource name>-id``."""
    return f"{name}-id"


def full_name_id(*keys: str) -> Callable[[str, Mapping[str, Any]], str]:
    """A mock id as the provider gives a Unity Catalog securable: the dotted full name of ``keys`` (a catalog
    ``name``; a schema ``catalog.schema``; a volume ``catalog.schema.volume``: Terraform provider docs, Import
    sections of databricks_catalog, _schema, _volume), or a readable placeholder when an input is missing."""
    def mock_id(name: str, inputs: Mapping[str, Any]) -> str:
        if all(inputs.get(k) for k in keys):
            return ".".join(str(inputs[k]) for k in keys)
        return name_id(name, inputs)

    return mock_id


def echo(name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The offline state of a created resource: its inputs, as a create echoes them."""
    return dict(inputs)


@dataclass(frozen=True)
class ResourceKind:
    #: The provider's type token (`dbx_ai_infra.dbxtypes.vocabulary`).
    token: str
    #: The short name reports show (``Cluster``).
    short: str
    #: One line that says what the resource is, for a reviewer (from its Pulumi inputs, camelCase).
    facts: Callable[[Mapping[str, Any]], str]
    #: Its cost entry; None for a kind the cost model does not price, or (returned) for a resource that costs
    #: nothing of its own.
    price: Callable[[Resource, PricingContext], CostEntry | None] | None = None
    #: When it is priced: 0 first (compute that draws on pools, noting the pools' users), 1 after (pools, endpoints).
    phase: int = 0
    #: Before any pricing: record what other kinds' pricers need of this resource (an instance pool's shape).
    index: Callable[[Resource, PricingContext], None] | None = None
    #: The id the offline engine gives it (as the provider would: Unity Catalog securables are their names).
    mock_id: Callable[[str, Mapping[str, Any]], str] = name_id
    #: The state the offline engine returns for it (the inputs, plus computed outputs the program reads).
    mock_state: Callable[[str, Mapping[str, Any]], dict[str, Any]] = echo
