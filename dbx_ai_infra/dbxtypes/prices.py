"""The shape of price overrides: a ``--prices`` file and a stack's ``dbx-ai-infra:pricing`` section.

Both the stack spec and the cost model read it, so it lives here, in the bottom layer.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from .vocabulary import Cloud

Tier = Literal["premium", "enterprise"]
#: What a $/DBU rate is for: job clusters, all-purpose clusters, model serving.
PriceKind = Literal["jobs_compute", "all_purpose", "model_serving"]
SpotFactor = Annotated[float, Field(strict=True, gt=0, le=1, allow_inf_nan=False)]
UsdPerDbu = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
PositiveRate = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]


class NodePriceOverride(BaseModel):
    """Prices of one node type, replacing the catalog's (or pricing a node type the catalog does not know)."""

    model_config = ConfigDict(extra="forbid")

    usd_per_hour_on_demand: NonNegative | None = Field(None, description="VM list price per node-hour, on demand.")
    dbu_per_hour: NonNegative | None = Field(None, description="Databricks DBUs per node-hour.")

    @model_validator(mode="after")
    def _something_set(self) -> NodePriceOverride:
        if self.usd_per_hour_on_demand is None and self.dbu_per_hour is None:
            raise ValueError("set usd_per_hour_on_demand and/or dbu_per_hour")
        return self


class PriceOverrides(BaseModel):
    """The shape of a ``--prices`` file and of a stack's ``dbx-ai-infra:pricing`` config. Every key is optional.

    ``usd_per_dbu`` is the rate actually paid (a negotiated price, another region): it applies whatever the tier.
    """

    model_config = ConfigDict(extra="forbid")

    tier: Tier | None = None
    spot_factor: dict[Cloud, SpotFactor] = Field(default_factory=dict)
    usd_per_dbu: dict[Cloud, dict[PriceKind, UsdPerDbu]] = Field(default_factory=dict)
    node_types: dict[str, NodePriceOverride] = Field(default_factory=dict)
    #: Serving DBUs per replica-hour of a Model Serving workload type, per cloud (``{aws: {GPU_XLARGE_8: 628}}``):
    #: prices a type with no public rate (a negotiated quote), or replaces the catalog's.
    serving_dbu_per_hour: dict[Cloud, dict[str, PositiveRate]] = Field(default_factory=dict)
    #: USD per GPU-hour of a serverless GPU accelerator, per cloud (``{aws: {GPU_1xA10: 2.5}}``): prices an
    #: accelerator with no public rate (dbx_ai_infra/pricing/serverless.yaml names them), or replaces the data's.
    serverless_gpu_usd_per_gpu_hour: dict[Cloud, dict[str, PositiveRate]] = Field(default_factory=dict)
    #: DBUs per GPU-hour of a serverless GPU accelerator, per cloud (``{aws: {GPU_8xH100: 8.0}}``, a figure from the
    #: account's bill or quote): priced at the MODEL_TRAINING $/DBU of the cloud, tier and region
    #: (dbx_ai_infra/pricing/serverless.yaml). ``serverless_gpu_usd_per_gpu_hour`` wins where both name an accelerator.
    serverless_gpu_dbu_per_gpu_hour: dict[Cloud, dict[str, PositiveRate]] = Field(default_factory=dict)
    #: DBUs per model unit-hour of a provisioned-throughput foundation model, per cloud, by the model's entity name
    #: (``{aws: {system.ai.llama_v3_3_70b_instruct: 40}}``): prices a model with no public rate, or replaces it.
    provisioned_throughput_dbu_per_model_unit_hour: dict[Cloud, dict[str, PositiveRate]] = Field(
        default_factory=dict)

    _origin: str | None = PrivateAttr(default=None)

    @property
    def origin(self) -> str | None:
        """Where these overrides came from (a file path), when known."""
        return self._origin

    def with_origin(self, origin: str | None) -> PriceOverrides:
        self._origin = origin
        return self
