"""Per-cloud Databricks vocabulary (Clusters API and pulumi-databricks 1.118): availability values and
attribute-block names. One table, used by the components, the policies and the guardrails."""

from __future__ import annotations

SPOT_WITH_FALLBACK = {"aws": "SPOT_WITH_FALLBACK", "azure": "SPOT_WITH_FALLBACK_AZURE",
                      "gcp": "PREEMPTIBLE_WITH_FALLBACK_GCP"}
SPOT_WITHOUT_FALLBACK = {"aws": "SPOT", "azure": "SPOT_AZURE", "gcp": "PREEMPTIBLE_GCP"}
ON_DEMAND = {"aws": "ON_DEMAND", "azure": "ON_DEMAND_AZURE", "gcp": "ON_DEMAND_GCP"}

#: snake_case (API JSON, pulumi-databricks Python args) attribute block per cloud.
ATTRIBUTES_BLOCK = {"aws": "aws_attributes", "azure": "azure_attributes", "gcp": "gcp_attributes"}
