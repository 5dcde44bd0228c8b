"""What the serving rules read of a ``databricks.ModelServing`` (snake_case props of a `ResourceView`): its props;
the readers of those props are `dbx_ai_infra.dbxtypes.endpoint`'s, the one reading of an endpoint."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import ENDPOINT_TYPES
from dbx_ai_infra.policies.rule import ResourceView, View


def endpoint_props(view: View) -> Mapping[str, Any] | None:
    """The props of a serving endpoint's view (a GPU endpoint or a provisioned-throughput one: the same AI Gateway,
    tags and served entities); None for anything else (the serving rules then say nothing)."""
    if isinstance(view, ResourceView) and view.resource_type in ENDPOINT_TYPES:
        return view.props
    return None

