"""What the serving rules read of a ``databricks.ModelServing`` (snake_case props of a `ResourceView`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbxtypes.shape import as_list, as_mapping
from dbxtypes.vocabulary import MODEL_SERVING_ENDPOINT
from policies.rule import ResourceView, View


def endpoint_props(view: View) -> Mapping[str, Any] | None:
    """The props of a serving endpoint's view; None for anything else (the serving rules then say nothing)."""
    if isinstance(view, ResourceView) and view.resource_type == MODEL_SERVING_ENDPOINT:
        return view.props
    return None


def endpoint_tags(props: Mapping[str, Any]) -> dict[str, str]:
    """The endpoint's tags (a list of ``{key, value}``) as a mapping."""
    return {str(t.get("key")): str(t.get("value")) for t in map(as_mapping, as_list(props.get("tags")))
            if t.get("key") is not None}


def served_entities(props: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [as_mapping(e) for e in as_list(as_mapping(props.get("config")).get("served_entities"))]


def gateway(props: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(props.get("ai_gateway"))
