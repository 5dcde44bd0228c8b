"""Policy config, evaluate_resource / evaluate_plan, and an export judged as ``check --cluster-json`` judges it."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from pydantic import Field

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Plan, Violation
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER
from dbx_ai_infra.policies.config import validate_threshold
from dbx_ai_infra.policies.registry import (
    ALL_RULES,
    DEFAULT_CONFIG,
    PolicyConfig,
    evaluate_plan,
    evaluate_resource,
    load_policy_config,
)
from dbx_ai_infra.policies.rule import Rule, Thresholds
from dbx_ai_infra.sources.audit import audit_export_path
from tests.test_policies_rules import SINGLE_NODE

BOUNDS = "databricks-cluster-configure-worker-bounds"
AUTOTERM = "databricks-cluster-require-autotermination"
TAGS = "databricks-resource-require-tags"

GOOD_API = {"cluster_id": "0101-abc", **SINGLE_NODE}  # the compliant single-node cluster of the rule tests
BAD_API = {**GOOD_API, "cluster_id": "0202-def", "cluster_name": "big", "num_workers": 100,
           "spark_conf": {}, "custom_tags": {"workload": "interactive", "cost_center": "ai"}}


def test_default_config() -> None:
    assert dict(DEFAULT_CONFIG) == {"max_workers_cap": 64, "max_autotermination_minutes": 120,
                                    "max_single_node_shuffle_partitions": 16, "min_interconnect_gbps": 200,
                                    "min_training_nodes": 2, "production_stacks": ("prod", "azure-prod"), "as_of": "",
                                    "max_lifetime_seconds": None, "min_model_units": 1}


def test_load_policy_config_dict_and_file(tmp_path) -> None:
    raw = {BOUNDS: {"enforcementLevel": "advisory", "max_workers_cap": 100}, TAGS: "disabled"}
    cfg = load_policy_config(raw)
    rules = {r.name: r for r in ALL_RULES}
    assert cfg.level(rules[BOUNDS]) == "advisory" and cfg.level(rules[TAGS]) == "disabled"
    assert cfg.level(rules[AUTOTERM]) == "mandatory"
    assert cfg.thresholds_for(rules[BOUNDS]) == {"max_workers_cap": 100}
    assert cfg.thresholds_for(rules[AUTOTERM]) == {"max_autotermination_minutes": 120}
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps(raw))
    assert load_policy_config(path) == cfg and load_policy_config(str(path)) == cfg
    yaml_path = tmp_path / "policy-config.yaml"
    yaml_path.write_text(f"{BOUNDS}:\n  enforcementLevel: advisory\n  max_workers_cap: 100\n{TAGS}: disabled\n")
    assert load_policy_config(yaml_path) == cfg
    assert load_policy_config(None) == PolicyConfig() and load_policy_config(cfg) is cfg
    everything = load_policy_config({"all": "advisory", TAGS: {"enforcementLevel": "mandatory"}})
    assert {everything.level(r) for r in ALL_RULES if r.name != TAGS} == {"advisory"}
    assert everything.level(rules[TAGS]) == "mandatory"


@pytest.mark.parametrize("raw,named", [
    ({"databricks-no-such-rule": {"enforcementLevel": "advisory"}}, "databricks-no-such-rule"),
    ({BOUNDS: {"max_wrkers_cap": 3}}, "max_wrkers_cap"),
    ({AUTOTERM: {"max_workers_cap": 3}}, "max_workers_cap"),
    ({BOUNDS: {"enforcementLevel": "remediate"}}, "remediate"),
    ({BOUNDS: "off"}, "off"),
    ({BOUNDS: {"max_workers_cap": "many"}}, "many"),
    ({BOUNDS: {"max_workers_cap": 2.5}}, "2.5"),
    ({BOUNDS: {"max_workers_cap": 0}}, "at least 1"),
    ({BOUNDS: {"max_workers_cap": True}}, "True"),
    ({BOUNDS: 5}, BOUNDS),
    ([1, 2], "list"),
])
def test_load_policy_config_rejects(raw, named: str) -> None:
    with pytest.raises(ValueError, match=named.replace(".", r"\.")):
        load_policy_config(raw)


def test_load_policy_config_bad_files(tmp_path) -> None:
    with pytest.raises(InputError, match="policy config not found"):
        load_policy_config(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_policy_config(bad)


def test_evaluate_resource_levels_and_thresholds() -> None:
    props = {"numWorkers": 100.0, "sparkVersion": "17.3.x-scala2.13", "nodeTypeId": "i3.xlarge",
             "customTags": {"workload": "x", "cost_center": "y"}}
    violations = evaluate_resource(CLUSTER, props, urn="urn:c", name="c")
    assert [v.policy for v in violations] == [BOUNDS]
    assert violations[0] == Violation(policy=BOUNDS, enforcement="mandatory", urn="urn:c", resource_name="c",
                                      message=violations[0].message)
    assert evaluate_resource(CLUSTER, props, urn="u", name="c", config={BOUNDS: {"max_workers_cap": 100}}) == []
    downgraded = evaluate_resource(CLUSTER, props, urn="u", name="c", config={BOUNDS: "advisory"})
    assert [v.enforcement for v in downgraded] == ["advisory"] and not any(v.mandatory for v in downgraded)
    assert evaluate_resource(CLUSTER, props, urn="u", name="c", config={BOUNDS: "disabled"}) == []
    assert evaluate_resource("databricks:index/notebook:Notebook", props, urn="u", name="n") == []


def test_evaluate_plan() -> None:
    plan = {
        "stack": "dev",
        "resources": [
            {"urn": "urn:a", "type": CLUSTER, "name": "a", "inputs": {"numWorkers": 100.0, "customTags": {"workload": "x", "cost_center": "y"}}},
            {"urn": "urn:s", "type": "pulumi:providers:databricks", "name": "default", "inputs": {}},
            {"urn": "urn:b", "type": CLUSTER, "name": "b", "inputs": {"numWorkers": 2.0}},
        ],
    }
    plan["cloud"] = "aws"
    every = evaluate_plan(plan)
    # the plan has no Permissions: neither cluster says who may use it (advisory, judged with the plan)
    assert {v.urn for v in every if v.policy == "databricks-resource-require-access-control"} == {"urn:a", "urn:b"}
    violations = [v for v in every if v.policy != "databricks-resource-require-access-control"]
    assert [(v.urn, v.policy) for v in violations] == [("urn:a", BOUNDS), ("urn:b", TAGS)]
    assert set(violations[0].to_json()) == {"policy", "enforcement", "urn", "resource_name", "message"}
    assert violations[1].resource_name == "b"
    assert Plan.from_json({**plan, "project": "p", "violations": [v.to_json() for v in violations]}).has_mandatory
    assert evaluate_plan({"resources": [], "cloud": "aws"}) == []
    with pytest.raises(InputError, match="resources"):
        evaluate_plan({"stack": "dev", "cloud": "aws"})
    with pytest.raises(InputError, match=r"resources\[0\]"):
        evaluate_plan({"resources": [{"urn": "x"}], "cloud": "aws"})


def test_an_export_in_every_shape_is_judged_alike(judge_export) -> None:
    single = judge_export(BAD_API)
    assert single and all(v.urn == "cluster:0202-def" and v.resource_name == "big" for v in single)
    assert judge_export(GOOD_API) == []
    listed = judge_export([GOOD_API, BAD_API])
    assert listed == single
    wrapped = judge_export({"clusters": [GOOD_API, BAD_API]})
    assert wrapped == single
    assert judge_export({"clusters": []}) == [] and judge_export([]) == []
    nameless = {k: v for k, v in BAD_API.items() if k not in ("cluster_id", "cluster_name")}
    by_index = judge_export([GOOD_API, nameless])
    assert {v.urn for v in by_index} == {"cluster:1"} and {v.resource_name for v in by_index} == {"cluster[1]"}
    only_name = {k: v for k, v in BAD_API.items() if k != "cluster_id"}
    assert {v.urn for v in judge_export(only_name)} == {"cluster:big"}


def test_an_exports_cluster_objects_are_those_it_lists(tmp_path) -> None:
    """The cluster objects ``--cluster-policy`` judges: those of a cluster, a list or a clusters/list response."""
    def clusters(obj):
        path = tmp_path / "export.json"
        path.write_text(json.dumps(obj), encoding="utf-8")
        return audit_export_path(str(path), None, clusters=True).clusters

    assert clusters(GOOD_API) == [GOOD_API]
    assert clusters([GOOD_API, BAD_API]) == clusters({"clusters": [GOOD_API, BAD_API]}) == [GOOD_API, BAD_API]
    assert clusters({"jobs": []}) == []  # a job list is an export too (jobs hold job clusters)
    with pytest.raises(InputError):
        clusters({"foo": []})


def test_an_export_is_judged_with_the_policy_config(judge_export) -> None:
    assert [v for v in judge_export(BAD_API) if v.policy == BOUNDS]
    assert not [v for v in judge_export(BAD_API, {BOUNDS: {"max_workers_cap": 128}}) if v.policy == BOUNDS]


@pytest.mark.parametrize("obj,fragment", [
    ({"foo": [{"job_id": 1}]}, "does not look like a Databricks cluster"),
    ({"clusters": {"a": 1}}, "clusters: must be a list"),
    ({"clusters": [GOOD_API, "x"]}, r"clusters\[1\]: is a str"),
    ([GOOD_API, {"job_id": 3}], r"\[1\]: does not look like"),
    ("cluster", "got str"),
    (42, "got int"),
])
def test_an_export_of_no_databricks_objects_is_refused(judge_export, obj, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        judge_export(obj)
    assert issubclass(InputError, ValueError)


def test_thresholds_are_typed_per_rule_and_declared_once() -> None:
    """Every shipped rule with thresholds declares them as a typed `Thresholds` model; its defaults and JSON schema
    are read from the model, a bound only the model states is enforced, and a rule cannot declare them twice."""
    with_thresholds = [rule for rule in ALL_RULES if rule.thresholds]
    assert len(with_thresholds) >= 6
    for rule in with_thresholds:
        assert rule.settings is not None and issubclass(rule.settings, Thresholds), rule.name
        assert dict(rule.thresholds) == rule.settings().model_dump(), rule.name
        assert set(rule.threshold_schema) == set(rule.thresholds), rule.name

    class Bounded(Thresholds):
        ceiling: Annotated[int, Field(ge=1, le=100, description="A cap.")] = 10

    rule = Rule(name="team-bounded", description="d", enforcement="advisory", resource_types=(CLUSTER,),
                check=lambda view, config: [], remediation="r", settings=Bounded)
    assert rule.thresholds == {"ceiling": 10}
    assert rule.threshold_schema == {"ceiling": {"type": "integer", "minimum": 1, "description": "A cap."}}
    assert validate_threshold(rule, "ceiling", 100) == 100
    with pytest.raises(InputError, match=r"team-bounded\.ceiling.*less than or equal to 100, got 101"):
        validate_threshold(rule, "ceiling", 101)
    with pytest.raises(InputError, match="must be at least 1"):
        validate_threshold(rule, "ceiling", 0)
    with pytest.raises(ValueError, match="declare thresholds once"):
        Rule(name="team-twice", description="d", enforcement="advisory", resource_types=(CLUSTER,),
             check=lambda view, config: [], remediation="r", settings=Bounded, thresholds={"ceiling": 5})


def test_a_check_reads_its_thresholds_typed_from_its_settings() -> None:
    """Issue 56, item 5: thresholds are typed in one place. A check receives its rule's `Thresholds` model holding the
    policy config's values, converted to the declared types (a JSON list to a tuple), one instance for all the views
    of an evaluation; a check written against a mapping (a team rule's ``config["key"]``) reads the same values."""
    from dbx_ai_infra.policies.registry import messages_for_views, views_of

    class Limits(Thresholds):
        stacks: Annotated[tuple[str, ...], Field(description="Stacks.")] = ("prod",)
        ceiling: Annotated[int, Field(ge=1, description="A cap.")] = 10

    seen: list[object] = []

    def check(view, config) -> list[str]:
        seen.append(config)
        return [f"{config.ceiling} {config.stacks} {config['ceiling']} {config.get('stacks')} {config.get('x', '-')}. "
                "Fix: none."]

    rule = Rule(name="team-typed", description="d", enforcement="advisory", resource_types=(CLUSTER,), check=check,
                remediation="r", settings=Limits)
    views = [*views_of(CLUSTER, GOOD_API, "api"), *views_of(CLUSTER, BAD_API, "api")]
    assert messages_for_views(rule, views, {"ceiling": 5, "stacks": ["dev"]}) == [
        "5 ('dev',) 5 ('dev',) -. Fix: none.", "5 ('dev',) 5 ('dev',) -. Fix: none."]
    assert len(seen) == 2 and seen[0] is seen[1] and isinstance(seen[0], Limits)
    with pytest.raises(KeyError):
        Limits()["x"]
    assert messages_for_views(rule, views[:1], rule.thresholds) == ["10 ('prod',) 10 ('prod',) -. Fix: none."]


def test_a_rule_is_handed_only_the_views_it_takes() -> None:
    """Issue 56, item 5: a rule declares the kinds of view it takes; the evaluators hand it those alone (a job's
    cluster definitions to a rule of cluster definitions, the job's own view to a rule of resources), so a check
    needs no isinstance guard; a rule that declares none takes every kind."""
    from dbx_ai_infra.dbxtypes.shape import ClusterShape
    from dbx_ai_infra.dbxtypes.vocabulary import JOB
    from dbx_ai_infra.policies.registry import messages_for_views, views_of
    from dbx_ai_infra.policies.rule import ResourceView

    cluster = {"spark_version": "15.4.x-scala2.12", "node_type_id": "m5.xlarge", "num_workers": 1}
    job = {"name": "nightly", "job_clusters": [{"job_cluster_key": "main", "new_cluster": cluster}],
           "tasks": [{"task_key": "t", "job_cluster_key": "main", "notebook_task": {"notebook_path": "/n"}}]}
    views = views_of(JOB, job, "api")

    def named(view, config) -> list[str]:
        return [f"a {type(view).__name__}. Fix: none."]

    def rule(*takes) -> Rule:
        return Rule(name="team-kinds", description="d", enforcement="advisory", resource_types=(JOB,), check=named,
                    remediation="r", **({"takes": takes} if takes else {}))

    assert messages_for_views(rule(ClusterShape), views, {}) == ["job_clusters[main].new_cluster: a ClusterShape. Fix: none."]
    assert messages_for_views(rule(ResourceView), views, {}) == ["a ResourceView. Fix: none."]
    assert sorted(messages_for_views(rule(), views, {})) == [
        "a ResourceView. Fix: none.", "job_clusters[main].new_cluster: a ClusterShape. Fix: none."]
