"""`dbx_ai_infra.dbxtypes.endpoint`: one reading of a Model Serving endpoint for the serving rules, the cost model and advise."""

from __future__ import annotations

from dbx_ai_infra.dbxtypes.endpoint import endpoint_shape

PULUMI = {"name": "chat", "config": {"servedEntities": [{
    "entityName": "ai.models.chat", "entityVersion": "3", "workloadType": "GPU_MEDIUM",
    "minProvisionedConcurrency": 4, "maxProvisionedConcurrency": 16, "scaleToZeroEnabled": False}]},
    "aiGateway": {"inferenceTableConfig": {"catalogName": "ai", "schemaName": "serving", "tableNamePrefix": "chat",
                                           "enabled": True},
                  "rateLimits": [{"calls": 60, "key": "user", "renewalPeriod": "minute"}]},
    "tags": [{"key": "dbx_cloud", "value": "aws"}, {"key": None, "value": "dropped"}]}
API = {"name": "chat", "config": {"served_entities": [{
    "entity_name": "ai.models.chat", "entity_version": "3", "workload_type": "GPU_MEDIUM",
    "min_provisioned_concurrency": 4, "max_provisioned_concurrency": 16, "scale_to_zero_enabled": False}]},
    "ai_gateway": {"inference_table_config": {"catalog_name": "ai", "schema_name": "serving",
                                              "table_name_prefix": "chat", "enabled": True},
                   "rate_limits": [{"calls": 60, "key": "user", "renewal_period": "minute"}]},
    "tags": [{"key": "dbx_cloud", "value": "aws"}, {"key": None, "value": "dropped"}]}


def test_both_casings_read_the_same() -> None:
    pulumi, api = endpoint_shape(PULUMI), endpoint_shape(API)
    assert pulumi == api
    assert (api.name, api.workload_type, api.min_concurrency, api.max_concurrency, api.scale_to_zero) == \
        ("chat", "GPU_MEDIUM", 4, 16, False)
    assert api.tags == {"dbx_cloud": "aws"} and api.rate_limits[0]["renewal_period"] == "minute"
    assert api.payload_table == "ai.serving.chat_payload"


def test_what_is_unset_reads_as_unset() -> None:
    bare = endpoint_shape({"name": "x", "config": {"served_entities": [{"scale_to_zero_enabled": "true"}]}})
    assert (bare.min_concurrency, bare.max_concurrency, bare.scale_to_zero, bare.workload_type) == (0, None, False, "")
    assert bare.payload_table is None and bare.rate_limits == [] and endpoint_shape(None).entity == {}
    off = {**API, "ai_gateway": {"inference_table_config": {**API["ai_gateway"]["inference_table_config"],
                                                            "enabled": False}}}
    assert endpoint_shape(off).payload_table is None
