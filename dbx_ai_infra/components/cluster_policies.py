"""ClusterPolicies: workspace cluster policies per workload kind, and who may use them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER_POLICIES_TYPE

from ._common import identity, permissions


@dataclass(frozen=True, kw_only=True)
class ClusterPoliciesArgs:
    #: Workload (training | inference | dev) -> cluster-policy definition (JSON-able dict). An Output when it reads
    #: another resource's output (a pool-backed workload's definition pins its pool's id): the policy then waits
    #: for that resource.
    definitions: Mapping[str, pulumi.Input[Mapping[str, Any]]]
    #: Workload -> groups granted CAN_USE on its policy.
    can_use: Mapping[str, Sequence[str]] = field(default_factory=dict)
    #: Workload -> the identities (users, or service principals by application id) its clusters and job run as,
    #: granted CAN_USE too: a job's run_as identity needs CAN_USE on the policy its job cluster is created under
    #: (Databricks docs, "Manage compute policies": CAN_USE lets a principal create compute with the policy).
    identities: Mapping[str, Sequence[str]] = field(default_factory=dict)
    max_clusters_per_user: int | None = None


def _as_json(definition: Mapping[str, Any]) -> str:
    return json.dumps(definition, sort_keys=True)


class ClusterPolicies(pulumi.ComponentResource):
    """One ``databricks.ClusterPolicy`` per workload, with ``CAN_USE`` permissions for named groups."""

    policy_ids: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: ClusterPoliciesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(CLUSTER_POLICIES_TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        unknown = set(args.can_use) - set(args.definitions)
        if unknown:
            raise ValueError(f"can_use names workloads without a policy: {', '.join(sorted(unknown))}")
        self.policy_ids = {}
        for workload, definition in args.definitions.items():
            policy = databricks.ClusterPolicy(
                f"{name}-{workload}", name=f"{name}-{workload}",
                description=f"dbx-ai-infra guardrails for {workload} clusters (generated from the stack)",
                definition=pulumi.Output.from_input(definition).apply(_as_json),
                max_clusters_per_user=args.max_clusters_per_user, opts=child)
            self.policy_ids[workload] = policy.id
            permissions(f"{name}-{workload}", {"cluster_policy_id": policy.id},
                        [*(({"group_name": g}, "CAN_USE") for g in args.can_use.get(workload, ())),
                         *((identity(i), "CAN_USE") for i in args.identities.get(workload, ()))], child)
        self.register_outputs({"policy_ids": self.policy_ids})
