"""The bottom layer: ClusterShape (one reading of Pulumi inputs and API JSON), the vocabulary's one default
availability per cloud, the typed plan's JSON round trip and schema, and the one input error formatter."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import SHIPPED
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Plan, plan_json_schema
from dbx_ai_infra.dbxtypes.shape import (
    camel_to_snake,
    cluster_shape,
    normalize_props,
    pool_shape,
    role_of,
    shapes_of_resource,
)
from dbx_ai_infra.dbxtypes.vocabulary import (
    ALL_PURPOSE,
    CLUSTER,
    DEFAULT_AVAILABILITY,
    INSTANCE_POOL,
    JOB,
    JOBS_COMPUTE,
    ON_DEMAND,
    REQUIRED_TAGS,
    SPOT_WITH_FALLBACK,
    USAGE_DEFAULTS,
)

PULUMI_CLUSTER = {
    "clusterName": "serve",
    "sparkVersion": "17.3.x-gpu-ml-scala2.13",
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
    "spark_version": "17.3.x-gpu-ml-scala2.13",
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
    assert normalize_props(PULUMI_CLUSTER) == API_CLUSTER
    assert normalize_props(API_CLUSTER) == API_CLUSTER


def test_normalize_keeps_map_keys_and_ints() -> None:
    out = normalize_props(PULUMI_CLUSTER)
    assert "costCenter" in out["custom_tags"] and "hfToken" in out["spark_env_vars"]
    assert "spark.executor.memoryOverhead" in out["spark_conf"]
    assert type(out["num_workers"]) is int and type(out["autoscale"]["max_workers"]) is int
    assert normalize_props({"x": 1.5})["x"] == 1.5
    assert normalize_props({"flag": True})["flag"] is True
    assert normalize_props(None) == {}


def test_normalize_reads_policy_sdk_proxies() -> None:
    assert normalize_props(unknown_checking_proxy(PULUMI_CLUSTER)) == API_CLUSTER
    with pytest.raises(UnknownValueError):
        normalize_props(unknown_checking_proxy({"instancePoolId": UNKNOWN_STRING_VALUE}))


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
    # job context: GPU batch work, never serving, single node or not
    ({"custom_tags": {"workload": "llm-serving"}, "autoscale": {"max_workers": 2}}, "job", "training"),
    ({"num_workers": 0, "spark_conf": {"spark.databricks.cluster.profile": "singleNode"}}, "job", "training"),
    # issue 51, item 5: an untagged autoscaled all-purpose GPU cluster is inference by its shape
    ({"autoscale": {"min_workers": 2, "max_workers": 8}}, "all-purpose", "inference"),
    ({"is_single_node": True}, "all-purpose", "interactive"),
    ({"num_workers": 4}, "job", "training"),
    ({"num_workers": 0}, "job", "training"),  # no workers but no singleNode profile: shape says job -> training
    ({"num_workers": 4}, "all-purpose", "unknown"),
    ({}, "all-purpose", "interactive"),  # no workers, no autoscale: a GPU single node (dev)
])
def test_role_of(cluster: dict, cluster_type: str, role: str) -> None:
    kind = JOBS_COMPUTE if cluster_type == "job" else ALL_PURPOSE
    assert role_of(cluster, kind, cluster.get("custom_tags", {}))[0] == role
    on_gpu = {**cluster, "spark_version": "17.3.x-gpu-ml-scala2.13"}
    assert cluster_shape(on_gpu, compute_kind=kind).role == role
    assert cluster_shape({**cluster, "node_type_id": "g5.xlarge"}, compute_kind=kind,
                         gpu_node=lambda n: n.startswith("g5")).role == role
    # the same shape on CPU compute has no role, unless a tag names it
    cpu = cluster_shape({**cluster, "spark_version": "17.3.x-scala2.13", "node_type_id": "m5.xlarge"},
                        compute_kind=kind, gpu_node=lambda n: False)
    from dbx_ai_infra.dbxtypes.shape import tag_role

    assert cpu.role == (role if tag_role(cluster.get("custom_tags", {})) else "unknown") and not cpu.gpu


def test_is_single_node_shape() -> None:
    assert cluster_shape({}).is_single_node  # num_workers absent = 0, no autoscale
    assert cluster_shape({"num_workers": 0}).is_single_node
    assert cluster_shape({"is_single_node": True, "num_workers": 3}).is_single_node
    assert not cluster_shape({"autoscale": {"min_workers": 0, "max_workers": 2}}).is_single_node
    assert not cluster_shape({"num_workers": 1}).is_single_node


def test_shapes_of_a_cluster() -> None:
    def gpu_node(node_type_id: str) -> bool:
        return node_type_id.startswith("g5")

    (view,) = shapes_of_resource(CLUSTER, PULUMI_CLUSTER, gpu_node=gpu_node)
    assert view.label == "" and view.compute_kind == ALL_PURPOSE and view.role == "inference" and view.gpu
    assert view.props == API_CLUSTER and view.source == "pulumi" and view.job is None
    assert view == shapes_of_resource(CLUSTER, API_CLUSTER, gpu_node=gpu_node)[0]  # camelCase, snake_case: same
    assert view.autoscale == (2, 8) and view.min_workers == 2 and view.max_workers == 8
    assert view.cloud == "aws" and view.availability == "SPOT_WITH_FALLBACK" and view.first_on_demand == 3
    assert view.node_type_ids == ["g5.2xlarge"] and not view.pool_backed and view.spot
    assert view.libraries == ("vllm==0.6.3",) and view.autotermination_minutes == 60
    (api_view,) = shapes_of_resource(CLUSTER, {"cluster_source": "JOB", "num_workers": 2,
                                               "spark_version": "17.3.x-gpu-ml-scala2.13"}, source="api")
    assert api_view.compute_kind == JOBS_COMPUTE and api_view.role == "training" and api_view.source == "api"


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
    views = shapes_of_resource(JOB, job)
    assert [v.label for v in views] == ["jobClusters[train].newCluster", "jobClusters[score].newCluster",
                                        "tasks[eval].newCluster"]
    assert [v.role for v in views] == ["training", "inference", "inference"]  # job tags reach job clusters
    assert all(v.compute_kind == JOBS_COMPUTE and v.resource_type == JOB for v in views)
    assert [[t["task_key"] for t in v.tasks] for v in views] == [["fit"], [], ["eval"]]
    assert views[0].job["name"] == "nightly"
    api_views = shapes_of_resource(JOB, {"job_clusters": [{"job_cluster_key": "k", "new_cluster": {}}]}, source="api")
    assert api_views[0].label == "job_clusters[k].new_cluster"
    legacy = shapes_of_resource(JOB, {"newCluster": {"numWorkers": 2.0}})
    assert legacy[0].label == "newCluster"
    assert shapes_of_resource(INSTANCE_POOL, {"nodeTypeId": "x"}) == []




# --- one fact, one answer: availability with no attributes block --------------------------------------------------

@pytest.mark.parametrize("cloud,node", [("aws", "g5.xlarge"), ("azure", "Standard_NV36ads_A10_v5"),
                                        ("gcp", "g2-standard-4")])
def test_no_block_means_the_clouds_default_for_policies_and_pricing(cloud: str, node: str) -> None:
    from dbx_ai_infra.policies.common import node_cloud
    from dbx_ai_infra.policies.registry import evaluate_resource
    from dbx_ai_infra.pricing import load_prices, price_plan

    props = {"nodeTypeId": node, "sparkVersion": "17.3.x-gpu-ml-scala2.13",
             "autoscale": {"minWorkers": 2, "maxWorkers": 4}, "autoterminationMinutes": 10,
             "customTags": {"workload_type": "inference", "workload": "w", "cost_center": "c"}}
    shape = cluster_shape(props, node_cloud=node_cloud)
    assert shape.cloud == cloud and shape.availability == DEFAULT_AVAILABILITY[cloud]
    spot_base = [v for v in evaluate_resource(CLUSTER, props, urn="u", name="c")
                 if v.policy == "databricks-cluster-disallow-all-spot-inference"]
    plan = {"stack": "s", "project": "p", "cloud": cloud,
            "resources": [{"urn": "u", "type": CLUSTER, "name": "c", "inputs": props}]}
    entry = price_plan(plan, load_prices()).resources["u"]
    if DEFAULT_AVAILABILITY[cloud] == ON_DEMAND[cloud]:
        assert spot_base == [] and entry.availability == ON_DEMAND[cloud]
        assert entry.saving_monthly_expected == 0
    else:
        assert spot_base and entry.availability == SPOT_WITH_FALLBACK[cloud]
        assert entry.spot_nodes is not None and entry.spot_nodes.max > 0


def test_pool_shape() -> None:
    pool = pool_shape({"nodeTypeId": "g5.xlarge", "minIdleInstances": 1.0, "maxCapacity": 4.0,
                       "awsAttributes": {"availability": "ON_DEMAND"}, "customTags": {"workload_type": "inference"}})
    assert pool.node_type_id == "g5.xlarge" and pool.min_idle_instances == 1 and pool.max_capacity == 4
    assert pool.role == "inference" and pool.declared_availability_in("aws") == "ON_DEMAND"
    assert pool_shape({"gcpAttributes": {"gcpAvailability": "ON_DEMAND_GCP"}}).declared_availability_in("gcp") \
        == "ON_DEMAND_GCP"


# --- the typed plan -----------------------------------------------------------------------------------------------

def test_shipped_plans_round_trip_and_validate_against_the_shipped_schema(plan_of) -> None:
    from pathlib import Path

    from dbx_ai_infra.engine.pipeline import build_plan

    shipped = json.loads((Path(__file__).resolve().parent.parent / "docs" / "plan.schema.json").read_text())
    assert shipped == plan_json_schema(), "docs/plan.schema.json is stale: run `make schema`"
    validator = jsonschema.Draft202012Validator(shipped)
    for stack in SHIPPED:
        doc = build_plan(stack, with_cost=True).to_json()
        validator.validate(doc)
        assert Plan.from_json(doc).to_json() == doc
    broken = build_plan(SHIPPED[0], with_cost=True).to_json()
    broken["cost"]["total"]["hourly"] = "cheap"
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(broken)


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d.update(cloud="oci"), "cloud"),
    (lambda d: d.pop("resources"), "resources"),
    (lambda d: d["resources"][0].pop("type"), "resources[0].type"),
    (lambda d: d.update(violations=[{"policy": "x"}]), "violations[0].enforcement"),
])
def test_plan_from_json_names_the_field(plan_of, mutate, field: str) -> None:
    doc = json.loads(json.dumps(plan_of(SHIPPED[0])))
    mutate(doc)
    with pytest.raises(InputError) as excinfo:
        Plan.from_json(doc, "base.json")
    assert str(excinfo.value).startswith("base.json: ") and field in str(excinfo.value)


def test_usage_defaults_are_stated_once() -> None:
    from dbx_ai_infra.pricing import DEFAULT_ASSUMPTIONS
    from dbx_ai_infra.stackspec.models import UsageSpec

    assert UsageSpec().model_dump() == {k: u.default for k, u in USAGE_DEFAULTS.items()} == DEFAULT_ASSUMPTIONS
    assert set(UsageSpec.model_fields) == set(USAGE_DEFAULTS)


def test_required_tags_are_one_word_list() -> None:
    from dbx_ai_infra.policies.rules import require_tags
    from dbx_ai_infra.stackspec.models import StackSpec

    with pytest.raises(ValueError, match=" and ".join(REQUIRED_TAGS)):
        StackSpec.model_validate({"cloud": "aws", "gpu_family": "a10g", "single_user_name": "x", "tags": {},
                                  "dev": {}})
    assert "cost_center" in require_tags.check(cluster_shape({"custom_tags": {"workload": "x"}}), {})[0]


@pytest.mark.parametrize("path", ["dbx_ai_infra/gpucatalog/node_types.yaml", "dbx_ai_infra/gpucatalog/serving_types.yaml", "dbx_ai_infra/pricing/rates.yaml"])
def test_shipped_data_reads_the_same_with_the_fast_loader_as_with_the_strict_one(path: str) -> None:
    """The shipped data files are read with PyYAML's C loader (YAML 1.1); user input keeps the strict
    YAML 1.2 reader. Both give the shipped files the same data, so nothing in them depends on the difference."""
    from pathlib import Path

    from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml, parse_yaml

    text = (Path(__file__).resolve().parent.parent / path).read_text(encoding="utf-8")
    assert parse_packaged_yaml(text, path) == parse_yaml(text, path)


def test_a_yaml_1_1_word_reads_differently_so_the_equality_above_can_fail() -> None:
    from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml, parse_yaml

    assert parse_packaged_yaml("flag: no\n", "x") != parse_yaml("flag: no\n", "x")


def test_a_broken_shipped_file_is_an_input_error_naming_it() -> None:
    from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml

    with pytest.raises(InputError, match="rates.yaml"):
        parse_packaged_yaml("a: [1,\n", "dbx_ai_infra/pricing/rates.yaml")


# --- the strict YAML 1.2 reader (stack files, price and policy files) -----------------------------------------------

_YAML_SCALARS = ["yes", "no", "on", "off", "y", "N", "true", "True", "TRUE", "tRue", "false", "null", "~", "", "NULL",
                 "nUll", "1", "-1", "+1", "012", "0o12", "0O12", "0x1F", "0X1F", "0b101", "1_000", "1.5", "1e3", "1E3",
                 "1e-300", "1.0e+308", "1.0e+400", ".inf", "-.inf", "+.inf", ".Inf", ".NAN", ".5", "5.", "-.5",
                 "2027-03-31", "2027-03-31T10:00:00Z", "12:30:00", "1:20", "0.1.2", "-0", "00", "0x_1", "1_0.5",
                 "17.3.x-gpu-ml-scala2.13", "'quoted'", "'1'", '"true"', "!!str 123", "!!int '5'", "!!float 1", "0o",
                 "0x", "-0x1F", "+0o7", "1e", "e3", ".", "+", "1.", "1.e3", "0e0", "08", "09.5", "1,000", "NaN", "inf",
                 "0b2", "-0b1", "0777", "1e+3", "1.2E-3"]


def _ruamel_yaml_1_2(text: str):
    """ruamel.yaml's YAML 1.2 safe loader with dates as strings: the reader stack files went through before."""
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import SafeConstructor

    class Core(SafeConstructor):
        pass

    Core.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)
    reader = YAML(typ="safe", pure=True)
    reader.Constructor = Core
    return reader.load(text)


@pytest.mark.parametrize("scalar", _YAML_SCALARS)
def test_a_plain_scalar_reads_as_ruamels_yaml_1_2_loader_reads_it(scalar: str) -> None:
    import math

    from dbx_ai_infra.dbxtypes.documents import parse_yaml

    ours, theirs = parse_yaml(f"k: {scalar}\n", "x")["k"], _ruamel_yaml_1_2(f"k: {scalar}\n")["k"]
    assert type(ours) is type(theirs)
    assert ours == theirs or (isinstance(ours, float) and math.isnan(ours) and math.isnan(theirs))


def test_yaml_1_2_readings_a_stack_file_relies_on() -> None:
    from dbx_ai_infra.dbxtypes.documents import parse_yaml

    doc = parse_yaml("a: no\nb: on\nc: 012\nd: 0o12\ne: 2027-03-31\nf: 1e-300\ng: 1_000\nh: TRUE\ni: ~\nj: '7'\n", "x")
    assert doc == {"a": "no", "b": "on", "c": 12, "d": 10, "e": "2027-03-31", "f": 1e-300, "g": 1000, "h": True,
                   "i": None, "j": "7"}


def test_yaml_keys_given_twice_are_refused_but_a_merge_may_override() -> None:
    from dbx_ai_infra.dbxtypes.documents import parse_yaml

    with pytest.raises(InputError, match=r"x.yaml: size: is given twice in the same mapping \(again at line 3\)"):
        parse_yaml("a:\n  size: 1\n  size: 2\n", "x.yaml")
    merged = parse_yaml("base: &b {size: 1, name: x}\nc:\n  <<: *b\n  size: 2\n", "x.yaml")
    assert merged["c"] == {"size": 2, "name": "x"}


def test_a_recursive_alias_and_a_syntax_error_are_input_errors_naming_the_place() -> None:
    from dbx_ai_infra.dbxtypes.documents import parse_yaml

    with pytest.raises(InputError, match="expands without end"):
        parse_yaml("a: &a [1, *a]\n", "x.yaml")
    with pytest.raises(InputError, match=r"x.yaml: YAML syntax error at line 2, column 3: mapping values are not"):
        parse_yaml("a: 1\n b: 2\n", "x.yaml")
    with pytest.raises(InputError, match="'abc' is not an integer"):
        parse_yaml("a: !!int abc\n", "x.yaml")


def test_key_lines_come_from_the_same_parse(tmp_path) -> None:
    from dbx_ai_infra.dbxtypes.documents import compose_yaml, key_lines

    root = compose_yaml("# a comment\nconfig:\n  one: 1\n\n  two:\n    deep: [1]\n", "x.yaml")
    assert key_lines(root) == {"config": 2}
    assert key_lines(root, ("config",)) == {"one": 3, "two": 5}
    assert key_lines(root, ("config", "two")) == {"deep": 6}
    assert key_lines(root, ("config", "one")) == {} and key_lines(root, ("missing",)) == {}
