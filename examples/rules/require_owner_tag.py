"""An example team rule (`check --rules examples/rules`): every GPU cluster names the person who answers for it.

A team rule is a module defining ``RULE``, a ``dbx_ai_infra.policies.rule.Rule``: ``check(view, config)`` receives each
cluster definition as a ``ClusterShape`` (its Clusters API fields, snake_case, in ``view.props``; its tags in
``view.tags``), each instance pool as a ``PoolShape`` and other resources as a ``ResourceView``, of the kinds the rule
``takes`` (this one: cluster definitions only, a job's clusters among them), and returns messages that end with a
``Fix: ...`` hint. ``config`` is the rule's typed ``settings`` (a ``dbx_ai_infra.policies.rule.Thresholds`` model):
its defaults overlaid by the policy config, which is checked against the model's fields; the check reads
``config.tag``, a ``str``. (A rule written before typed thresholds, with ``thresholds={...}`` and
``threshold_schema={...}``, still loads, and reads ``config["name"]``.)
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.common import gpu_node
from dbx_ai_infra.policies.rule import Rule, Thresholds


def check(view: ClusterShape, config: Settings) -> list[str]:
    # a GPU node type, or a GPU runtime: a cluster on an instance pool names no node type of its own, but a GPU ML
    # runtime runs on GPU nodes only
    if not (any(gpu_node(n) for n in view.node_type_ids) or "-gpu-" in (view.spark_version or "")):
        return []
    tag = config.tag
    if view.tags.get(tag):
        return []
    return [f"GPU cluster without an {tag!r} tag: nobody answers for what it costs. Fix: add the {tag} tag "
            f"(dbx-ai-infra:tags in a stack)."]


class Settings(Thresholds):
    """The rule's one threshold: which tag names the owner."""

    tag: Annotated[str, Field(min_length=1, description="The tag that names who answers for the cluster.")] = "owner"


RULE = Rule(
    name="acme-gpu-require-owner-tag",
    description="GPU clusters must carry an owner tag naming who answers for them.",
    enforcement="advisory",
    resource_types=(CLUSTER, JOB),
    check=check,
    takes=(ClusterShape,),
    remediation="Add the owner tag.",
    severity="medium",
    settings=Settings,
)
