"""Every rule: metadata, a compliant resource, one field flipped, the property missing, other types ignored.

Fixtures are written once in the Clusters API (snake_case) shape; the Pulumi form is derived by `camelize`, an
independent snake -> camel conversion (map-valued attributes keep their keys), so each case runs from both the raw
camelCase ``databricks:index/cluster:Cluster`` inputs and the snake_case API JSON.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from conftest import with_, with_at

from dbx_ai_infra.dbxtypes.vocabulary import (
    CLUSTER,
    GRANTS,
    INSTANCE_POOL,
    JOB,
    MODEL_SERVING_ENDPOINT,
    PROVISIONED_THROUGHPUT_ENDPOINT,
    TOKEN,
)
from dbx_ai_infra.policies.registry import ALL_RULES, RULES_BY_NAME, evaluate_resource, rule_messages

MAP_KEYS = {"custom_tags", "spark_conf", "spark_env_vars", "tags", "named_parameters", "base_parameters"}
OTHER_TYPES = ("databricks:index/notebook:Notebook", CLUSTER, JOB, INSTANCE_POOL, GRANTS)


def camelize(value: Any, convert: bool = True) -> Any:
    """snake_case keys -> camelCase, as Pulumi hands inputs to policies (numbers as floats, like the gRPC path)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            new = re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), k) if convert else k
            out[new] = camelize(v, convert and k not in MAP_KEYS)
        return out
    if isinstance(value, list):
        return [camelize(v, convert) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


INFERENCE = {
    "cluster_name": "serve",
    "spark_version": "17.3.x-gpu-ml-scala2.13",
    "node_type_id": "g5.2xlarge",
    "driver_node_type_id": "g5.2xlarge",
    "autoscale": {"min_workers": 2, "max_workers": 8},
    "aws_attributes": {"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 3},
    "autotermination_minutes": 60,
    "data_security_mode": "SINGLE_USER",
    "custom_tags": {"workload": "inference", "workload_type": "inference", "cost_center": "ai-team"},
}
TRAINING = {
    "cluster_name": "train",
    "spark_version": "17.3.x-gpu-ml-scala2.13",
    "node_type_id": "g5.12xlarge",
    "num_workers": 4,
    "aws_attributes": {"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 5},
    "autotermination_minutes": 60,
    "spark_env_vars": {"CHECKPOINT_DIR": "/Volumes/ml/train/checkpoints"},
    "custom_tags": {"workload": "training", "workload_type": "training", "cost_center": "ai-team"},
}
SINGLE_NODE = {
    "cluster_name": "notebook",
    "spark_version": "17.3.x-cpu-ml-scala2.13",
    "node_type_id": "i3.xlarge",
    "num_workers": 0,
    "autotermination_minutes": 30,
    "aws_attributes": {"availability": "ON_DEMAND"},
    "spark_conf": {"spark.databricks.cluster.profile": "singleNode", "spark.master": "local[*]"},
    "custom_tags": {"ResourceClass": "SingleNode", "workload": "interactive", "cost_center": "ai-team"},
}
POOL = {
    "instance_pool_name": "serve-pool",
    "node_type_id": "g5.2xlarge",
    "idle_instance_autotermination_minutes": 15,
    "aws_attributes": {"availability": "ON_DEMAND"},
    "custom_tags": {"workload": "inference", "workload_type": "inference", "cost_center": "ai-team"},
}
GRANT_PROPS = {"catalog": "ml", "grants": [{"principal": "account users", "privileges": ["USE_CATALOG", "BROWSE"]},
                                           {"principal": "ml-admins", "privileges": ["ALL_PRIVILEGES"]}]}


TOKEN_PROPS = {"comment": "ci deploys", "lifetime_seconds": 7776000}
JAR_JOB = {"name": "etl", "tasks": [{"task_key": "main", "spark_jar_task": {"main_class_name": "com.acme.Main"},
                                     "new_cluster": {"spark_version": "17.3.x-scala2.13", "node_type_id": "i3.xlarge",
                                                     "num_workers": 2}}]}


#: A GPU serving endpoint as the ServingEndpoint component registers it (API shape).
ENDPOINT = {
    "name": "chat",
    "config": {"served_entities": [{
        "entity_name": "ai.models.chat", "entity_version": "3", "workload_type": "GPU_MEDIUM",
        "min_provisioned_concurrency": 4, "max_provisioned_concurrency": 8, "scale_to_zero_enabled": False}]},
    "ai_gateway": {"inference_table_config": {"catalog_name": "ai", "schema_name": "serving", "enabled": True},
                   "rate_limits": [{"calls": 60, "key": "user", "renewal_period": "minute"}],
                   "usage_tracking_config": {"enabled": True}},
    "tags": [{"key": "workload", "value": "genai"}, {"key": "cost_center", "value": "ai"},
             {"key": "dbx_cloud", "value": "aws"}, {"key": "dbx_stack", "value": "prod"},
             {"key": "gpu_memory_need_gb", "value": "16.8"}],
}


def entity_with(**changes: Any) -> dict:
    """ENDPOINT with its served entity changed (None deletes a key)."""
    return with_at(ENDPOINT, ("config", "served_entities", 0), changes)


def gateway_with(**changes: Any) -> dict:
    return with_at(ENDPOINT, ("ai_gateway",), changes)


def with_conf(base: dict, **conf: Any) -> dict:
    """A deep copy of ``base`` with spark_conf entries set (dots spelled ``_dot_``); None deletes."""
    return with_at(base, ("spark_conf",), {key.replace("_dot_", "."): value for key, value in conf.items()})


@dataclass
class Case:
    resource_type: str
    good: dict
    bad: dict
    hint: str  # the remediation hint the flipped resource's message ends with
    missing: dict  # the property the rule reads, removed
    missing_violates: bool  # whether the rule fires on the missing property (its default is non-compliant)
    config: dict = field(default_factory=dict)
    sources: tuple[str, ...] = ("pulumi", "api")  # the inputs the rule judges (an export-only rule: "api")


#: A provisioned-throughput endpoint (issue 55) as the provider takes it.
PROVISIONED = {
    "name": "assistant", "budget_policy_id": "policy-1",
    "config": {"served_entities": [{"entity_name": "system.ai.llama-4-maverick", "entity_version": "1",
                                    "provisioned_model_units": 50}]},
    "ai_gateway": ENDPOINT["ai_gateway"], "tags": ENDPOINT["tags"],
}


def units(n: int | None) -> dict:
    return with_at(PROVISIONED, ("config", "served_entities", 0), {"provisioned_model_units": n})


CASES: dict[str, Case] = {
    "databricks-serverless-require-usage-policy": Case(
        MODEL_SERVING_ENDPOINT, {**ENDPOINT, "budget_policy_id": "policy-1"}, ENDPOINT,
        "Fix: set dbx-ai-infra:usage_policy_id (the stack's usage policy; budget_policy_id on the resource).",
        ENDPOINT, True),
    "databricks-serving-provisioned-throughput-model-units": Case(
        PROVISIONED_THROUGHPUT_ENDPOINT, PROVISIONED, units(0),
        "Fix: raise provisioned_throughput.model_units to at least 10.", units(None), True,
        config={"min_model_units": 10}),
    "databricks-serving-require-fitting-workload-type": Case(
        MODEL_SERVING_ENDPOINT, ENDPOINT, entity_with(workload_type="GPU_SMALL"),
        "Fix: use one that fits: GPU_MEDIUM, MULTIGPU_MEDIUM, GPU_MEDIUM_8, GPU_LARGE_8, GPU_XLARGE_8.",
        {k: v for k, v in ENDPOINT.items() if k != "config"}, False),
    "databricks-serving-disallow-scale-to-zero-in-production": Case(
        MODEL_SERVING_ENDPOINT, ENDPOINT, entity_with(scale_to_zero_enabled=True),
        "Fix: set scale_to_zero: false (keep concurrency.min replicas warm), or list the stack elsewhere than "
        "production_stacks.",
        entity_with(scale_to_zero_enabled=None), False),
    "databricks-serving-require-inference-table": Case(
        MODEL_SERVING_ENDPOINT, ENDPOINT, gateway_with(inference_table_config={"catalog_name": "ai",
                                                                               "schema_name": "serving",
                                                                               "enabled": False}),
        "Fix: enable ai_gateway.inference_table_config with a catalog and schema (stack: inference_table: true).",
        {k: v for k, v in ENDPOINT.items() if k != "ai_gateway"}, True),
    "databricks-serving-require-rate-limit": Case(
        MODEL_SERVING_ENDPOINT, ENDPOINT, gateway_with(rate_limits=[]),
        "Fix: set an AI Gateway rate limit per user (stack: rate_limit_per_user_per_minute).",
        {k: v for k, v in ENDPOINT.items() if k != "ai_gateway"}, True),
    "databricks-cluster-disallow-all-spot-inference": Case(
        CLUSTER, INFERENCE, with_(INFERENCE, aws_attributes__first_on_demand=1),
        "Fix: set aws_attributes.first_on_demand to at least 3.",
        with_(INFERENCE, aws_attributes=None), True),  # no block: SPOT_WITH_FALLBACK with first_on_demand 1
    "databricks-cluster-disallow-autoscaled-or-spot-training": Case(
        CLUSTER, TRAINING, with_(TRAINING, aws_attributes__availability="SPOT"),
        "Fix: set aws_attributes.availability to SPOT_WITH_FALLBACK.",
        with_(TRAINING, aws_attributes=None), False),
    "databricks-cluster-configure-worker-bounds": Case(
        CLUSTER, INFERENCE, with_(INFERENCE, num_workers=2),
        "Fix: keep autoscale and remove num_workers, or remove autoscale for a fixed size.",
        with_(INFERENCE, autoscale=None), False),
    "databricks-cluster-require-matching-cloud-attributes": Case(
        CLUSTER, INFERENCE,
        with_(INFERENCE, aws_attributes=None, azure_attributes={"availability": "SPOT_WITH_FALLBACK_AZURE"}),
        "Fix: replace azure_attributes with aws_attributes.",
        with_(INFERENCE, node_type_id=None, driver_node_type_id=None), False),
    "databricks-cluster-require-matching-runtime": Case(
        CLUSTER, INFERENCE, with_(INFERENCE, spark_version="17.3.x-scala2.13"),
        "Fix: use a '-gpu-ml-' runtime such as 18.x-gpu-ml-scala2.13, or set kind CLASSIC_PREVIEW with "
        "use_ml_runtime true.",
        with_(INFERENCE, spark_version=None), False),
    "databricks-cluster-disallow-node-type-with-instance-pool": Case(
        CLUSTER, with_(INFERENCE, node_type_id=None, driver_node_type_id=None, aws_attributes=None,
                       instance_pool_id="pool-1"),
        with_(INFERENCE, driver_node_type_id=None, aws_attributes=None, instance_pool_id="pool-1"),
        "Fix: remove node_type_id and pick the node type on the pool.",
        with_(INFERENCE, node_type_id=None, driver_node_type_id=None, aws_attributes=None), False),
    "databricks-api-conformance": Case(
        CLUSTER, INFERENCE, with_(INFERENCE, init_scripts="s3://bucket/init.sh"),
        "Fix: remove or correct it (the workspace refuses it or drops it silently).",
        with_(INFERENCE, autoscale=None), False),
    "databricks-export-unrecognised-field": Case(
        CLUSTER, INFERENCE, with_(INFERENCE, aws_attributes__availability="SPOT_PLEASE"),
        "if you would send it, check its spelling against the API reference.",
        with_(INFERENCE, autoscale=None), False, sources=("api",)),
    "databricks-cluster-avoid-retiring-node-types": Case(
        CLUSTER, TRAINING, with_(TRAINING, node_type_id="p3.8xlarge"),
        "Fix: move to a current GPU family on aws (t4, a10g, a100, a100-80gb, h100, l4, l40s).",
        with_(TRAINING, node_type_id=None), False),
    "databricks-cluster-require-supported-runtime": Case(
        CLUSTER, TRAINING, with_(TRAINING, spark_version="13.3.x-gpu-ml-scala2.12"),
        "Fix: move to an LTS release still supported: 18 LTS (to 2029-06-10), 17.3 LTS (to 2028-10-22), 16.4 LTS "
        "(to 2028-05-09), 15.4 LTS (to 2027-08-19), 14.3 LTS (to 2027-02-01).",
        with_(TRAINING, spark_version=None), False, config={"as_of": "2026-12-03"}),
    "databricks-cluster-prefer-auto-zone": Case(
        CLUSTER, with_(TRAINING, aws_attributes={**TRAINING["aws_attributes"], "zone_id": "auto"}),
        with_(TRAINING, aws_attributes={**TRAINING["aws_attributes"], "zone_id": "us-east-1a"}),
        "Fix: set aws_attributes.zone_id to auto (Databricks picks a zone when the cluster starts).",
        with_(TRAINING, aws_attributes={k: v for k, v in TRAINING["aws_attributes"].items() if k != "zone_id"}),
        False, sources=("api",)),
    "databricks-cluster-prefer-interconnect-for-multi-node-training": Case(
        CLUSTER, with_(TRAINING, node_type_id="p4d.24xlarge"), TRAINING,
        "Fix: use fewer, larger nodes (g5.48xlarge: 8 GPUs on one node) or a family with a GPU interconnect "
        "(a100: p4d.24xlarge, 400 Gbps).",
        with_(TRAINING, num_workers=1), False),
    "databricks-cluster-require-autotermination": Case(
        CLUSTER, TRAINING, with_(TRAINING, autotermination_minutes=0),
        "Fix: set autotermination_minutes between 10 and 120.",
        with_(TRAINING, autotermination_minutes=None), False),  # Pulumi: absent = provider default 60
    "databricks-cluster-configure-single-node": Case(
        CLUSTER, SINGLE_NODE, with_conf(SINGLE_NODE, spark_dot_master=None),
        "Fix: set is_single_node true with kind CLASSIC_PREVIEW (the current form: Databricks sets them itself; "
        "provider docs, resources/cluster.md), or add spark_conf spark.master=local[*] (the legacy form, without "
        "kind).",
        with_(SINGLE_NODE, spark_conf=None), True),
    "databricks-resource-require-tags": Case(
        CLUSTER, INFERENCE, with_(INFERENCE, custom_tags__cost_center=None),
        "Fix: add custom_tags cost_center=<value>.",
        with_(INFERENCE, custom_tags=None), True),
    "databricks-library-require-pinned-pip-versions": Case(
        CLUSTER, with_(INFERENCE, libraries=[{"pypi": {"package": "vllm==0.6.3"}}, {"pypi": {"package": "transformers[torch]==4.44.2"}}]),
        with_(INFERENCE, libraries=[{"pypi": {"package": "vllm>=0.6"}}, {"pypi": {"package": "transformers[torch]==4.44.2"}}]),
        "Fix: pin it, e.g. 'vllm==<version>'.",
        with_(INFERENCE, libraries=None), False),
    "databricks-cluster-disallow-plaintext-secrets": Case(
        CLUSTER, with_(INFERENCE, spark_env_vars={"HF_TOKEN": "{{secrets/ml/hf-token}}", "TOKENIZERS_PARALLELISM": "false"}),
        with_(INFERENCE, spark_env_vars={"HF_TOKEN": "hf_s3cr3tVALUE", "TOKENIZERS_PARALLELISM": "false"}),
        "Fix: store it in a secret scope and set spark_env_vars 'HF_TOKEN' to '{{secrets/<scope>/<key>}}'.",
        with_(INFERENCE, spark_env_vars=None), False),
    "databricks-uc-disallow-all-privileges-to-account-users": Case(
        GRANTS, GRANT_PROPS,
        with_(GRANT_PROPS, grants=[{"principal": "account users", "privileges": ["ALL_PRIVILEGES"]}]),
        "Fix: grant only the privileges needed (e.g. USE_CATALOG, USE_SCHEMA, READ_VOLUME) to a specific group.",
        with_(GRANT_PROPS, grants=None), False),
    "databricks-cluster-require-volumes-for-caches": Case(
        CLUSTER, with_(INFERENCE, spark_env_vars={"HF_HOME": "/Volumes/ml/models/hf"}),
        with_(INFERENCE, spark_env_vars={"HF_HOME": "/dbfs/models/hf"}),
        "Fix: point 'HF_HOME' at /Volumes/<catalog>/<schema>/<volume>/...",
        with_(INFERENCE, spark_env_vars=None), False),
    "databricks-cluster-configure-single-node-shuffle-partitions": Case(
        CLUSTER, with_conf(SINGLE_NODE, spark_dot_sql_dot_shuffle_dot_partitions="8"),
        with_conf(SINGLE_NODE, spark_dot_sql_dot_shuffle_dot_partitions="200"),
        "Fix: set spark.sql.shuffle.partitions to at most 16 (about the driver's core count).",
        SINGLE_NODE, False),
    "databricks-training-require-checkpoint-location": Case(
        CLUSTER, TRAINING, with_(TRAINING, spark_env_vars={"HF_HOME": "/Volumes/ml/models/hf"}),
        "Fix: set spark_env_vars CHECKPOINT_DIR, pointing at /Volumes/<catalog>/<schema>/<volume>/checkpoints.",
        with_(TRAINING, spark_env_vars=None), True),
    "databricks-cluster-require-gpu-memory-fit": Case(
        CLUSTER, with_(INFERENCE, custom_tags__gpu_memory_need_gb="20"),
        with_(INFERENCE, custom_tags__gpu_memory_need_gb="40"),
        "Fix: choose a node type with at least 40 GB of GPU memory, or a smaller or quantised model.",
        INFERENCE, False),
    "databricks-cluster-require-complete-autoscale-bounds": Case(
        CLUSTER, INFERENCE, with_(INFERENCE, autoscale__max_workers=None),
        "Fix: set both autoscale.min_workers and autoscale.max_workers (or a fixed num_workers).",
        with_(INFERENCE, autoscale=None), False),
    "databricks-cluster-require-runtime-key": Case(
        CLUSTER, INFERENCE, with_(INFERENCE, spark_version="3.3.1"),
        "or the id of a databricks_spark_version data source.",
        with_(INFERENCE, spark_version=None), False),
    "databricks-token-require-lifetime": Case(
        TOKEN, TOKEN_PROPS, with_(TOKEN_PROPS, lifetime_seconds=None),
        "Fix: set lifetime_seconds (e.g. 7776000 for 90 days) and rotate it.",
        with_(TOKEN_PROPS, lifetime_seconds=None), True),
    "databricks-job-disallow-spark-submit-task": Case(
        JOB, JAR_JOB, with_(JAR_JOB, tasks=[{**JAR_JOB["tasks"][0], "spark_jar_task": None,
                                             "spark_submit_task": {"parameters": ["--class", "com.acme.Main"]}}]),
        "Fix: run the code as a spark_jar_task (JVM), spark_python_task or python_wheel_task.",
        with_(JAR_JOB, tasks=None), False),
}


#: The rules judged from one resource alone; those of scope "plan" (a cluster's access, from the plan's Permissions)
#: are judged with their plan in tests/test_peer_checks.py.
RULE_NAMES = [r.name for r in ALL_RULES if r.scope == "resource"]
ALL_NAMES = [r.name for r in ALL_RULES]
SOURCES = ("pulumi", "api")


def run(rule_name: str, props: dict, source: str, resource_type: str | None = None) -> list[str]:
    rule = RULES_BY_NAME[rule_name]
    case = CASES[rule_name]
    rtype = resource_type or case.resource_type
    given = camelize(props) if source == "pulumi" else props
    return rule_messages(rule, rtype, given, {**rule.thresholds, **case.config}, source=source)


def test_every_rule_has_a_case() -> None:
    assert set(CASES) == set(RULE_NAMES)
    # issue 51, item 5: tag-autoscaled-gpu-compute is gone (the shape gives the role); issue 55: two serverless rules
    assert len(RULE_NAMES) == 32


#: The rules judged with more than one resource (scope "plan": the plan's Permissions; a stack rule: the stack), each
#: with the test that shows it passing and failing (the file names the rule's id).
JUDGED_ELSEWHERE = {
    "databricks-resource-require-access-control":
        ("test_peer_checks.py::test_a_plan_s_permissions_say_who_may_use_its_clusters_and_jobs",),
    "databricks-job-require-service-principal-owner":
        ("test_peer_checks.py::test_a_plan_s_permissions_say_who_may_use_its_clusters_and_jobs",),
    "databricks-stack-budget": ("test_budget.py::test_check_fails_a_stack_over_its_budget_on_the_stack_itself",),
    "databricks-serving-require-registered-model":
        ("test_first_day_round2.py::test_an_endpoint_serving_from_the_stacks_own_catalog_needs_the_second_run_declared",),
    "databricks-stack-unique-in-metastore": (
        "test_first_day_round3.py::test_two_stacks_that_can_share_a_metastore_creating_the_same_thing_fail_the_many_"
        "stacks_run", "test_first_day_round3.py::test_stacks_in_different_regions_or_clouds_may_reuse_a_name"),
}


def test_a_rule_is_its_module_and_its_tests() -> None:
    """Issue 56, item 5: every module of dbx_ai_infra/policies/rules/ is a registered rule (no list names it), in its
    own place of the order, and every registered rule has a passing and a failing test: a case above, or the test
    named in JUDGED_ELSEWHERE."""
    import importlib
    from pathlib import Path

    from dbx_ai_infra.policies import rules
    from dbx_ai_infra.policies.ruleset import STACK_RULES, registered

    tests = Path(__file__).parent
    modules = sorted(p.stem for p in Path(rules.__file__).parent.glob("*.py") if not p.name.startswith("_"))
    found = [importlib.import_module(f"{rules.__name__}.{name}").RULE for name in modules]
    assert registered() == (*ALL_RULES, *STACK_RULES) and sorted(r.name for r in registered()) == sorted(r.name for r in found)
    orders = [rule.order for rule in registered()]
    assert orders == sorted(set(orders)) and orders[0] > 0, "each rule its own Rule.order"
    for rule in registered():
        if rule.name in CASES:
            continue
        for where in JUDGED_ELSEWHERE[rule.name]:
            path, test = where.split("::")
            text = (tests / path).read_text()
            assert f"def {test}(" in text and rule.name in text, (rule.name, where)


def test_rule_names_are_unique_kebab_case() -> None:
    assert len(set(ALL_NAMES)) == len(ALL_NAMES)
    for name in ALL_NAMES:
        assert re.fullmatch(r"databricks(-[a-z0-9]+)+", name), name


@pytest.mark.parametrize("name", ALL_NAMES)
def test_metadata(name: str) -> None:
    rule = RULES_BY_NAME[name]
    assert rule.enforcement in ("mandatory", "advisory")
    assert rule.description[0].isupper() and rule.description.endswith(".")
    assert rule.description.count(". ") == 0, "one sentence"
    assert rule.resource_types and all(t.startswith("databricks:index/") for t in rule.resource_types)
    assert rule.remediation
    assert rule.severity in ("low", "medium", "high", "critical")
    assert callable(rule.check)


def test_enforcement_levels() -> None:
    advisory = {r.name for r in ALL_RULES if r.enforcement == "advisory"}
    assert advisory == {
        "databricks-cluster-require-volumes-for-caches",
        "databricks-cluster-configure-single-node-shuffle-partitions",
        "databricks-training-require-checkpoint-location",
        "databricks-cluster-require-gpu-memory-fit",
        "databricks-cluster-avoid-retiring-node-types",
        "databricks-cluster-prefer-interconnect-for-multi-node-training",
        "databricks-cluster-prefer-auto-zone",
        "databricks-cluster-require-supported-runtime",
        "databricks-serving-require-inference-table",
        "databricks-serving-require-rate-limit",
        "databricks-serverless-require-usage-policy",
        "databricks-serving-provisioned-throughput-model-units",
        "databricks-export-unrecognised-field",
        "databricks-resource-require-access-control",
        "databricks-job-require-service-principal-owner",
    }
    # mandatory rules come first
    levels = [r.enforcement for r in ALL_RULES]
    assert levels == sorted(levels, key=lambda e: e != "mandatory")


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", RULE_NAMES)
def test_compliant_resource_passes(name: str, source: str) -> None:
    assert run(name, CASES[name].good, source) == []


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", RULE_NAMES)
def test_flipped_field_fails_with_hint(name: str, source: str) -> None:
    messages = run(name, CASES[name].bad, source)
    if source not in CASES[name].sources:  # an export-only rule is silent on what the project generates
        assert messages == []
        return
    assert len(messages) == 1, messages
    assert messages[0].endswith(CASES[name].hint), messages[0]
    assert " Fix: " in messages[0]


@pytest.mark.parametrize("name", RULE_NAMES)
def test_property_missing(name: str) -> None:
    case = CASES[name]
    messages = run(name, case.missing, "pulumi")
    assert bool(messages) is case.missing_violates, messages
    for m in messages:
        assert " Fix: " in m


@pytest.mark.parametrize("name", RULE_NAMES)
def test_empty_props_do_not_crash(name: str) -> None:
    for rtype in RULES_BY_NAME[name].resource_types:
        for source in SOURCES:
            for props in ({}, None):
                messages = rule_messages(RULES_BY_NAME[name], rtype, props, source=source)
                assert all(" Fix: " in m for m in messages)


@pytest.mark.parametrize("name", RULE_NAMES)
def test_other_resource_types_ignored(name: str) -> None:
    rule = RULES_BY_NAME[name]
    bad = CASES[name].bad
    others = [t for t in OTHER_TYPES if t not in rule.resource_types]
    assert others
    for rtype in others:
        assert rule_messages(rule, rtype, camelize(bad)) == []
        assert rule_messages(rule, rtype, bad, source="api") == []


@pytest.mark.parametrize("name", RULE_NAMES)
def test_flipped_resource_fails_through_evaluate_resource(name: str) -> None:
    case = CASES[name]
    if "pulumi" not in case.sources:  # an export-only rule: judged on the export's own JSON
        violations = evaluate_resource(case.resource_type, case.bad, urn="urn:x", name="x", source="api")
    else:
        violations = evaluate_resource(case.resource_type, camelize(case.bad), urn="urn:x", name="x")
    mine = [v for v in violations if v.policy == name]
    assert len(mine) == 1
    assert mine[0].enforcement == RULES_BY_NAME[name].enforcement
    assert mine[0].urn == "urn:x" and mine[0].resource_name == "x"
    assert not [v for v in evaluate_resource(case.resource_type, camelize(case.good), urn="u", name="n")
                if v.policy == name]


# --- rule-specific behaviour -----------------------------------------------------------------------------------------

SPOT = "databricks-cluster-disallow-all-spot-inference"
TRAIN = "databricks-cluster-disallow-autoscaled-or-spot-training"
BOUNDS = "databricks-cluster-configure-worker-bounds"
CLOUD = "databricks-cluster-require-matching-cloud-attributes"
RUNTIME = "databricks-cluster-require-matching-runtime"
POOL_NODE = "databricks-cluster-disallow-node-type-with-instance-pool"
AUTOTERM = "databricks-cluster-require-autotermination"
SINGLE = "databricks-cluster-configure-single-node"
TAGS = "databricks-resource-require-tags"
PIP = "databricks-library-require-pinned-pip-versions"
SECRETS = "databricks-cluster-disallow-plaintext-secrets"
GRANTS_RULE = "databricks-uc-disallow-all-privileges-to-account-users"
CACHES = "databricks-cluster-require-volumes-for-caches"
SHUFFLE = "databricks-cluster-configure-single-node-shuffle-partitions"
CKPT = "databricks-training-require-checkpoint-location"
GPU_MEM = "databricks-cluster-require-gpu-memory-fit"


@pytest.mark.parametrize("block,availability", [
    ("aws_attributes", "SPOT"), ("azure_attributes", "SPOT_AZURE"), ("gcp_attributes", "PREEMPTIBLE_GCP")])
def test_inference_spot_without_fallback(block: str, availability: str) -> None:
    props = with_(with_(INFERENCE, aws_attributes=None), **{block: {"availability": availability, "first_on_demand": 3}})
    messages = run(SPOT, props, "pulumi")
    assert len(messages) == 1 and availability in messages[0]


def test_inference_fixed_size_counts_num_workers_plus_driver() -> None:
    props = with_(INFERENCE, autoscale=None, num_workers=3)
    assert "at least 4" in run(SPOT, props, "api")[0]
    assert run(SPOT, with_(props, aws_attributes__first_on_demand=4), "api") == []


def test_inference_on_demand_passes_whatever_first_on_demand() -> None:
    assert run(SPOT, with_(INFERENCE, aws_attributes={"availability": "ON_DEMAND", "first_on_demand": 0}), "api") == []


def test_inference_on_pool_skips_availability() -> None:
    props = with_(INFERENCE, node_type_id=None, driver_node_type_id=None, instance_pool_id="p",
                  aws_attributes={"availability": "SPOT", "first_on_demand": 0})
    assert run(SPOT, props, "pulumi") == []


def test_spot_rule_ignores_non_inference() -> None:
    assert run(SPOT, with_(TRAINING, aws_attributes__first_on_demand=0), "pulumi") == []


@pytest.mark.parametrize("role", ["inference", "training"])
@pytest.mark.parametrize("block,field,value", [
    ("aws_attributes", "availability", "SPOT"),
    ("azure_attributes", "availability", "SPOT_AZURE"),
    ("gcp_attributes", "gcp_availability", "PREEMPTIBLE_GCP"),
])
def test_spot_instance_pool_for_inference_or_training(role: str, block: str, field: str, value: str) -> None:
    pool = with_(with_(POOL, aws_attributes=None, custom_tags__workload_type=role), **{block: {field: value}})
    messages = run(SPOT, pool, "pulumi", INSTANCE_POOL)
    assert len(messages) == 1 and messages[0].endswith(".") and "Fix: set" in messages[0]
    assert run(SPOT, POOL, "pulumi", INSTANCE_POOL) == []
    interactive = with_(pool, custom_tags__workload_type="interactive", custom_tags__workload="interactive")
    assert run(SPOT, interactive, "pulumi", INSTANCE_POOL) == []


def test_training_autoscale() -> None:
    messages = run(TRAIN, with_(TRAINING, num_workers=None, autoscale={"min_workers": 2, "max_workers": 4}), "pulumi")
    assert len(messages) == 1 and messages[0].endswith("Fix: remove autoscale and set num_workers.")


def test_worker_bounds_min_above_max_and_cap() -> None:
    messages = run(BOUNDS, with_(INFERENCE, autoscale={"min_workers": 9, "max_workers": 8}), "api")
    assert messages == ["autoscale has max_workers 8 <= min_workers 9; the API needs max_workers above min_workers. "
                        "Fix: use num_workers 9 for a fixed size, or raise max_workers to at least 10."]
    assert run(BOUNDS, with_(INFERENCE, autoscale={"min_workers": 3, "max_workers": 3}), "api")  # equal: refused too
    over = with_(INFERENCE, autoscale={"min_workers": 2, "max_workers": 65})
    assert "above the cap of 64" in run(BOUNDS, over, "api")[0]
    rule = RULES_BY_NAME[BOUNDS]
    assert rule_messages(rule, CLUSTER, over, {"max_workers_cap": 100}) == []
    fixed = with_(TRAINING, num_workers=80)
    assert run(BOUNDS, fixed, "pulumi")[0].startswith("num_workers is 80, above the cap of 64")


def test_worker_bounds_num_workers_zero_with_autoscale_is_fine() -> None:
    assert run(BOUNDS, with_(INFERENCE, num_workers=0), "pulumi") == []


def test_cloud_attributes_two_blocks_and_mixed_node_types() -> None:
    two = with_(INFERENCE, gcp_attributes={"availability": "ON_DEMAND_GCP"})
    messages = run(CLOUD, two, "api")
    assert any(m.startswith("sets aws_attributes and gcp_attributes") for m in messages)
    mixed = with_(INFERENCE, driver_node_type_id="Standard_NC6s_v3")
    assert any("different clouds" in m for m in run(CLOUD, mixed, "api"))
    pool = with_(POOL, aws_attributes=None, azure_attributes={"availability": "ON_DEMAND_AZURE"})
    assert run(CLOUD, pool, "pulumi", INSTANCE_POOL)[0].endswith("Fix: replace azure_attributes with aws_attributes.")


def test_cloud_attributes_unknown_node_type_no_verdict() -> None:
    assert run(CLOUD, with_(INFERENCE, node_type_id="mystery", driver_node_type_id=None), "api") == []


def test_runtime_gpu_on_cpu_and_photon() -> None:
    cpu = with_(INFERENCE, node_type_id="i3.xlarge", driver_node_type_id=None)
    assert "on CPU node type i3.xlarge" in run(RUNTIME, cpu, "api")[0]
    photon = with_(INFERENCE, runtime_engine="PHOTON")
    assert any("Photon" in m for m in run(RUNTIME, photon, "api"))
    unknown = with_(INFERENCE, node_type_id="mystery.type", driver_node_type_id=None, spark_version="17.3.x-scala2.13")
    assert run(RUNTIME, unknown, "api") == []
    auto = with_(INFERENCE, spark_version="17.3.x-scala2.13", kind="CLASSIC_PREVIEW", use_ml_runtime=True)
    assert run(RUNTIME, auto, "pulumi") == []
    pool_backed = with_(INFERENCE, node_type_id=None, driver_node_type_id=None, instance_pool_id="p")
    assert run(RUNTIME, pool_backed, "pulumi") == []


def test_node_type_with_driver_pool() -> None:
    props = with_(INFERENCE, node_type_id=None, instance_pool_id="p", driver_instance_pool_id="dp")
    messages = run(POOL_NODE, props, "api")
    assert messages and "driver_instance_pool_id and driver_node_type_id" in messages[0]


def test_autotermination_never_is_for_inference_clusters_only() -> None:
    assert run(AUTOTERM, with_(INFERENCE, autotermination_minutes=0), "pulumi") == []
    assert run(AUTOTERM, with_(INFERENCE, autotermination_minutes=None), "api") == []  # API: absent = never
    for other in (TRAINING, SINGLE_NODE):
        (message,) = run(AUTOTERM, with_(other, autotermination_minutes=0), "pulumi")
        assert "never terminates" in message
    # still capped when it does terminate
    assert run(AUTOTERM, with_(INFERENCE, autotermination_minutes=240), "pulumi")


def test_autotermination_defaults_by_source() -> None:
    absent = with_(TRAINING, autotermination_minutes=None)
    assert run(AUTOTERM, absent, "pulumi") == []  # provider default 60
    messages = run(AUTOTERM, absent, "api")  # API JSON: absent means never
    assert len(messages) == 1 and "never terminates" in messages[0]
    too_long = run(AUTOTERM, with_(INFERENCE, autotermination_minutes=240), "pulumi")
    assert too_long == ["all-purpose cluster autotermination_minutes is 240, above the limit of 120. "
                        "Fix: set autotermination_minutes to at most 120."]
    rule = RULES_BY_NAME[AUTOTERM]
    assert rule_messages(rule, CLUSTER, with_(INFERENCE, autotermination_minutes=240),
                         {"max_autotermination_minutes": 300}) == []


def test_autotermination_ignores_job_clusters() -> None:
    job = {"name": "j", "job_clusters": [{"job_cluster_key": "t", "new_cluster": with_(TRAINING, autotermination_minutes=0)}]}
    assert run(AUTOTERM, job, "pulumi", JOB) == []
    api_job_cluster = with_(TRAINING, autotermination_minutes=None, cluster_source="JOB")
    assert run(AUTOTERM, api_job_cluster, "api") == []


def test_single_node_modern_form_and_legacy_missing_all() -> None:
    modern = {"spark_version": "17.3.x-cpu-ml-scala2.13", "node_type_id": "i3.xlarge", "is_single_node": True,
              "kind": "CLASSIC_PREVIEW", "custom_tags": {"workload": "interactive", "cost_center": "x"}}
    assert run(SINGLE, modern, "pulumi") == []
    no_kind = with_(modern, kind=None)
    assert "without kind CLASSIC_PREVIEW" in run(SINGLE, no_kind, "pulumi")[0]
    bare = {"spark_version": "17.3.x-scala2.13", "node_type_id": "i3.xlarge"}  # num_workers absent = 0
    message = run(SINGLE, bare, "api")[0]
    for needed in ("spark.databricks.cluster.profile=singleNode", "spark.master=local[*]", "ResourceClass=SingleNode"):
        assert needed in message
    assert run(SINGLE, INFERENCE, "api") == []  # autoscaled: not single node


def test_required_tags_on_pool_and_job_tags_count() -> None:
    assert run(TAGS, with_(POOL, custom_tags=None), "pulumi", INSTANCE_POOL)[0].startswith(
        "instance pool lacks the required custom tag(s) workload, cost_center")
    cluster = with_(TRAINING, custom_tags={"workload_type": "training"})
    job = {"name": "j", "tags": {"workload": "training", "cost_center": "ai"},
           "job_clusters": [{"job_cluster_key": "t", "new_cluster": cluster}]}
    assert run(TAGS, job, "pulumi", JOB) == []
    assert run(TAGS, with_(job, tags=None), "pulumi", JOB)[0].startswith("jobClusters[t].newCluster: cluster lacks")
    assert run(TAGS, with_(INFERENCE, custom_tags__workload=""), "api")  # empty counts as missing


def test_pinned_pip_on_job_tasks_and_library_resource() -> None:
    job = {"name": "j", "job_clusters": [{"job_cluster_key": "t", "new_cluster": TRAINING}],
           "tasks": [{"task_key": "fit", "job_cluster_key": "t", "libraries": [{"pypi": {"package": "torch"}}]}]}
    messages = run(PIP, job, "pulumi", JOB)
    assert messages == ["jobClusters[t].newCluster: pip library 'torch' in tasks[fit].libraries is not pinned to one "
                        "version, so each restart may install a different release. Fix: pin it, e.g. 'torch==<version>'."]
    lib = "databricks:index/library:Library"
    rule = RULES_BY_NAME[PIP]
    assert rule_messages(rule, lib, {"clusterId": "c", "pypi": {"package": "peft~=0.12"}})
    assert rule_messages(rule, lib, {"clusterId": "c", "pypi": {"package": "peft==0.12.0"}}) == []


def test_secret_value_never_echoed() -> None:
    pat = "dapi" + "0123456789abcdef" * 2
    key_id = "AKIA" + "ABCDEFGHIJKLMNOP"
    props = with_(INFERENCE, spark_env_vars={"DB_PASSWORD": "hunter2hunter2", "SOME_URL_PART": pat},
                  spark_conf={"spark.hadoop.fs.s3a.access.key": key_id,
                              "spark.hadoop.fs.s3a.secret.key": "{{secrets/aws/secret}}"})
    messages = run(SECRETS, props, "pulumi")
    assert len(messages) == 3
    joined = "\n".join(messages)
    for secret in ("hunter2hunter2", pat, key_id):
        assert secret not in joined
    assert "Databricks personal access token" in joined and "AWS access key id" in joined


def test_secret_like_keys_with_harmless_values() -> None:
    props = with_(INFERENCE, spark_env_vars={"HF_HUB_DISABLE_TOKEN": "true",
                                             "GOOGLE_APPLICATION_CREDENTIALS": "/Volumes/ml/keys/sa.json",
                                             "WANDB_API_KEY": "{{secrets/ml/wandb}}"})
    assert run(SECRETS, props, "api") == []


def test_grants_variants() -> None:
    rule = RULES_BY_NAME[GRANTS_RULE]
    spaced = {"schema": "ml.models", "grants": [{"principal": "Account Users", "privileges": ["all privileges"]}]}
    messages = rule_messages(rule, GRANTS, spaced)
    assert len(messages) == 1 and "schema 'ml.models'" in messages[0]
    single = {"catalog": "ml", "principal": "account users", "privileges": ["ALL_PRIVILEGES"]}
    assert rule_messages(rule, "databricks:index/grant:Grant", single)
    other_group = {"catalog": "ml", "grants": [{"principal": "users", "privileges": ["ALL_PRIVILEGES"]}]}
    assert rule_messages(rule, GRANTS, other_group) == []


def test_caches_any_dbfs_env_var() -> None:
    props = with_(TRAINING, spark_env_vars={"CHECKPOINT_DIR": "dbfs:/ckpt", "DATA": "/dbfs/data"})
    messages = run(CACHES, props, "api")
    assert len(messages) == 2
    assert "model cache or checkpoint" in messages[0] and "puts a path" in messages[1]


def test_shuffle_only_on_single_node_and_threshold() -> None:
    wide = with_(INFERENCE, spark_conf={"spark.sql.shuffle.partitions": "400"})
    assert run(SHUFFLE, wide, "pulumi") == []
    sn = copy.deepcopy(SINGLE_NODE)
    sn["spark_conf"]["spark.sql.shuffle.partitions"] = 32
    assert run(SHUFFLE, sn, "pulumi")
    assert rule_messages(RULES_BY_NAME[SHUFFLE], CLUSTER, sn, {"max_single_node_shuffle_partitions": 32}) == []
    sn["spark_conf"]["spark.sql.shuffle.partitions"] = "auto"
    assert run(SHUFFLE, sn, "pulumi") == []


@pytest.mark.parametrize("task_extra,ok", [
    ({"spark_python_task": {"python_file": "train.py", "parameters": ["--checkpoint-dir", "/Volumes/ml/t/c"]}}, True),
    ({"spark_python_task": {"python_file": "train.py", "parameters": ["--checkpoint-dir=/Volumes/ml/t/c"]}}, True),
    ({"python_wheel_task": {"package_name": "t", "entry_point": "m", "named_parameters": {"checkpoint_dir": "/V"}}}, True),
    ({"notebook_task": {"notebook_path": "/n", "base_parameters": {"checkpoint_dir": "/V"}}}, True),
    ({"spark_python_task": {"python_file": "train.py", "parameters": ["--epochs", "3"]}}, False),
])
def test_checkpoint_from_job_task_parameters(task_extra: dict, ok: bool) -> None:
    cluster = with_(TRAINING, spark_env_vars=None)
    job = {"name": "j", "job_clusters": [{"job_cluster_key": "t", "new_cluster": cluster}],
           "tasks": [{"task_key": "fit", "job_cluster_key": "t", **task_extra}]}
    messages = run(CKPT, job, "pulumi", JOB)
    assert (messages == []) is ok
    if not ok:
        assert messages[0].endswith("Fix: set spark_env_vars CHECKPOINT_DIR or pass --checkpoint-dir in the task "
                                    "parameters, pointing at /Volumes/<catalog>/<schema>/<volume>/checkpoints.")


def test_checkpoint_task_on_other_cluster_does_not_count() -> None:
    cluster = with_(TRAINING, spark_env_vars=None)
    job = {"name": "j", "job_clusters": [{"job_cluster_key": "t", "new_cluster": cluster},
                                         {"job_cluster_key": "u", "new_cluster": cluster}],
           "tasks": [{"task_key": "fit", "job_cluster_key": "t",
                      "spark_python_task": {"python_file": "x.py", "parameters": ["--checkpoint-dir", "/V"]}}]}
    messages = run(CKPT, job, "pulumi", JOB)
    assert len(messages) == 1 and messages[0].startswith("jobClusters[u].newCluster: ")


def test_checkpoint_untagged_job_cluster_is_training() -> None:
    cluster = with_(TRAINING, spark_env_vars=None, custom_tags={"cost_center": "x"})
    job = {"name": "j", "tasks": [{"task_key": "fit", "new_cluster": cluster}]}
    messages = run(CKPT, job, "api", JOB)
    # judged as training, and the message says the role was taken from the job context, not tagged
    assert len(messages) == 1 and messages[0].startswith(
        "tasks[fit].new_cluster: training cluster (role: training, from its shape: a GPU job cluster with fixed "
        "workers) has no checkpoint")


def test_gpu_memory_number_tag_cpu_node_and_unknown() -> None:
    assert run(GPU_MEM, with_(INFERENCE, custom_tags__gpu_memory_need_gb=24), "api") == []
    multi = with_(INFERENCE, node_type_id="g5.12xlarge", driver_node_type_id=None, custom_tags__gpu_memory_need_gb=90)
    assert run(GPU_MEM, multi, "api") == []  # 4 x 24 GB
    cpu = with_(SINGLE_NODE, custom_tags__gpu_memory_need_gb="8")
    assert "has 0 GB of GPU memory (no GPU)" in run(GPU_MEM, cpu, "api")[0]
    assert run(GPU_MEM, with_(INFERENCE, node_type_id="mystery", driver_node_type_id=None,
                              custom_tags__gpu_memory_need_gb="80"), "api") == []
    assert "not a number" in run(GPU_MEM, with_(INFERENCE, custom_tags__gpu_memory_need_gb="lots"), "api")[0]


# --- the Databricks Clusters API example ------------------------------------------------------------------------------

API_EXAMPLE = {
    "cluster_name": "inference-gpu-cluster",
    "spark_version": "14.3.x-gpu-ml-scala2.12",
    "node_type_id": "g5.2xlarge",
    "driver_node_type_id": "g5.2xlarge",
    "num_workers": 2,
    "autoscale": {"min_workers": 2, "max_workers": 10},
    "azure_attributes": {"availability": "SPOT_WITH_FALLBACK_AZURE", "spot_bid_max_price": -1},
    "custom_tags": {"workload": "inference", "cost_center": "ai-team"},
}


def test_api_example_is_rejected(judge_export) -> None:
    violations = judge_export(API_EXAMPLE)
    by_policy = {v.policy: v for v in violations}
    assert CLOUD in by_policy and BOUNDS in by_policy
    assert "sets azure_attributes but node type g5.2xlarge belongs to AWS" in by_policy[CLOUD].message
    assert "both num_workers (2) and autoscale are set" in by_policy[BOUNDS].message
    assert all(v.urn == "cluster:inference-gpu-cluster" for v in violations)
    assert all(v.resource_name == "inference-gpu-cluster" for v in violations)
    # 14.3 LTS ends 2027-02-01: the runtime rule's warning, a year before (issue 52), is the one advisory finding
    assert {v.enforcement for v in violations if v.policy != "databricks-cluster-require-supported-runtime"} == {
        "mandatory"}
    # also: first_on_demand defaults to 1 below the base of 3; an inference cluster may never stop (no AUTOTERM)
    assert SPOT in by_policy and AUTOTERM not in by_policy
