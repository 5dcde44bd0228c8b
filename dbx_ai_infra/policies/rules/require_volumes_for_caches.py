"""Model caches and checkpoints belong on Unity Catalog volumes, not on the legacy DBFS mount."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.rule import Rule

#: Env vars that hold model caches or checkpoints; named in the message so the reader knows what moves.
CACHE_VARS = frozenset({"HF_HOME", "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
                        "TORCH_HOME", "SENTENCE_TRANSFORMERS_HOME", "CHECKPOINT_DIR", "MLFLOW_ARTIFACT_ROOT"})


def _on_dbfs(value: Any) -> bool:
    return isinstance(value, str) and (value.startswith("/dbfs/") or value.lower().startswith("dbfs:/"))


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    out = []
    for key, value in view.spark_env_vars.items():
        if not _on_dbfs(value):
            continue
        what = "model cache or checkpoint" if key in CACHE_VARS else "path"
        out.append(f"spark_env_vars '{key}' puts a {what} on DBFS ({value}); DBFS FUSE is slow for large files and "
                   f"is not governed by Unity Catalog. Fix: point '{key}' at /Volumes/<catalog>/<schema>/<volume>/...")
    return out


RULE = Rule(
    name="databricks-cluster-require-volumes-for-caches",
    order=200,
    description=("Model caches, checkpoints and other paths in cluster environment variables should live on Unity "
                 "Catalog volumes rather than DBFS."),
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('spark_env_vars', 'model_cache_volume'),
    remediation=("Use /Volumes/<catalog>/<schema>/<volume>/... paths for HF_HOME, TRANSFORMERS_CACHE, CHECKPOINT_DIR "
                 "and similar."),
    severity="low",
)
