import dbx_bench_common as c
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck


class CloudAttributes(BaseResourceCheck):
    """At most one cloud attributes block, the one of the node types' cloud."""

    def __init__(self) -> None:
        super().__init__(name="Cloud attributes block matches the node type's cloud", id="CKV_DBXB_4",
                         categories=[CheckCategories.GENERAL_SECURITY], supported_resources=["databricks_cluster"])

    def scan_resource_conf(self, conf):
        blocks = c.cloud_blocks(conf)
        if len(blocks) > 1:
            return CheckResult.FAILED
        node_clouds = {cl for cl in (c.cloud_of(n) for n in c.node_types(conf)) if cl}
        if len(node_clouds) > 1:
            return CheckResult.FAILED
        if node_clouds and any(cloud not in node_clouds for cloud in blocks):
            return CheckResult.FAILED
        return CheckResult.PASSED


check = CloudAttributes()
