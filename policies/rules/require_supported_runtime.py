"""A cluster runs a Databricks Runtime that is still supported, and an LTS one (`gpucatalog/runtimes.yaml`).

Databricks supports an LTS runtime for three years and any other for six months; past that, a workload gets no fixes
and the runtime may leave the API (support lifecycles, in the runtime table's sources). Advisory by default: a
production stack makes it mandatory for itself in its own policy section (``dbx-ai-infra:policy``), as prod does.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import date
from typing import Any

from dbxtypes.shape import ClusterShape
from dbxtypes.vocabulary import CLUSTER, JOB
from gpucatalog.runtimes import release_of, releases
from policies.rule import Rule, View


def _supported_lts(today: date) -> str:
    current = sorted((r for r in releases().values() if r.lts and r.end_of_support > today),
                     key=lambda r: r.released)
    return ", ".join(f"{r.version} LTS (to {r.end_of_support})" for r in current[-2:]) or "a current LTS release"


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    if not isinstance(view, ClusterShape) or not view.spark_version:
        return []
    as_of = str(config.get("as_of") or "")
    return list(_verdict(view.spark_version, date.fromisoformat(as_of) if as_of else date.today()))


@functools.lru_cache(maxsize=512)
def _verdict(spark_version: str, today: date) -> tuple[str, ...]:
    """The messages for one runtime on one day (the same for every cluster on it: an export holds thousands)."""
    release = release_of(spark_version)
    if release is None:
        return ()  # a runtime the table does not list: no verdict
    fix = f"Fix: move to {_supported_lts(today)}."
    if release.end_of_support <= today:
        return (f"runtime {spark_version} ({release.version}{' LTS' if release.lts else ''}) has been out of "
                f"support since {release.end_of_support}: no fixes, and it may leave the API. {fix}",)
    if not release.lts:
        return (f"runtime {spark_version} ({release.version}) is not an LTS release: its support ends "
                f"{release.end_of_support}, six months after its release. {fix}",)
    return ()


RULE = Rule(
    name="databricks-cluster-require-supported-runtime",
    description="Clusters should run an LTS Databricks Runtime that is still supported (the dated runtime table).",
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    remediation="Move to a supported LTS runtime.",
    severity="medium",
    thresholds={"as_of": ""},
    threshold_schema={"as_of": {"type": "string", "description": "Judge as of this date (YYYY-MM-DD); empty: today."}},
    stack_fields=("runtime",),
)
