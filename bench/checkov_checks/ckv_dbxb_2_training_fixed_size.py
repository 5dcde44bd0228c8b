import dbx_bench_common as c
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck


class TrainingFixedSize(BaseResourceCheck):
    """Training clusters have a fixed size and do not run on spot capacity without fallback."""

    def __init__(self) -> None:
        super().__init__(name="Training clusters are not autoscaled and not spot-only", id="CKV_DBXB_2",
                         categories=[CheckCategories.GENERAL_SECURITY], supported_resources=["databricks_cluster"])

    def scan_resource_conf(self, conf):
        if c.role(conf) != "training":
            return CheckResult.PASSED
        if c.block(conf, "autoscale") is not None:
            return CheckResult.FAILED
        if not c.is_set(c.value(conf, "instance_pool_id")):
            for cloud, blk in c.effective_blocks(conf).items():
                if c.availability(blk, cloud) == c.SPOT_ONLY[cloud]:
                    return CheckResult.FAILED
        return CheckResult.PASSED


check = TrainingFixedSize()
