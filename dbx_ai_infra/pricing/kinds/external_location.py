"""``databricks:index/externalLocation:ExternalLocation``: a cloud storage path and the storage credential that
reaches it, which a catalog's managed location must lie under (Databricks docs, "Specify a managed storage
location in Unity Catalog"); no cost of its own; its id is its name (Terraform provider docs,
databricks_external_location, Import)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import EXTERNAL_LOCATION

from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    return f"{inputs.get('name', '')}: {inputs.get('url', '')} (credential {inputs.get('credentialName', '')})"


KIND = ResourceKind(EXTERNAL_LOCATION, "ExternalLocation", facts)
