"""A cluster runs a Databricks Runtime that is still supported, and an LTS one
(`dbx_ai_infra/gpucatalog/runtimes.yaml`).

Every runtime key is judged: a release the table lists by its row; an unlisted one older than a listed release by the
lifecycle policy (every LTS release is listed, so it is a non-LTS release whose six months ended, or end, by a known
date); one newer than the table's newest is not known, and so not passed (`dbx_ai_infra.gpucatalog.runtimes.verdict`).

Databricks supports an LTS runtime for three years and any other for six months; past that, a workload gets no fixes
and the runtime may leave the API (support lifecycles, in the runtime table's sources). Advisory by default: a
production stack makes it mandatory for itself in its own policy section (``dbx-ai-infra:policy``), as prod does.
"""

from __future__ import annotations

import functools
from datetime import date
from typing import Annotated

from pydantic import Field

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB, UNKNOWN_ARGUMENT, SelectedValue
from dbx_ai_infra.gpucatalog.runtimes import current_lts, verdict
from dbx_ai_infra.policies.rule import Rule, Thresholds


def _supported_lts(today: date) -> str:
    current = current_lts(today)
    return ", ".join(f"{r.label} (to {r.end_of_support})" for r in current) or "a current LTS release"


def check(view: ClusterShape, config: Settings) -> list[str]:
    if not view.spark_version:
        return []
    if isinstance(view.spark_version, SelectedValue):  # chosen at each apply by a databricks_spark_version
        lts = view.spark_version.arguments.get("long_term_support")
        if lts is True or lts == UNKNOWN_ARGUMENT:
            return []
        return [f"runtime chosen by {view.spark_version.source} without long_term_support = true: the newest "
                "runtime the workspace offers at each apply, not an LTS release (six months of support, and a "
                f"runtime change whenever a new one ships). Fix: set long_term_support = true in "
                f"{view.spark_version.source}."]
    as_of = config.as_of
    return list(_verdict(view.spark_version, date.fromisoformat(as_of) if as_of else date.today()))


@functools.lru_cache(maxsize=512)
def _verdict(spark_version: str, today: date) -> tuple[str, ...]:
    """The messages for one runtime on one day (the same for every cluster on it: an export holds thousands)."""
    problem = verdict(spark_version, today).problem
    if problem is None:
        return ()
    return (f"{problem}. Fix: move to an LTS release still supported: {_supported_lts(today)}.",)


class Settings(Thresholds):
    """Thresholds of databricks-cluster-require-supported-runtime."""

    as_of: Annotated[str, Field(description="Judge as of this date (YYYY-MM-DD); empty: today.")] = ""


RULE = Rule(
    name="databricks-cluster-require-supported-runtime",
    order=270,
    description="Clusters should run an LTS Databricks Runtime that is still supported (the dated runtime table).",
    details=("`dbx_ai_infra/gpucatalog/runtimes.yaml` lists each ML runtime with LTS or not, release and end of "
             "support, and sources (LTS: three years of support; others: six months). A runtime past its end of "
             "support, or not LTS, is reported; an unlisted one older than a listed release is not LTS (every LTS "
             "release is listed), and one newer than the table's newest is reported as not known, never passed. "
             "Production stacks make it mandatory in their own `dbx-ai-infra:policy` section (prod does)."),
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    remediation="Move to a supported LTS runtime.",
    severity="medium",
    settings=Settings,
    stack_fields=("runtime",),
    reads=("spark_version(long_term_support)",),
)
