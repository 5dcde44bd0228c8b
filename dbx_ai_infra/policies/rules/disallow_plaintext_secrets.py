"""Credentials come from secret scopes, never from literals in the cluster definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.common import looks_like_secret
from dbx_ai_infra.policies.rule import Rule


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    out = []
    for field, settings in (("spark_env_vars", view.spark_env_vars), ("spark_conf", view.spark_conf)):
        for key, value in settings.items():
            reason = looks_like_secret(key, value)
            if reason:
                # Never echo the value: the message ends up in CI logs and Pulumi Cloud.
                out.append(f"{field} '{key}' holds a plain-text secret ({reason}; value not shown). "
                           f"Fix: store it in a secret scope and set {field} '{key}' to "
                           f"'{{{{secrets/<scope>/<key>}}}}'.")
    return out


RULE = Rule(
    name="databricks-cluster-disallow-plaintext-secrets",
    order=140,
    description=("Spark configuration and environment variables must reference secrets from a secret scope instead "
                 "of holding them in plain text."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=('spark_env_vars',),
    remediation="Move the credential into a Databricks secret scope and reference it as {{secrets/<scope>/<key>}}.",
    severity="critical",
)
