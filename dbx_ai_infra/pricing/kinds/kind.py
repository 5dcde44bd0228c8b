"""The record of a resource kind: what one Pulumi resource type means to the cost model and the reports, in one
module per type (`dbx_ai_infra.pricing.kinds`).

A kind lives in the pricing layer because its pricer uses the cost model's node and serving prices; its facts are
pure functions of the resource's inputs, which the reports (`dbx_ai_infra.reports.summary`) read from here. What the
offline engine's mocks answer for a type is the engine's own table (`dbx_ai_infra.engine.mocks`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.dbxtypes.plan import CostEntry, Resource

from ..model import PricingContext


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
