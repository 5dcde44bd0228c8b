"""A provisioned-throughput endpoint provisions enough model units, for a model Databricks provisions in model
units."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from dbx_ai_infra.dbxtypes.serverless import provisioned_entity
from dbx_ai_infra.dbxtypes.vocabulary import PROVISIONED_THROUGHPUT_ENDPOINT
from dbx_ai_infra.policies.rule import ResourceView, Rule, Thresholds

#: The legacy model families Databricks provisions in tokens-per-second bands, not model units (Databricks docs,
#: Foundation Model APIs, "Model units": Meta Llama 3.3, 3.2 3B and 1B, 3.1, GTE v1.5, BGE v1.5, DeepSeek R1, Meta
#: Llama 3 and 2, DBRX, Mistral, Mixtral, MPT), matched on the entity's model name.
BAND_FAMILIES = re.compile(r"(llama[-_]?v?[23]|gte|bge|deepseek[-_]?r1|dbrx|mistral|mixtral|mpt)", re.I)


def check(view: ResourceView, config: Settings) -> list[str]:
    e = provisioned_entity(view.props)
    if e.band is not None and e.model_units is None:
        # a legacy family provisioned in a tokens-per-second band, as Databricks provisions it (read from a
        # workspace: databricks-sdk ServedEntityOutput.min/max_provisioned_throughput): no model units to judge
        return []
    least = config.min_model_units
    out = []
    if e.model_units is None or e.model_units < least:
        out.append(f"provisions {e.model_units if e.model_units is not None else 'no'} model units, below the "
                   f"{least} this policy asks for. Fix: raise provisioned_throughput.model_units to at least {least}.")
    model = e.entity.rsplit(".", 1)[-1]
    if BAND_FAMILIES.search(model):
        out.append(f"{e.entity} belongs to a model family Databricks provisions in tokens-per-second bands, not "
                   f"model units (Foundation Model APIs, 'Model units'), so provisioned_model_units may be refused "
                   f"and its price per model unit is not known. Fix: serve a model-unit model (GPT OSS, Gemma 3, "
                   f"Llama 4 Maverick), or this model on a Model Serving endpoint with min/max_provisioned_throughput.")
    return out


class Settings(Thresholds):
    """Thresholds of databricks-serving-provisioned-throughput-model-units."""

    min_model_units: Annotated[int, Field(ge=1, description=(
        "The fewest model units a provisioned-throughput endpoint may provision."))] = 1


RULE = Rule(
    name="databricks-serving-provisioned-throughput-model-units",
    order=310,
    description="Provisioned-throughput endpoints must provision at least min_model_units model units, of a model "
                "Databricks provisions in model units.",
    details=("A model of the legacy families Databricks provisions in tokens-per-second bands (Llama 3.x, GTE, BGE, "
             'DBRX, Mistral, Mixtral, MPT: Foundation Model APIs, "Model units") is named.'),
    enforcement="advisory",
    resource_types=(PROVISIONED_THROUGHPUT_ENDPOINT,),
    check=check,
    takes=(ResourceView,),
    reads=("config.served_entities.provisioned_model_units",),
    stack_fields=("provisioned_throughput",),
    remediation="Provision at least min_model_units model units of a model-unit foundation model.",
    settings=Settings,
    severity="medium",
)
