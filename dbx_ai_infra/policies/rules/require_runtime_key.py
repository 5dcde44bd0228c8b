"""A cluster's ``spark_version`` is a Databricks Runtime key, as the Clusters API lists them.

``spark_version`` takes a key of ``GET /api/2.1/clusters/spark-versions`` ("Spark version key, for example
2.1.x-scala2.11. This is the value which should be provided as the spark_version when creating a new cluster",
Clusters API ``SparkVersion.key``, read 2026-12-05): ``<major>[.<minor>].x-[<variant>-]scala<version>``
(``15.4.x-gpu-ml-scala2.12``, ``14.3.x-aarch64-photon-scala2.12``). An Apache Spark version (``3.3.1``) is not one:
the create call fails at apply, and the runtime rules (matching, support) cannot judge it. A value known only after
apply (a ``databricks_spark_version`` data source read at apply) is not judged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB, UNKNOWN_VALUE
from dbx_ai_infra.policies.rule import Rule

#: A runtime key: a version with its ``.x`` wildcard, variants, and the Scala version; ``custom:`` keys are the
#: custom images Databricks support provides.
RUNTIME_KEY = re.compile(r"^(?:\d+(?:\.\d+)?\.x(?:-[a-z0-9]+)*-scala\d+\.\d+|custom:.+)$")


def check(view: ClusterShape, config: Mapping[str, Any]) -> list[str]:
    if not view.spark_version or view.spark_version == UNKNOWN_VALUE:
        return []
    if RUNTIME_KEY.match(view.spark_version):
        return []
    return [f"spark_version {view.spark_version!r} is not a Databricks Runtime key (like 15.4.x-scala2.12): the "
            "cluster cannot be created, and its runtime cannot be judged. Fix: use a key from databricks clusters "
            "spark-versions, or the id of a databricks_spark_version data source."]


RULE = Rule(
    name="databricks-cluster-require-runtime-key",
    order=70,
    description="A cluster's spark_version must be a Databricks Runtime key (like 15.4.x-scala2.12), not an Apache "
                "Spark version.",
    details=("A key is `NN.N.x-[variant-]scalaN.NN` or a `custom:` image, as the Clusters API's spark-versions list "
             "gives them; an Apache Spark version (`3.3.1`) is refused. A value known only after apply (a "
             "`databricks_spark_version` data source) is not judged."),
    enforcement="mandatory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    stack_fields=("runtime",),
    remediation="Use a runtime key from the Clusters API's spark-versions list (e.g. 15.4.x-gpu-ml-scala2.12).",
    severity="high",
    reads=("spark_version",),
)
