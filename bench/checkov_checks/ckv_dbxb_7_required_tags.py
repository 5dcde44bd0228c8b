import dbx_bench_common as c
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck

REQUIRED = ("workload", "cost_center")


class RequiredTags(BaseResourceCheck):
    """Clusters carry the custom tags that cost reports group by."""

    def __init__(self) -> None:
        super().__init__(name="Clusters carry custom_tags workload and cost_center", id="CKV_DBXB_7",
                         categories=[CheckCategories.CONVENTION], supported_resources=["databricks_cluster"])

    def scan_resource_conf(self, conf):
        tags = c.mapping(conf, "custom_tags")
        for key in REQUIRED:
            v = tags.get(key)
            if not (c.is_set(v) and str(v).strip()):
                return CheckResult.FAILED
        return CheckResult.PASSED


check = RequiredTags()
