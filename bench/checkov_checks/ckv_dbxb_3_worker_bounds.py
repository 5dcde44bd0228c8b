import dbx_bench_common as c
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck

MAX_WORKERS_CAP = 64


class WorkerBounds(BaseResourceCheck):
    """num_workers or autoscale, not both; min_workers <= max_workers; no more than the cap."""

    def __init__(self) -> None:
        super().__init__(name="Clusters set num_workers or autoscale (not both) within the worker cap",
                         id="CKV_DBXB_3", categories=[CheckCategories.GENERAL_SECURITY],
                         supported_resources=["databricks_cluster"])

    def scan_resource_conf(self, conf):
        workers = c.number(c.value(conf, "num_workers"))
        scale = c.block(conf, "autoscale")
        highs = [workers]
        if scale is not None:
            low, high = c.number(c.value(scale, "min_workers")), c.number(c.value(scale, "max_workers"))
            if workers is not None and workers > 0:
                return CheckResult.FAILED
            if low is not None and high is not None and low > high:
                return CheckResult.FAILED
            highs.append(high)
        if any(h is not None and h > MAX_WORKERS_CAP for h in highs):
            return CheckResult.FAILED
        return CheckResult.PASSED


check = WorkerBounds()
