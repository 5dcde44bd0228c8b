import dbx_bench_common as c
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck


class MatchingRuntime(BaseResourceCheck):
    """GPU ML runtime on GPU nodes, CPU runtime on CPU nodes, no Photon on GPUs."""

    def __init__(self) -> None:
        super().__init__(name="Runtime flavour matches the node type (GPU ML on GPU, CPU on CPU)", id="CKV_DBXB_5",
                         categories=[CheckCategories.GENERAL_SECURITY], supported_resources=["databricks_cluster"])

    def scan_resource_conf(self, conf):
        version = c.value(conf, "spark_version")
        if not isinstance(version, str) or not version:
            return CheckResult.PASSED
        worker = c.value(conf, "node_type_id") if c.is_set(c.value(conf, "node_type_id")) else None
        driver = c.value(conf, "driver_node_type_id") if c.is_set(c.value(conf, "driver_node_type_id")) else worker
        workhorse = driver if c.is_single_node(conf) else worker
        gpu_runtime = "-gpu-ml-" in version.lower()
        auto_flavour = c.value(conf, "kind") == "CLASSIC_PREVIEW" and c.value(conf, "use_ml_runtime") is True
        if gpu_runtime and workhorse and c.is_gpu(workhorse) is False:
            return CheckResult.FAILED
        gpu_nodes = [n for n in dict.fromkeys(x for x in (worker, driver) if x) if c.is_gpu(n) is True]
        if not gpu_runtime and not auto_flavour and gpu_nodes:
            return CheckResult.FAILED
        photon = str(c.value(conf, "runtime_engine", "")).upper() == "PHOTON" or "photon" in version.lower()
        if photon and gpu_nodes:
            return CheckResult.FAILED
        return CheckResult.PASSED


check = MatchingRuntime()
