"""The cloud a Databricks ``provider`` block tells, as a hint for a resource that names no cloud of its own (issue 51,
item 6): a cluster whose node type comes from a ``data "databricks_node_type"`` says nothing of its cloud, but the
provider configuration it is created through often does.

What a provider block tells (terraform-provider-databricks, docs/index.md "Authentication" and "Special
configurations for Azure / GCP"): a workspace or account ``host`` on ``*.azuredatabricks.net`` (or the Azure
sovereign clouds' ``*.databricks.azure.cn``, ``*.databricks.azure.us``) is Azure, on ``*.gcp.databricks.com`` GCP, on
``*.cloud.databricks.com`` (or ``*.cloud.databricks.us``) AWS; a host that is an attribute of an ``azurerm_*``
resource or data source (``azurerm_databricks_workspace.this.workspace_url``) is Azure, of a ``google_*`` one GCP;
an ``azure_*`` argument (``azure_workspace_resource_id``, ``azure_client_id``, ...) is Azure, a ``google_*`` one
(``google_service_account``, ``google_credentials``) GCP. Anything else tells nothing.

Which configuration a resource uses is Terraform's rule ("Providers Within Modules"): its ``provider`` argument
(``databricks.<alias>``), else the default ``databricks``; a module call passes configurations by its ``providers``
map, and the default (unaliased) configuration is inherited implicitly when the map does not name it; a provider
block of the module itself is its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlparse

from dbx_ai_infra.sources.tfscope import Scope, value

#: The key of the read plan's JSON that holds each resource address's provider cloud hint (not a Terraform key).
PROVIDER_CLOUDS_KEY = "stackplan_provider_clouds"

#: A provider configuration's hint: (cloud, what tells it), or None when the block tells nothing.
Hint = tuple[str, str] | None

_HOSTS = ((".azuredatabricks.net", "azure"), (".databricks.azure.cn", "azure"), (".databricks.azure.us", "azure"),
          (".gcp.databricks.com", "gcp"), (".cloud.databricks.com", "aws"), (".cloud.databricks.us", "aws"))
_PREFIXES = (("azure_", "azure"), ("google_", "gcp"))
_REFERENCES = (("azurerm_", "azure"), ("google_", "gcp"))


def _bodies(doc_value: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(provider name, body) of each ``provider`` block of a file (HCL: a list of ``{name: body}``; JSON: a
    ``{name: body or [bodies]}``)."""
    for block in doc_value if isinstance(doc_value, list) else [doc_value]:
        if not isinstance(block, Mapping):
            continue
        for name, bodies in block.items():
            for body in bodies if isinstance(bodies, list) else [bodies]:
                if isinstance(body, dict):
                    yield str(name), {k: v for k, v in body.items() if not str(k).startswith("__")}


def _host_cloud(host: str) -> str | None:
    name = (urlparse(host).hostname if "//" in host else host.split("/", 1)[0]) or ""
    name = f".{name.lower()}"
    return next((cloud for suffix, cloud in _HOSTS if name.endswith(suffix)), None)


def provider_cloud(body: Mapping[str, Any], scope: Scope) -> Hint:
    """What one ``provider "databricks"`` block tells of its cloud (see the module's docstring)."""
    for key in body:
        for prefix, cloud in _PREFIXES:
            if str(key).startswith(prefix):
                return cloud, f"its {key} argument"
    raw = body.get("host")
    if raw is None:
        return None
    host = value(raw, scope)
    if isinstance(host, str):
        named = _host_cloud(host)
        return (named, f"its host {host}") if named else None
    if isinstance(raw, str):
        for prefix, cloud in _REFERENCES:
            if prefix in raw:
                return cloud, f"its host, an attribute of an {prefix}* resource"
    return None


def _key(text: Any) -> str | None:
    """``databricks`` or ``databricks.<alias>`` from a reference as written (``${databricks.ws}``)."""
    if not isinstance(text, str):
        return None
    bare = text.strip()
    if bare.startswith("${") and bare.endswith("}"):
        bare = bare[2:-1].strip()
    return bare if bare == "databricks" or bare.startswith("databricks.") else None


def module_configurations(blocks: Any, inherited: Mapping[str, Hint], scope: Scope) -> dict[str, Hint]:
    """The provider configurations a module instance's resources may use, by key (``databricks``,
    ``databricks.<alias>``): those it inherits, then its own ``provider "databricks"`` blocks (``blocks``: the
    ``provider`` entries of its files)."""
    out = dict(inherited)
    for name, body in _bodies(blocks):
        if name != "databricks":
            continue
        alias = value(body["alias"], scope) if "alias" in body else None
        out[f"databricks.{alias}" if isinstance(alias, str) and alias else "databricks"] = provider_cloud(body, scope)
    return out


def passed_configurations(call: Mapping[str, Any], parent: Mapping[str, Hint]) -> dict[str, Hint]:
    """The configurations a module call passes its module: the ``providers`` map's, and the default one inherited
    when the map does not name it."""
    out = {"databricks": parent["databricks"]} if "databricks" in parent else {}
    mapping = call.get("providers")
    for entry in mapping if isinstance(mapping, list) else [mapping]:
        if not isinstance(entry, Mapping):
            continue
        for inner, outer in entry.items():
            inner_key, outer_key = _key(str(inner)), _key(outer)
            if inner_key and outer_key:
                out[inner_key] = parent.get(outer_key)
    return out


def resource_hint(body: Mapping[str, Any], configurations: Mapping[str, Hint]) -> Hint:
    """The hint of the configuration a resource uses (its ``provider`` argument, else the default)."""
    return configurations.get(_key(body.get("provider")) or "databricks")
