"""Model Serving endpoints as a workspace returns them, read for the rules and the cost model.

The shapes, from databricks-sdk 0.167 ``service/serving.py`` (the REST API's Serving Endpoints reference):

- ``serving-endpoints get`` returns a ``ServingEndpointDetailed``: ``name``, ``config`` (``EndpointCoreConfigOutput``:
  ``served_entities`` of ``ServedEntityOutput``, or the deprecated ``served_models`` of ``ServedModelOutput``,
  ``traffic_config``, ``auto_capture_config``), ``pending_config`` (the config an endpoint being created or updated is
  moving to), ``ai_gateway``, ``tags`` (``[{key, value}]``), ``budget_policy_id``, ``usage_policy_id``, ``state``.
  A ``ServedEntityOutput`` says how it runs: ``workload_type`` (``ServingModelWorkloadType``: CPU, GPU_SMALL, ...,
  MULTIGPU_MEDIUM), ``workload_size`` or ``min/max_provisioned_concurrency``, ``scale_to_zero_enabled``; on
  provisioned throughput ``provisioned_model_units``, or a legacy family's tokens-per-second band
  (``min/max_provisioned_throughput``); or it serves an ``external_model`` or a pay-per-token ``foundation_model``.
- ``serving-endpoints list`` returns ``{"endpoints": [...]}`` (``ListEndpointsResponse``) of ``ServingEndpoint``
  summaries, whose ``config`` is an ``EndpointCoreConfigSummary``: its ``served_entities`` are ``ServedEntitySpec``
  (``entity_name``, ``entity_version``, ``external_model``, ``foundation_model``, ``name``) and hold no compute at
  all. Such an entity's workload type, size and scale to zero are *unknown* here (`UNKNOWN_VALUE`): the rules that
  read them say they did not judge it, and the cost model names it unpriced; never read as CPU or as no GPU.

An endpoint whose entity is on provisioned throughput is read as a ``databricks_model_serving_provisioned_throughput``
(`PROVISIONED_THROUGHPUT_ENDPOINT`) is: the API has one endpoint type, the provider two resources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.serverless import is_provisioned_entity
from dbx_ai_infra.dbxtypes.vocabulary import MODEL_SERVING_ENDPOINT, PROVISIONED_THROUGHPUT_ENDPOINT, UNKNOWN_VALUE

#: The list response's key (``ListEndpointsResponse.endpoints``).
ENDPOINTS_KEY = "endpoints"
#: What a served entity's compute is stated by (``ServedEntityOutput``); a summary (``ServedEntitySpec``) has none.
COMPUTE_KEYS = frozenset({"workload_type", "workload_size", "scale_to_zero_enabled", "min_provisioned_concurrency",
                          "max_provisioned_concurrency", "provisioned_model_units", "min_provisioned_throughput",
                          "max_provisioned_throughput"})
#: What a summary does not say, made unknown (the rules' `Rule.reads` and the pricers read these).
UNKNOWN_IN_SUMMARY = ("workload_type", "workload_size", "scale_to_zero_enabled")
#: ``ServedModelOutput``'s own names for what ``ServedEntityOutput`` calls ``entity_name`` and ``entity_version``.
_MODEL_KEYS = {"model_name": "entity_name", "model_version": "entity_version"}


def _config(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for key in ("config", "pending_config"):  # a new endpoint's first config is pending until it is ready
        config = obj.get(key)
        if isinstance(config, Mapping) and ({"served_entities", "served_models"} & set(config)):
            return config
    return None


def is_endpoint(obj: Mapping[str, Any]) -> bool:
    """A serving endpoint (``ServingEndpointDetailed`` or a list's ``ServingEndpoint``): a name and a config of
    served entities or models."""
    return isinstance(obj.get("name"), str) and _config(obj) is not None


def _entity(entity: Any) -> Any:
    """A served entity in ``ServedEntityOutput``'s names (a ``served_models`` element renamed), with what a summary
    does not say made unknown."""
    if not isinstance(entity, Mapping):
        return entity
    out = {_MODEL_KEYS.get(k, k): v for k, v in entity.items()}
    if out.get("entity_name") and not out.get("external_model") and not (COMPUTE_KEYS & set(out)):
        for key in UNKNOWN_IN_SUMMARY:
            out[key] = UNKNOWN_VALUE
    return out


def endpoint_props(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The endpoint as the rules and the cost model read it: ``config.served_entities`` (from ``served_models`` when
    only those are given, from ``pending_config`` while no config is served yet), everything else as returned."""
    config = dict(_config(obj) or {})
    entities = config.get("served_entities") or config.get("served_models") or []
    config["served_entities"] = [_entity(e) for e in entities] if isinstance(entities, list) else entities
    config.pop("served_models", None)
    return {**{k: v for k, v in obj.items() if k != "pending_config"}, "config": config}


def endpoint_kind(props: Mapping[str, Any]) -> str:
    """`PROVISIONED_THROUGHPUT_ENDPOINT` when its first served entity is on provisioned throughput, else
    `MODEL_SERVING_ENDPOINT` (``props``: `endpoint_props`)."""
    entities = props["config"].get("served_entities")
    first = entities[0] if isinstance(entities, list) and entities else None
    return PROVISIONED_THROUGHPUT_ENDPOINT if isinstance(first, Mapping) and is_provisioned_entity(first) \
        else MODEL_SERVING_ENDPOINT


