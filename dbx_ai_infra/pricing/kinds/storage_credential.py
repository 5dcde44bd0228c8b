"""``databricks:index/storageCredential:StorageCredential``: a Unity Catalog storage credential (the cloud role or
identity Databricks uses to reach a catalog's managed location); no cost of its own; its id is its name (Terraform
provider docs, databricks_storage_credential, Import)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import STORAGE_CREDENTIAL

from .kind import ResourceKind

#: The provider's identity blocks (camelCase, as Pulumi hands inputs) and the field each names the identity by.
IDENTITIES = {"awsIamRole": "roleArn", "azureManagedIdentity": "accessConnectorId",
              "databricksGcpServiceAccount": None}


def facts(inputs: Mapping[str, Any]) -> str:
    for block, key in IDENTITIES.items():
        if isinstance(inputs.get(block), Mapping):
            return f"{inputs.get('name', '')}: {block}" + (f" {inputs[block].get(key)}" if key else "")
    return str(inputs.get("name", ""))


KIND = ResourceKind(STORAGE_CREDENTIAL, "StorageCredential", facts)
