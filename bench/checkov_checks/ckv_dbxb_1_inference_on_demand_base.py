import dbx_bench_common as c
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck


class InferenceOnDemandBase(BaseResourceCheck):
    """Inference clusters keep the driver and the minimum workers on on-demand capacity."""

    def __init__(self) -> None:
        super().__init__(name="Inference clusters keep an on-demand base (first_on_demand >= min_workers + 1)",
                         id="CKV_DBXB_1", categories=[CheckCategories.GENERAL_SECURITY],
                         supported_resources=["databricks_cluster"])

    def scan_resource_conf(self, conf):
        if c.role(conf) != "inference" or c.is_set(c.value(conf, "instance_pool_id")):
            return CheckResult.PASSED
        needed = c.min_workers(conf) + 1
        for cloud, blk in c.effective_blocks(conf).items():
            avail = c.availability(blk, cloud)
            if avail == c.SPOT_ONLY[cloud]:
                return CheckResult.FAILED
            if avail == c.ON_DEMAND[cloud]:
                continue
            fod = c.number(c.value(blk, "first_on_demand"))
            if (1 if fod is None else fod) < needed:
                return CheckResult.FAILED
        return CheckResult.PASSED


check = InferenceOnDemandBase()
