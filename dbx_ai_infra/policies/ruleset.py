"""The rule lists: every built-in resource rule in the order the pack lists them, the stack rules, the team's own
(``--rules DIR``, `dbx_ai_infra.policies.team.use_team_rules`), and every rule by name."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from dbx_ai_infra.policies.rule import Rule
from dbx_ai_infra.policies.rules import (
    avoid_retiring_node_types,
    configure_single_node,
    configure_single_node_shuffle_partitions,
    configure_worker_bounds,
    disallow_all_privileges_account_users,
    disallow_all_spot_inference,
    disallow_autoscaled_or_spot_training,
    disallow_node_type_with_pool,
    disallow_plaintext_secrets,
    disallow_scale_to_zero_in_production,
    disallow_spark_submit_task,
    flag_unrecognised_export_fields,
    prefer_auto_zone,
    prefer_interconnect_for_multi_node_training,
    require_access_control,
    require_api_conformance,
    require_autotermination,
    require_complete_autoscale_bounds,
    require_gpu_memory_fit,
    require_matching_cloud_attributes,
    require_matching_runtime,
    require_pinned_pip_libraries,
    require_provisioned_throughput_model_units,
    require_registered_model,
    require_runtime_key,
    require_serverless_usage_policy,
    require_service_principal_job_owner,
    require_serving_inference_table,
    require_serving_rate_limit,
    require_serving_workload_type_fit,
    require_supported_runtime,
    require_tags,
    require_token_lifetime,
    require_training_checkpoints,
    require_volumes_for_caches,
    stack_budget,
    unique_in_metastore,
)

#: Every rule, mandatory ones first; the pack lists its policies in this order.
ALL_RULES: tuple[Rule, ...] = (
    require_api_conformance.RULE,
    disallow_all_spot_inference.RULE,
    disallow_autoscaled_or_spot_training.RULE,
    configure_worker_bounds.RULE,
    require_complete_autoscale_bounds.RULE,
    require_matching_cloud_attributes.RULE,
    require_runtime_key.RULE,
    require_matching_runtime.RULE,
    disallow_node_type_with_pool.RULE,
    require_autotermination.RULE,
    configure_single_node.RULE,
    require_tags.RULE,
    require_pinned_pip_libraries.RULE,
    disallow_plaintext_secrets.RULE,
    disallow_all_privileges_account_users.RULE,
    require_token_lifetime.RULE,
    disallow_spark_submit_task.RULE,
    require_serving_workload_type_fit.RULE,
    disallow_scale_to_zero_in_production.RULE,
    require_volumes_for_caches.RULE,
    configure_single_node_shuffle_partitions.RULE,
    require_training_checkpoints.RULE,
    require_gpu_memory_fit.RULE,
    avoid_retiring_node_types.RULE,
    prefer_interconnect_for_multi_node_training.RULE,
    prefer_auto_zone.RULE,
    require_supported_runtime.RULE,
    require_serving_inference_table.RULE,
    require_serving_rate_limit.RULE,
    require_serverless_usage_policy.RULE,
    require_provisioned_throughput_model_units.RULE,
    flag_unrecognised_export_fields.RULE,
    require_access_control.RULE,
    require_service_principal_job_owner.RULE,
)
#: Rules that judge a stack as a whole, not one resource: the stack rules (``scope`` ``"stack"``, `stack_rules`),
#: judged once per stack by `dbx_ai_infra.policies.evaluate.evaluate_stack` wherever stacks are judged, and the
#: many-stacks rule (``"stacks"``); their names, levels and exceptions work as any rule's.
STACK_RULES: tuple[Rule, ...] = (stack_budget.RULE, require_registered_model.RULE, unique_in_metastore.RULE)
#: A team's own resource rules, loaded from ``--rules DIR`` for this run (`use_team_rules`): judged like the built-in
#: ones, after them.
TEAM_RULES: list[Rule] = []
_BY_NAME: dict[str, Rule] = {r.name: r for r in (*ALL_RULES, *STACK_RULES)}
assert len(_BY_NAME) == len(ALL_RULES) + len(STACK_RULES), "duplicate rule names"
#: Rules that no longer exist, with why and what judges their case now. A policy config or an exception that still
#: names one is read (its setting has no effect, a `note:` says so), never refused: removing a rule must not break
#: the gate of a team that configured it.
RETIRED: Mapping[str, str] = MappingProxyType({
    "databricks-cluster-tag-autoscaled-gpu-compute": "retired in issue 51: an autoscaled all-purpose GPU cluster "
    "without a workload_type tag is now judged as inference from its shape (databricks-cluster-disallow-all-spot-"
    "inference and the other role rules)",
})
#: Every rule by name: the resource rules (`ALL_RULES`), the stack rules, then the team's.
RULES_BY_NAME: Mapping[str, Rule] = MappingProxyType(_BY_NAME)


def resource_rules() -> tuple[Rule, ...]:
    """The rules judged per resource, in order: the built-in ones, then the team's (`TEAM_RULES`)."""
    return (*ALL_RULES, *TEAM_RULES)


def stack_rules() -> tuple[Rule, ...]:
    """The rules judged once per stack (``scope`` ``"stack"``), in order."""
    return tuple(r for r in STACK_RULES if r.scope == "stack")
