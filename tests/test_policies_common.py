"""Normalisation, cluster views, classification and the string helpers of policies.common."""

from __future__ import annotations

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from policies.common import (
    camel_to_snake, classify, clusters_of_resource, is_pinned_pip, pip_name, is_secret_reference, is_single_node,
    looks_like_secret, looks_like_secret_key, looks_like_secret_value, normalize_cluster,
)
from policies.rule import CLUSTER, JOB

PULUMI_CLUSTER = {
    "clusterName": "serve",
    "sparkVersion": "15.4.x-gpu-ml-scala2.12",
    "nodeTypeId": "g5.2xlarge",
    "driverNodeTypeId": "g5.2xlarge",
    "numWorkers": 0.0,
    "autoscale": {"minWorkers": 2.0, "maxWorkers": 8.0},
    "awsAttributes": {"availability": "SPOT_WITH_FALLBACK", "firstOnDemand": 3.0, "spotBidPricePercent": 100.0},
    "autoterminationMinutes": 60.0,
    "isSingleNode": False,
    "dataSecurityMode": "SINGLE_USER",
    "instancePoolId": None,
    "customTags": {"workload_type": "inference", "costCenter": "x", "ResourceClass": "Serving"},
    "sparkConf": {"spark.databricks.delta.preview.enabled": "true", "spark.executor.memoryOverhead": "2g"},
    "sparkEnvVars": {"HF_HOME": "/Volumes/ml/m/hf", "hfToken": "{{secrets/a/b}}"},
    "libraries": [{"pypi": {"package": "vllm==0.6.3", "repo": "https://pypi.org/simple"}}],
}
API_CLUSTER = {
    "cluster_name": "serve",
    "spark_version": "15.4.x-gpu-ml-scala2.12",
    "node_type_id": "g5.2xlarge",
    "driver_node_type_id": "g5.2xlarge",
    "num_workers": 0,
    "autoscale": {"min_workers": 2, "max_workers": 8},
    "aws_attributes": {"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 3, "spot_bid_price_percent": 100},
    "autotermination_minutes": 60,
    "is_single_node": False,
    "data_security_mode": "SINGLE_USER",
    "instance_pool_id": None,
    "custom_tags": {"workload_type": "inference", "costCenter": "x", "ResourceClass": "Serving"},
    "spark_conf": {"spark.databricks.delta.preview.enabled": "true", "spark.executor.memoryOverhead": "2g"},
    "spark_env_vars": {"HF_HOME": "/Volumes/ml/m/hf", "hfToken": "{{secrets/a/b}}"},
    "libraries": [{"pypi": {"package": "vllm==0.6.3", "repo": "https://pypi.org/simple"}}],
}


def test_normalize_camel_and_snake_agree() -> None:
    assert normalize_cluster(PULUMI_CLUSTER) == API_CLUSTER
    assert normalize_cluster(API_CLUSTER) == API_CLUSTER


def test_normalize_keeps_map_keys_and_ints() -> None:
    out = normalize_cluster(PULUMI_CLUSTER)
    assert "costCenter" in out["custom_tags"] and "hfToken" in out["spark_env_vars"]
    assert "spark.executor.memoryOverhead" in out["spark_conf"]
    assert type(out["num_workers"]) is int and type(out["autoscale"]["max_workers"]) is int
    assert normalize_cluster({"x": 1.5})["x"] == 1.5
    assert normalize_cluster({"flag": True})["flag"] is True
    assert normalize_cluster(None) == {}


def test_normalize_reads_policy_sdk_proxies() -> None:
    assert normalize_cluster(unknown_checking_proxy(PULUMI_CLUSTER)) == API_CLUSTER
    with pytest.raises(UnknownValueError):
        normalize_cluster(unknown_checking_proxy({"instancePoolId": UNKNOWN_STRING_VALUE}))


@pytest.mark.parametrize("key,expected", [
    ("numWorkers", "num_workers"), ("awsAttributes", "aws_attributes"), ("gcpAvailability", "gcp_availability"),
    ("driverInstancePoolId", "driver_instance_pool_id"), ("num_workers", "num_workers"), ("s3", "s3"),
    ("useMlRuntime", "use_ml_runtime"),
])
def test_camel_to_snake(key: str, expected: str) -> None:
    assert camel_to_snake(key) == expected


@pytest.mark.parametrize("cluster,cluster_type,role", [
    ({"custom_tags": {"workload_type": "Training"}, "autoscale": {"max_workers": 2}}, "all-purpose", "training"),
    ({"custom_tags": {"workload_type": "batch", "workload": "inference"}}, "job", "inference"),
    ({"custom_tags": {"workload": "llm-serving"}, "autoscale": {"max_workers": 2}}, "job", "inference"),
    ({"num_workers": 0, "spark_conf": {"spark.databricks.cluster.profile": "singleNode"}}, "job", "interactive"),
    ({"is_single_node": True}, "all-purpose", "interactive"),
    ({"num_workers": 4}, "job", "training"),
    ({"num_workers": 0}, "job", "training"),  # no workers but no singleNode profile: shape says job -> training
    ({"num_workers": 4}, "all-purpose", "unknown"),
    ({}, "all-purpose", "unknown"),
])
def test_classify(cluster: dict, cluster_type: str, role: str) -> None:
    assert classify(cluster, cluster_type) == role


def test_is_single_node_shape() -> None:
    assert is_single_node({})  # num_workers absent = 0, no autoscale
    assert is_single_node({"num_workers": 0})
    assert is_single_node({"is_single_node": True, "num_workers": 3})
    assert not is_single_node({"autoscale": {"min_workers": 0, "max_workers": 2}})
    assert not is_single_node({"num_workers": 1})


def test_clusters_of_a_cluster() -> None:
    (view,) = clusters_of_resource(CLUSTER, PULUMI_CLUSTER)
    assert view.label == "" and view.cluster_type == "all-purpose" and view.role == "inference"
    assert view.cluster == API_CLUSTER and view.source == "pulumi" and view.job is None
    (api_view,) = clusters_of_resource(CLUSTER, {"cluster_source": "JOB", "num_workers": 2}, source="api")
    assert api_view.cluster_type == "job" and api_view.role == "training" and api_view.source == "api"


def test_clusters_of_a_job() -> None:
    job = {
        "name": "nightly",
        "tags": {"workload_type": "inference"},
        "jobClusters": [{"jobClusterKey": "train", "newCluster": {"numWorkers": 4.0, "customTags": {"workload_type": "training"}}},
                        {"jobClusterKey": "score", "newCluster": {"numWorkers": 2.0}}],
        "tasks": [{"taskKey": "fit", "jobClusterKey": "train"},
                  {"taskKey": "eval", "newCluster": {"numWorkers": 1.0}},
                  {"taskKey": "report", "existingClusterId": "abc"}],
    }
    views = clusters_of_resource(JOB, job)
    assert [v.label for v in views] == ["jobClusters[train].newCluster", "jobClusters[score].newCluster",
                                        "tasks[eval].newCluster"]
    assert [v.role for v in views] == ["training", "inference", "inference"]  # job tags reach job clusters
    assert all(v.cluster_type == "job" and v.resource_type == JOB for v in views)
    assert [[t["task_key"] for t in v.tasks] for v in views] == [["fit"], [], ["eval"]]
    assert views[0].job["name"] == "nightly"
    api_views = clusters_of_resource(JOB, {"job_clusters": [{"job_cluster_key": "k", "new_cluster": {}}]}, source="api")
    assert api_views[0].label == "job_clusters[k].new_cluster"
    legacy = clusters_of_resource(JOB, {"newCluster": {"numWorkers": 2.0}})
    assert legacy[0].label == "newCluster"
    assert clusters_of_resource("databricks:index/instancePool:InstancePool", {"nodeTypeId": "x"}) == []


@pytest.mark.parametrize("spec,pinned", [
    ("torch==2.3.1", True),
    ("transformers[torch]==4.41.2", True),
    ("transformers[torch,sentencepiece]==4.41.2", True),
    ("pkg[extra]==1.2", True),
    ("vllm==0.6.3.post1", True),
    ("accelerate==1.0.0rc1", True),
    ("torch==2.3.1+cu121", True),
    ("numpy==1.26.4; python_version >= '3.10'", True),
    (" scipy == 1.13.0 ", True),
    ("torch", False),
    ("torch>=2.0", False),
    ("torch==2.*", False),
    ("torch~=2.3", False),
    ("torch==2.3,<3", False),
    ("torch!=2.3", False),
    ("", False),
    (None, False),
    ("https://example.com/simple/torch/", False),
    ("git+https://github.com/huggingface/peft.git", False),
    ("git+https://github.com/huggingface/peft.git@main", False),
    ("git+https://github.com/huggingface/peft.git@v0.12.0", True),
    ("peft @ git+https://github.com/huggingface/peft.git@" + "a" * 40, True),
    ("https://files.example.com/pkg-1.2.3-py3-none-any.whl", True),
    ("mypkg @ https://files.example.com/mypkg.whl", False),
])
def test_is_pinned_pip(spec, pinned: bool) -> None:
    assert is_pinned_pip(spec) is pinned


@pytest.mark.parametrize("key,secret", [
    ("HF_TOKEN", True), ("DATABRICKS_TOKEN", True), ("DB_PASSWORD", True), ("WANDB_API_KEY", True),
    ("OPENAI_APIKEY", True), ("AWS_SECRET_ACCESS_KEY", True), ("AWS_ACCESS_KEY_ID", True),
    ("spark.hadoop.fs.s3a.secret.key", True), ("spark.hadoop.fs.s3a.access.key", True),
    ("fs.azure.account.key.myacct.dfs.core.windows.net", True), ("SSH_PRIVATE_KEY", True), ("clientSecret", True),
    ("TOKENIZERS_PARALLELISM", False), ("HF_HOME", False), ("PYSPARK_PYTHON", False), ("KEYRING_BACKEND", False),
    ("spark.sql.shuffle.partitions", False), (3, False),
])
def test_looks_like_secret_key(key, secret: bool) -> None:
    assert looks_like_secret_key(key) is secret


def test_secret_values_and_references() -> None:
    assert looks_like_secret_value("dapi" + "0a" * 16) == "a Databricks personal access token"
    assert looks_like_secret_value("AKIA" + "Z" * 16) == "an AWS access key id"
    assert looks_like_secret_value("-----BEGIN RSA PRIVATE KEY-----\nabc") == "a private key"
    assert looks_like_secret_value("hello") is None and looks_like_secret_value(5) is None
    assert is_secret_reference("{{secrets/ml/hf}}") and is_secret_reference("Bearer {{secrets/ml/hf}}")
    assert not is_secret_reference("{{secrets/ml}}")
    assert looks_like_secret("HF_TOKEN", "hf_x") and looks_like_secret("X", "dapi" + "1" * 32)
    assert looks_like_secret("HF_TOKEN", "{{secrets/a/b}}") is None
    assert looks_like_secret("USE_AUTH_TOKEN", "true") is None
    assert looks_like_secret("TOKEN_PATH", "/Volumes/a/b/c/token") is None
    assert "hf_x" not in looks_like_secret("HF_TOKEN", "hf_x")


@pytest.mark.parametrize("spec,name", [
    ("torch>=2", "torch"), ("transformers[torch] ~= 4.4", "transformers[torch]"), ("peft", "peft"),
    ("git+https://github.com/x/y.git", None), (None, None), ("", None),
])
def test_pip_name(spec, name) -> None:
    assert pip_name(spec) == name
