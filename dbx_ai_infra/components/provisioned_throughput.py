"""ProvisionedThroughputEndpoint: the serving role as a Foundation Model provisioned-throughput endpoint (model units,
no GPU workload type of ours), with AI Gateway and permissions as our GPU endpoints have them.

Checked against pulumi-databricks 1.118 ``ModelServingProvisionedThroughput`` (``name``, ``config.served_entities``
of ``entity_name``, ``entity_version``, ``provisioned_model_units``; ``ai_gateway`` with ``usage_tracking_config``,
``inference_table_config`` {catalog_name, schema_name, table_name_prefix, enabled} and ``rate_limits``;
``budget_policy_id``; ``tags``) and the Terraform provider's ``databricks_model_serving_provisioned_throughput``
page (v1.128.0). The resource has no scale-to-zero setting: provisioned throughput is billed while it exists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.vocabulary import CLOUD_TAG, PROVISIONED_THROUGHPUT_TYPE, ROLE_TAG, STACK_TAG

from ._common import child_options, permissions
from .serving_endpoint import create_timeout_minutes


@dataclass(frozen=True, kw_only=True)
class ProvisionedThroughputEndpointArgs:
    #: The endpoint's name in the workspace (changing it replaces the endpoint).
    endpoint_name: str
    #: The foundation model (``system.ai.<model>``) and its version.
    entity: str
    entity_version: str
    model_units: int
    cloud: str
    stack: str
    tags: Mapping[str, str] = field(default_factory=dict)
    #: The inference table's catalog and schema (AI Gateway payload logging); None: no inference table.
    inference_table: tuple[str, str] | None = None
    rate_limit_per_user_per_minute: int | None = None
    #: The serverless usage (budget) policy the endpoint carries (``budget_policy_id``); None: none.
    usage_policy_id: str | None = None
    can_query: Sequence[str] = ()
    can_manage: Sequence[str] = ()
    #: How long ``pulumi up`` waits for the endpoint to be ready, on create and on a config update, minutes: the
    #: provider gives up after it (and, on create, deletes the endpoint). Our estimate for a model whose size the
    #: stack does not state (`create_timeout_minutes`): a provisioned-throughput endpoint names model units, which
    #: are throughput, not weights.
    timeout_minutes: int = create_timeout_minutes(None)

    def __post_init__(self) -> None:
        if self.model_units < 1:
            raise ValueError(f"model_units must be >= 1, got {self.model_units}")


class ProvisionedThroughputEndpoint(pulumi.ComponentResource):
    """A ``databricks.ModelServingProvisionedThroughput`` serving one foundation model on ``model_units`` model units,
    tagged with the stack's tags (and the role, cloud and stack the policies and the cost model read), with AI
    Gateway usage tracking, the inference table and rate limit the stack asks for, and ``CAN_QUERY`` /
    ``CAN_MANAGE`` for the groups it names."""

    endpoint_name: pulumi.Output[str]

    def __init__(self, name: str, args: ProvisionedThroughputEndpointArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(PROVISIONED_THROUGHPUT_TYPE, name, None, opts)
        child = child_options(self, opts)
        tags = {**args.tags, ROLE_TAG: "inference", CLOUD_TAG: args.cloud, STACK_TAG: args.stack}
        gateway = databricks.ModelServingProvisionedThroughputAiGatewayArgs(
            usage_tracking_config=databricks.ModelServingProvisionedThroughputAiGatewayUsageTrackingConfigArgs(
                enabled=True),
            inference_table_config=None if args.inference_table is None else
            databricks.ModelServingProvisionedThroughputAiGatewayInferenceTableConfigArgs(
                catalog_name=args.inference_table[0], schema_name=args.inference_table[1],
                table_name_prefix=args.endpoint_name.replace("-", "_"), enabled=True),
            rate_limits=None if args.rate_limit_per_user_per_minute is None else [
                databricks.ModelServingProvisionedThroughputAiGatewayRateLimitArgs(
                    calls=args.rate_limit_per_user_per_minute, key="user", renewal_period="minute")],
        )
        endpoint = databricks.ModelServingProvisionedThroughput(
            name, name=args.endpoint_name,
            config=databricks.ModelServingProvisionedThroughputConfigArgs(served_entities=[
                databricks.ModelServingProvisionedThroughputConfigServedEntityArgs(
                    entity_name=args.entity, entity_version=args.entity_version,
                    provisioned_model_units=args.model_units)]),
            ai_gateway=gateway,
            budget_policy_id=args.usage_policy_id,
            tags=[databricks.ModelServingProvisionedThroughputTagArgs(key=k, value=str(v))
                  for k, v in sorted(tags.items())],
            # The provider waits only 10 minutes for a provisioned-throughput endpoint, on create and on a config
            # update, and deletes the endpoint when the create wait runs out (terraform-provider-databricks v1.128.0
            # serving/resource_model_serving_provisioned_throughput.go: defaultPtProvisionTimeout = 10 * time.Minute
            # for Timeouts Create and Update; Create calls ServingEndpoints.DeleteByName when the wait fails);
            # provisioning a large foundation model's model units can take longer: we wait args.timeout_minutes.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(custom_timeouts=pulumi.CustomTimeouts(
                create=f"{args.timeout_minutes}m", update=f"{args.timeout_minutes}m"))))
        permissions(name, {"serving_endpoint_id": endpoint.serving_endpoint_id},
                    [*(({"group_name": g}, "CAN_QUERY") for g in args.can_query),
                     *(({"group_name": g}, "CAN_MANAGE") for g in args.can_manage)], child)
        self.endpoint_name = endpoint.name
        self.register_outputs({"endpoint_name": self.endpoint_name})
