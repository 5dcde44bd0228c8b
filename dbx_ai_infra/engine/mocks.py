"""What the offline engine's mocks answer for a created resource, per type: the id the provider would give it and
the state a create returns. The engine's concern alone (the cost model's record of a type is
`dbx_ai_infra.pricing.kinds`); the Terraform export reads the same states to turn made-up values back into
references."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import (
    CATALOG,
    EXTERNAL_LOCATION,
    MODEL_SERVING_ENDPOINT,
    PROVISIONED_THROUGHPUT_ENDPOINT,
    SCHEMA,
    STORAGE_CREDENTIAL,
    VOLUME,
)

MockId = Callable[[str, Mapping[str, Any]], str]
MockState = Callable[[str, Mapping[str, Any]], dict[str, Any]]


def name_id(name: str, inputs: Mapping[str, Any]) -> str:
    """The offline id of a resource the provider names by a generated id: a readable ``<resource name>-id``."""
    return f"{name}-id"


def full_name_id(*keys: str) -> MockId:
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


def _endpoint_state(name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """As an endpoint's create returns it: the inputs, and the endpoint id its permissions name."""
    return {**inputs, "servingEndpointId": f"{name}-endpoint-id"}


#: The types whose id is not ``<name>-id``: Unity Catalog securables are their names.
_IDS: Mapping[str, MockId] = MappingProxyType({
    CATALOG: full_name_id("name"),
    SCHEMA: full_name_id("catalogName", "name"),
    VOLUME: full_name_id("catalogName", "schemaName", "name"),
    STORAGE_CREDENTIAL: full_name_id("name"),
    EXTERNAL_LOCATION: full_name_id("name"),
})

#: The types whose create returns more than its inputs (outputs the program reads).
_STATES: Mapping[str, MockState] = MappingProxyType({
    MODEL_SERVING_ENDPOINT: _endpoint_state,
    PROVISIONED_THROUGHPUT_ENDPOINT: _endpoint_state,
})


def mock_id(token: str, name: str, inputs: Mapping[str, Any]) -> str:
    """The id the offline engine gives a resource of type ``token`` named ``name``."""
    return _IDS.get(token, name_id)(name, inputs)


def mock_state(token: str, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The state a create of that resource returns offline (an unknown type gets its inputs back)."""
    return _STATES.get(token, echo)(name, inputs)
