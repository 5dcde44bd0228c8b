"""A serving endpoint should log its payloads to an inference table (AI Gateway)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.endpoint import gateway
from dbx_ai_infra.dbxtypes.shape import as_mapping
from dbx_ai_infra.dbxtypes.vocabulary import ENDPOINT_TYPES
from dbx_ai_infra.policies.rule import ResourceView, Rule


def check(view: ResourceView, config: Mapping[str, Any]) -> list[str]:
    props = view.props
    table = as_mapping(gateway(props).get("inference_table_config"))
    if table.get("enabled") is True and table.get("catalog_name") and table.get("schema_name"):
        return []
    return ["the endpoint logs no payloads, so its requests cannot be audited, evaluated or used to monitor drift. "
            "Fix: enable ai_gateway.inference_table_config with a catalog and schema (stack: inference_table: true)."]


RULE = Rule(
    name="databricks-serving-require-inference-table",
    order=280,
    description="Serving endpoints should log requests and responses to an inference table in Unity Catalog.",
    enforcement="advisory",
    resource_types=ENDPOINT_TYPES,
    check=check,
    takes=(ResourceView,),
    stack_fields=("inference_table",),
    remediation="Enable the AI Gateway inference table (catalog, schema, enabled: true).",
    severity="medium",
)
