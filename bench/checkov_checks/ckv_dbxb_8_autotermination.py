import dbx_bench_common as c
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck

MAX_MINUTES = 120
PROVIDER_DEFAULT = 60  # the Terraform provider's default when autotermination_minutes is absent


class Autotermination(BaseResourceCheck):
    """All-purpose clusters terminate by themselves after at most MAX_MINUTES idle."""

    def __init__(self) -> None:
        super().__init__(name="Clusters auto-terminate within 120 minutes", id="CKV_DBXB_8",
                         categories=[CheckCategories.GENERAL_SECURITY], supported_resources=["databricks_cluster"])

    def scan_resource_conf(self, conf):
        minutes = c.number(c.value(conf, "autotermination_minutes"))
        minutes = PROVIDER_DEFAULT if minutes is None else minutes
        return CheckResult.FAILED if minutes == 0 or minutes > MAX_MINUTES else CheckResult.PASSED


check = Autotermination()
