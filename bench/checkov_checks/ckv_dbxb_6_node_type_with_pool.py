import dbx_bench_common as c
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck

PAIRS = (("instance_pool_id", "node_type_id"), ("driver_instance_pool_id", "driver_node_type_id"))


class NodeTypeWithPool(BaseResourceCheck):
    """A pool-backed cluster does not also set a node type for the same nodes."""

    def __init__(self) -> None:
        super().__init__(name="node_type_id is not set together with instance_pool_id", id="CKV_DBXB_6",
                         categories=[CheckCategories.GENERAL_SECURITY], supported_resources=["databricks_cluster"])

    def scan_resource_conf(self, conf):
        for pool, node in PAIRS:
            if c.is_set(c.value(conf, pool)) and c.is_set(c.value(conf, node)):
                return CheckResult.FAILED
        return CheckResult.PASSED


check = NodeTypeWithPool()
