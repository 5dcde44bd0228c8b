"""One reading of a Model Serving endpoint's definition (``databricks.ModelServing``): its served entities, AI Gateway
settings and tags, from Pulumi's camelCase inputs or the API's (a Terraform plan's) snake_case. The serving rules
(`dbx_ai_infra.policies.rules`, each taking an endpoint's `ResourceView`), the cost model
(`dbx_ai_infra.pricing.kinds.serving_endpoint`) and advise (`dbx_ai_infra.advise.targets`) read an endpoint through
it, as they read a cluster through `dbx_ai_infra.dbxtypes.shape`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .shape import as_list, as_mapping, as_number, normalize_props


def endpoint_tags(props: Mapping[str, Any]) -> dict[str, str]:
    """The endpoint's tags (a list of ``{key, value}``) as a mapping (snake_case props)."""
    return {str(t.get("key")): str(t.get("value")) for t in map(as_mapping, as_list(props.get("tags")))
            if t.get("key") is not None}


def served_entities(props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``config.served_entities`` (snake_case props)."""
    return [as_mapping(e) for e in as_list(as_mapping(props.get("config")).get("served_entities"))]


#: The provisioned concurrency range of each standard ``workload_size`` (databricks-sdk 0.167
#: ``serving.ServedEntityOutput.workload_size``: "Small" (4 - 4 provisioned concurrency), "Medium" (8 - 16) and "Large"
#: (16 - 64); "If scale-to-zero is enabled, the lower bound of the provisioned concurrency for each workload size is
#: 0"). Other sizes a workspace may offer ("custom workload sizes") have no public range.
WORKLOAD_SIZES: Mapping[str, tuple[int, int]] = {"Small": (4, 4), "Medium": (8, 16), "Large": (16, 64)}


def gateway(props: Mapping[str, Any]) -> Mapping[str, Any]:
    """``ai_gateway`` (snake_case props)."""
    return as_mapping(props.get("ai_gateway"))


@dataclass(frozen=True)
class EndpointShape:
    """An endpoint as the project reads it: its first served entity (the component serves one) and its gateway."""

    name: str | None
    entity: Mapping[str, Any]  #: the first served entity, as written (``{}`` without one)
    min_concurrency: int  #: ``min_provisioned_concurrency`` (0 when unset)
    max_concurrency: int | None  #: ``max_provisioned_concurrency`` (None when unset or 0)
    scale_to_zero: bool  #: ``scale_to_zero_enabled`` is true
    #: ``workload_size`` when the entity sizes by it (``min/max_provisioned_concurrency`` unset), else None; a size
    #: outside `WORKLOAD_SIZES` leaves the concurrency unknown (`size_unknown`)
    workload_size: str | None
    tags: dict[str, str]
    gateway: Mapping[str, Any]

    @property
    def workload_type(self) -> str:
        return str(self.entity.get("workload_type") or "")

    @property
    def size_unknown(self) -> bool:
        """Its concurrency cannot be read: a ``workload_size`` with no public range (a custom size), or one not known
        (a list response holds no sizes)."""
        return self.workload_size is not None and self.workload_size not in WORKLOAD_SIZES

    @property
    def inference_table(self) -> Mapping[str, Any]:
        """``ai_gateway.inference_table_config`` (``{}`` without one)."""
        return as_mapping(self.gateway.get("inference_table_config"))

    @property
    def payload_table(self) -> str | None:
        """The AI Gateway inference table the endpoint logs to, ``<catalog>.<schema>.<table_name_prefix>_payload``;
        None when it logs to none (or the definition does not say where)."""
        table = self.inference_table
        parts = [table.get(k) for k in ("catalog_name", "schema_name", "table_name_prefix")]
        return f"{parts[0]}.{parts[1]}.{parts[2]}_payload" if table.get("enabled") and all(parts) else None

    @property
    def rate_limits(self) -> list[Mapping[str, Any]]:
        return [as_mapping(r) for r in as_list(self.gateway.get("rate_limits"))]


def endpoint_shape(props: Mapping[str, Any] | None) -> EndpointShape:
    """The shape of an endpoint's properties, in either casing."""
    p = normalize_props(props)
    entities = served_entities(p)
    entity = entities[0] if entities else {}
    low = as_number(entity.get("min_provisioned_concurrency"))
    high = as_number(entity.get("max_provisioned_concurrency"))
    scale_to_zero = entity.get("scale_to_zero_enabled") is True
    size = entity.get("workload_size")
    sized = isinstance(size, str) and bool(size) and low is None and high is None
    if sized and str(size) in WORKLOAD_SIZES:  # what the API returns for an endpoint sized by name
        low, high = WORKLOAD_SIZES[str(size)]
        low = 0 if scale_to_zero else low
    return EndpointShape(name=str(p["name"]) if p.get("name") else None, entity=entity,
                         min_concurrency=int(low or 0), max_concurrency=int(high) if high else None,
                         scale_to_zero=scale_to_zero, workload_size=str(size) if sized else None,
                         tags=endpoint_tags(p), gateway=gateway(p))
