"""What a document given to the audit holds that no Databricks API type knows: advisory, never mandatory.

A document read by ``check --cluster-json`` or ``--workspace`` may be a response the workspace wrote (which carries
read-only fields) or a request someone would send; the API-conformance rule judges its shapes, and this rule names
the fields and enum values outside the union of what databricks-sdk's request and response types and the API
reference define (`dbx_ai_infra.policies.rules.require_api_conformance.RESPONSE_EXTRA`): a newer field, or a typo. What
the project generates (the Pulumi inputs) stays strict: there an unknown field is the conformance rule's, mandatory.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, INSTANCE_POOL, JOB
from dbx_ai_infra.policies.rule import Rule, View
from dbx_ai_infra.policies.rules.require_api_conformance import judged


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    return [f"{p}. Fix: if the workspace wrote it, nothing to do (a field newer than the checker's databricks-sdk); "
            "if you would send it, check its spelling against the API reference." for p in judged(view)[1]]


RULE = Rule(
    name="databricks-export-unrecognised-field",
    order=320,
    description=("A cluster, job or instance pool read from a workspace export holds a field or enum value that "
                 "neither databricks-sdk's request and response types nor the API reference define."),
    details=("A response carries read-only fields the API-conformance rule accepts on an export (`disk_spec`, "
             "`effective_spark_version`, `last_activity_time`, `driver.node_attributes`, a pool's "
             "`instance_pool_fleet_attributes`, ...), and Jobs API 2.0 fields at the job level (`new_cluster`, "
             "`existing_cluster_id`, `libraries`, `notebook_task`, `spark_python_task`, `max_retries`, ...) are read "
             "like a 2.1 task's. What the project generates stays strict."),
    enforcement="advisory",
    resource_types=(CLUSTER, JOB, INSTANCE_POOL),
    check=check,
    remediation="Nothing when the workspace wrote it; check the spelling of a field you would send.",
    severity="low",
    sources=("api",),
)
