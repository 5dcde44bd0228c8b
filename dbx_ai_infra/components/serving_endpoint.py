"""ServingEndpoint: a GPU Model Serving endpoint for a Unity Catalog model, with AI Gateway and permissions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_databricks as databricks

from dbx_ai_infra.dbxtypes.vocabulary import CLOUD_TAG, GPU_MEMORY_NEED_TAG, ROLE_TAG, SERVING_ENDPOINT_TYPE, STACK_TAG

from ._common import child_options, permissions
from .unity_catalog import principal_slug


@dataclass(frozen=True, kw_only=True)
class ServingEndpointArgs:
    #: The endpoint's name in the workspace (changing it replaces the endpoint).
    endpoint_name: str
    #: Unity Catalog registered model ``catalog.schema.model`` and the version served.
    entity: str
    entity_version: str
    #: The GPU workload type (sized from the model by the spec, or the stack's checked pin).
    workload_type: str
    min_concurrency: int = 4
    max_concurrency: int = 4
    scale_to_zero: bool = True
    cloud: str
    stack: str
    tags: Mapping[str, str] = field(default_factory=dict)
    gpu_memory_need_gb: float | None = None
    #: The inference table's catalog and schema (AI Gateway payload logging); None: no inference table.
    inference_table: tuple[str, str] | None = None
    rate_limit_per_user_per_minute: int | None = None
    can_query: Sequence[str] = ()
    can_manage: Sequence[str] = ()
    #: Principals given EXECUTE on the served model before the endpoint is created (its creator, whose identity the
    #: endpoint runs as for good, when someone else registered the model).
    execute: Sequence[str] = ()
    #: The serverless usage (budget) policy the endpoint carries (``budget_policy_id``, pulumi-databricks 1.118
    #: ``ModelServingArgs``: "The Budget Policy ID set for this serving endpoint"); None: none.
    usage_policy_id: str | None = None
    #: How long ``pulumi up`` waits for the endpoint to be ready, minutes (`create_timeout_minutes`): the provider
    #: gives up (and deletes the endpoint) after it.
    create_timeout_minutes: int = 45


#: The provider's own wait for an endpoint to be ready (Terraform provider databricks_model_serving, Timeouts: create
#: 45 minutes, after which the endpoint is deleted), and the floor of ours: a provisioned-throughput endpoint's too,
#: whose provider waits only 10 minutes (`ProvisionedThroughputEndpoint`).
PROVIDER_CREATE_TIMEOUT_MINUTES = 45


def create_timeout_minutes(weights_gb: float | None) -> int:
    """How long to wait for an endpoint serving ``weights_gb`` of weights: the provider's 45 minutes, plus a minute
    per 2 GB (the image build copies the weights and every replica loads them onto its GPUs before the endpoint is
    ready; our estimate, about 35 MB/s end to end, at least 45 minutes and at most 4 hours: Model Serving's
    documented worst case is hours for large custom models, "Create custom model serving endpoints")."""
    extra = 0 if weights_gb is None else math.ceil(weights_gb / 2)
    return min(PROVIDER_CREATE_TIMEOUT_MINUTES + extra, 240)


class ServingEndpoint(pulumi.ComponentResource):
    """A ``databricks.ModelServing`` serving one entity on a GPU workload type, with the stack's tags (and the
    role, cloud, stack and GPU memory need the policies read), AI Gateway usage tracking, the inference table and
    rate limit the stack asks for, and ``CAN_QUERY`` / ``CAN_MANAGE`` for the groups it names."""

    endpoint_name: pulumi.Output[str]

    def __init__(self, name: str, args: ServingEndpointArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(SERVING_ENDPOINT_TYPE, name, None, opts)
        child = child_options(self, opts)
        tags = {**args.tags, ROLE_TAG: "inference", CLOUD_TAG: args.cloud, STACK_TAG: args.stack}
        if args.gpu_memory_need_gb is not None:
            tags[GPU_MEMORY_NEED_TAG] = f"{args.gpu_memory_need_gb:g}"
        gateway = databricks.ModelServingAiGatewayArgs(
            usage_tracking_config=databricks.ModelServingAiGatewayUsageTrackingConfigArgs(enabled=True),
            inference_table_config=None if args.inference_table is None else
            databricks.ModelServingAiGatewayInferenceTableConfigArgs(
                catalog_name=args.inference_table[0], schema_name=args.inference_table[1],
                table_name_prefix=args.endpoint_name.replace("-", "_"), enabled=True),
            rate_limits=None if args.rate_limit_per_user_per_minute is None else [
                databricks.ModelServingAiGatewayRateLimitArgs(calls=args.rate_limit_per_user_per_minute, key="user",
                                                              renewal_period="minute")],
        )
        # The endpoint runs as its creator and reads the model with that identity: EXECUTE on the registered model
        # (Databricks docs, "Create custom model serving endpoints": the creator needs EXECUTE on the model in Unity
        # Catalog; pulumi-databricks 1.118 Grant ``model``), granted first and waited for.
        execute = [databricks.Grant(f"{name}-execute-{principal_slug(p)}", model=args.entity, principal=p,
                                    privileges=["EXECUTE"], opts=child) for p in dict.fromkeys(args.execute)]
        endpoint = databricks.ModelServing(
            name, name=args.endpoint_name,
            config=databricks.ModelServingConfigArgs(served_entities=[
                databricks.ModelServingConfigServedEntityArgs(
                    entity_name=args.entity, entity_version=args.entity_version, workload_type=args.workload_type,
                    # scale to zero: the lower bound is 0 (provider model_serving docs; databricks-sdk
                    # ServedEntityInput.min_provisioned_concurrency); the stack's min applies to an always-warm one
                    min_provisioned_concurrency=0 if args.scale_to_zero else args.min_concurrency,
                    max_provisioned_concurrency=args.max_concurrency,
                    scale_to_zero_enabled=args.scale_to_zero)]),
            ai_gateway=gateway,
            budget_policy_id=args.usage_policy_id,
            tags=[databricks.ModelServingTagArgs(key=k, value=str(v)) for k, v in sorted(tags.items())],
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
                depends_on=execute, custom_timeouts=pulumi.CustomTimeouts(create=f"{args.create_timeout_minutes}m"))))
        permissions(name, {"serving_endpoint_id": endpoint.serving_endpoint_id},
                    [*(({"group_name": g}, "CAN_QUERY") for g in args.can_query),
                     *(({"group_name": g}, "CAN_MANAGE") for g in args.can_manage)], child)
        self.endpoint_name = endpoint.name
        self.register_outputs({"endpoint_name": self.endpoint_name})
