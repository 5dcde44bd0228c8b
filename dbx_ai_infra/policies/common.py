"""Helpers the rules share: the node catalog, pip pinning and plain-text secrets.

Rules read `dbx_ai_infra.dbxtypes.shape.ClusterShape` and `PoolShape` (built once per resource by
`dbx_ai_infra.policies.registry.views_of`);
the readers of raw inputs live there, not here.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from dbx_ai_infra.dbxtypes.pip import is_pinned_pip, pip_name
from dbx_ai_infra.dbxtypes.vocabulary import UNKNOWN_VALUE, SelectedValue
from dbx_ai_infra.gpucatalog import Catalog, load_catalog

__all__ = ["catalog", "is_pinned_pip", "looks_like_secret", "node_cloud", "pip_name"]


@functools.lru_cache(maxsize=1)
def catalog() -> Catalog:
    """The GPU node-type catalog (loaded once)."""
    return load_catalog()


def node_cloud(node_type_id: str) -> str | None:
    """The cloud of a node type id (the catalog, else its naming pattern), or ``None``."""
    return catalog().cloud_of(node_type_id)


def gpu_node(node_type_id: str) -> bool | None:
    """Whether a node type is a GPU node (the catalog), for telling AI compute from the rest. A node type a
    ``databricks_node_type`` data source chooses is one when its ``min_gpus`` is at least 1 (the provider's docs,
    data-sources/node_type.md: "minimum number of GPUs attached"); else it is not known."""
    if isinstance(node_type_id, SelectedValue):
        gpus = node_type_id.arguments.get("min_gpus")
        return True if isinstance(gpus, (int, float)) and not isinstance(gpus, bool) and gpus >= 1 else None
    return catalog().is_gpu_node(node_type_id)


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


# --------------------------------------------------------------------------------------------------------------------
# Secrets
# --------------------------------------------------------------------------------------------------------------------

#: Whole words of a key (split on ``_ . -`` and camelCase) that mark it as holding a secret.
_SECRET_WORDS = frozenset({"TOKEN", "PASSWORD", "PASSWD", "SECRET", "APIKEY", "CREDENTIAL", "CREDENTIALS", "PAT",
                           "PASSPHRASE", "SAS"})
#: Adjacent word pairs that mark a secret.
_SECRET_PAIRS = frozenset({("API", "KEY"), ("ACCESS", "KEY"), ("PRIVATE", "KEY"), ("ACCOUNT", "KEY"),
                           ("SECRET", "KEY"), ("AUTH", "KEY"), ("CLIENT", "KEY"), ("SIGNING", "KEY")})
_SECRET_REFERENCE = re.compile(r"\{\{\s*secrets/[^/{}\s]+/[^/{}\s]+\s*\}\}")
_DATABRICKS_PAT = re.compile(r"\bdapi[0-9a-f]{32}(?:-\d+)?\b")
_AWS_ACCESS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")
_PRIVATE_KEY_BLOCK = re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")
_HARMLESS_VALUES = frozenset({"", "true", "false", "0", "1", "yes", "no", "none", "null"})


def _key_words(key: str) -> list[str]:
    spaced = _CAMEL_BOUNDARY.sub("_", key)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.upper()) if w]


def looks_like_secret_key(key: Any) -> bool:
    """A key naming a credential: ``HF_TOKEN``, ``DB_PASSWORD``, ``WANDB_API_KEY``, ``fs.s3a.secret.key``,
    ``fs.azure.account.key.<account>...``. Whole words only, so ``TOKENIZERS_PARALLELISM`` is not one."""
    return isinstance(key, str) and _secret_key(key)


@functools.lru_cache(maxsize=4096)  # a workspace repeats the same few hundred keys across its clusters
def _secret_key(key: str) -> bool:
    words = _key_words(key)
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(words, words[1:], strict=False))


def is_secret_reference(value: Any) -> bool:
    """True when the value takes its secret from a Databricks secret scope (``{{secrets/<scope>/<key>}}``)."""
    return isinstance(value, str) and bool(_SECRET_REFERENCE.search(value))


def looks_like_secret_value(value: Any) -> str | None:
    """The kind of credential a value looks like ("a Databricks personal access token", ...), or ``None``."""
    if not isinstance(value, str):
        return None
    if _DATABRICKS_PAT.search(value):
        return "a Databricks personal access token"
    if _AWS_ACCESS_KEY_ID.search(value):
        return "an AWS access key id"
    if _PRIVATE_KEY_BLOCK.search(value):
        return "a private key"
    return None


def looks_like_secret(key: Any, value: Any) -> str | None:
    """Why ``key=value`` holds a plain-text secret, or ``None`` when it does not.

    A secret-looking key with a literal value is one, unless the value is a ``{{secrets/scope/key}}`` reference, a
    boolean or 0/1 switch, or an absolute path (``/Volumes/.../token.json`` points to a file, it is not the secret).
    A value that looks like a Databricks PAT, an AWS access key id or a PEM private key is one whatever its key.
    The reason never contains the value. A value known only after apply (a plan's, or a template of Terraform code
    with a part this reader does not know: ``"{{secrets/${var.scope}/${data.x.name}}}"``) is not judged.
    """
    if value is None or value == UNKNOWN_VALUE or is_secret_reference(value):
        return None
    kind = looks_like_secret_value(value)
    if kind:
        return f"its value looks like {kind}"
    text = str(value).strip()
    if looks_like_secret_key(key) and text.lower() not in _HARMLESS_VALUES and not text.startswith("/"):
        return "its name marks a credential and its value is a literal"
    return None


#: What a role rule's outcome depends on (`dbx_ai_infra.policies.rule.Rule.reads`): the shape that decides the role
#: (workers, autoscale, tags, the job's tags) and the availability it judges (the cloud attribute blocks, the pool).
ROLE_READS = ("autoscale", "num_workers", "aws_attributes", "azure_attributes", "gcp_attributes", "instance_pool_id",
              "custom_tags", "job.tags")
