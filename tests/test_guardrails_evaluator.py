"""The offline cluster-policy evaluator: limitation types, absent attributes, paths, virtual attributes, validation."""

from __future__ import annotations

import json

import pytest

from dbx_ai_infra import guardrails
from dbx_ai_infra.guardrails import DefinitionError, ElementViolation, PolicyResult, evaluate, parse_definition


def _paths(result: PolicyResult) -> list[str]:
    return [v.path for v in result.violations]


def _limits(result: PolicyResult) -> list[tuple[str, str]]:
    return [(v.path, v.limit) for v in result.violations]


# --- the public surface -----------------------------------------------------------------------------------------


def test_package_exports_the_api():
    for name in ("DefinitionError", "ElementViolation", "PolicyResult", "evaluate",
                 "parse_definition"):
        assert hasattr(guardrails, name)
    assert issubclass(DefinitionError, ValueError)


def test_result_types_are_frozen_and_allowed_means_no_violations():
    violation = ElementViolation("a", "fixed", 1, "msg")
    with pytest.raises(AttributeError):
        violation.path = "b"  # type: ignore[misc]
    assert PolicyResult((), ("dbus_per_hour not checked",)).allowed
    assert not PolicyResult((violation,), ()).allowed


# --- each limitation type, passing and failing -------------------------------------------------------------------

LIMIT_CASES = [
    # (element, present value, allowed?)
    ({"type": "fixed", "value": "PHOTON"}, "PHOTON", True),
    ({"type": "fixed", "value": "PHOTON"}, "STANDARD", False),
    ({"type": "fixed", "value": "PHOTON", "hidden": True}, "STANDARD", False),
    ({"type": "fixed", "value": True}, True, True),
    ({"type": "fixed", "value": True}, 1, False),
    ({"type": "fixed", "value": 1}, True, False),
    ({"type": "fixed", "value": "2"}, 2, False),
    ({"type": "fixed", "value": "photon"}, "PHOTON", False),
    ({"type": "forbidden"}, "pool-123", False),
    ({"type": "forbidden"}, 0, False),
    ({"type": "forbidden"}, False, False),
    ({"type": "allowlist", "values": ["a", "b"]}, "b", True),
    ({"type": "allowlist", "values": ["a", "b"]}, "c", False),
    ({"type": "allowlist", "values": [1, 2]}, 2.0, True),
    ({"type": "blocklist", "values": ["a", "b"]}, "c", True),
    ({"type": "blocklist", "values": ["a", "b"]}, "a", False),
    ({"type": "blocklist", "values": [4]}, 4.0, False),
    ({"type": "regex", "pattern": "g5\\..*"}, "g5.xlarge", True),
    ({"type": "regex", "pattern": "g5\\..*"}, "xg5.xlarge", False),  # anchored at the start
    ({"type": "regex", "pattern": "g5"}, "g5.xlarge", False),  # anchored at the end
    ({"type": "regex", "pattern": "[0-9]+"}, 15, False),  # not a string
    ({"type": "range", "minValue": 1, "maxValue": 10}, 1, True),  # bounds are inclusive
    ({"type": "range", "minValue": 1, "maxValue": 10}, 10, True),
    ({"type": "range", "minValue": 1, "maxValue": 10}, 5.5, True),
    ({"type": "range", "minValue": 1, "maxValue": 10}, 0, False),
    ({"type": "range", "minValue": 1, "maxValue": 10}, 11, False),
    ({"type": "range", "minValue": 1}, 1000, True),
    ({"type": "range", "maxValue": 10}, -5, True),
    ({"type": "range", "maxValue": 10}, "5", False),  # not a number
    ({"type": "range", "maxValue": 10}, True, False),  # booleans are not numbers
    ({"type": "unlimited"}, "anything", True),
    ({"type": "unlimited", "defaultValue": 60, "isOptional": True}, 0, True),
]


@pytest.mark.parametrize(("element", "value", "allowed"), LIMIT_CASES)
def test_limit_types_on_a_present_value(element, value, allowed):
    result = evaluate({"attr": element}, {"attr": value})
    assert result.allowed is allowed
    assert result.unchecked == ()
    if not allowed:
        (violation,) = result.violations
        assert violation.path == "attr"
        assert violation.limit == element["type"]
        assert violation.actual == value
        assert violation.message.startswith("attr ")
        assert violation.message.endswith(f"({element['type']})")


@pytest.mark.parametrize(("element", "value", "message"), [
    ({"type": "range", "maxValue": 10}, 20, "autoscale.max_workers is 20; the policy allows at most 10 (range)"),
    ({"type": "range", "minValue": 2}, 1, "autoscale.max_workers is 1; the policy requires at least 2 (range)"),
    ({"type": "fixed", "value": 4}, 8, "autoscale.max_workers is 8; the policy fixes it to 4 (fixed)"),
    ({"type": "forbidden"}, 8, "autoscale.max_workers is set to 8; the policy forbids setting it (forbidden)"),
    ({"type": "range", "minValue": 1, "maxValue": 10}, "8",
     'autoscale.max_workers is "8"; the policy requires a number from 1 to 10, not a string (range)'),
    ({"type": "allowlist", "values": [2, 4]}, 3,
     "autoscale.max_workers is 3; the policy allows only [2, 4] (allowlist)"),
    ({"type": "regex", "pattern": "[0-9]+"}, 8,
     'autoscale.max_workers is 8; the policy requires a string matching "[0-9]+" in full, not a number (regex)'),
])
def test_violation_messages(element, value, message):
    (violation,) = evaluate({"autoscale.max_workers": element}, {"autoscale": {"max_workers": value}}).violations
    assert violation.message == message


def test_isoptional_and_default_do_not_excuse_a_present_bad_value():
    element = {"type": "range", "maxValue": 10, "isOptional": True, "defaultValue": 5}
    assert _limits(evaluate({"n": element}, {"n": 50})) == [("n", "range")]


# --- numbers: 2 vs 2.0 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("policy_value", "cluster_value"), [(2, 2.0), (2.0, 2), (2, 2), (0.5, 0.5)])
def test_numbers_compare_numerically(policy_value, cluster_value):
    assert evaluate({"num_workers": {"type": "fixed", "value": policy_value}}, {"num_workers": cluster_value}).allowed


@pytest.mark.parametrize(("policy_value", "cluster_value"), [(2, 3), (2, "2"), (0, False), (1, True), (2, 2.5)])
def test_numbers_do_not_equal_other_numbers_strings_or_booleans(policy_value, cluster_value):
    result = evaluate({"num_workers": {"type": "fixed", "value": policy_value}}, {"num_workers": cluster_value})
    assert _limits(result) == [("num_workers", "fixed")]


# --- absent attributes -------------------------------------------------------------------------------------------

ABSENT_CASES = [
    # (element, expected limit or None when allowed)
    ({"type": "fixed", "value": "PHOTON"}, None),  # Databricks fills the value in
    ({"type": "fixed", "value": "PHOTON", "hidden": True}, None),
    ({"type": "forbidden"}, None),
    ({"type": "unlimited"}, None),
    ({"type": "allowlist", "values": ["a"]}, "required"),
    ({"type": "blocklist", "values": ["a"]}, "required"),
    ({"type": "regex", "pattern": "a.*"}, "required"),
    ({"type": "range", "minValue": 1}, "required"),
    ({"type": "allowlist", "values": ["a"], "isOptional": True}, None),
    ({"type": "range", "maxValue": 5, "isOptional": True}, None),
    ({"type": "regex", "pattern": "a.*", "isOptional": False}, "required"),
    # a defaultValue is what the cluster gets, so it is checked against the limit
    ({"type": "allowlist", "values": ["a", "b"], "defaultValue": "a"}, None),
    ({"type": "allowlist", "values": ["a", "b"], "defaultValue": "z"}, "allowlist"),
    ({"type": "blocklist", "values": ["a"], "defaultValue": "a"}, "blocklist"),
    ({"type": "blocklist", "values": ["a"], "defaultValue": "b"}, None),
    ({"type": "regex", "pattern": "a.*", "defaultValue": "abc"}, None),
    ({"type": "regex", "pattern": "a.*", "defaultValue": "xyz"}, "regex"),
    ({"type": "range", "maxValue": 120, "defaultValue": 60}, None),
    ({"type": "range", "maxValue": 120, "defaultValue": 4320}, "range"),
    ({"type": "range", "maxValue": 120, "defaultValue": "60"}, "range"),
    # the default is checked even when the element is also optional
    ({"type": "range", "maxValue": 120, "defaultValue": 4320, "isOptional": True}, "range"),
    ({"type": "unlimited", "defaultValue": 4320, "isOptional": True}, None),
]


@pytest.mark.parametrize(("element", "limit"), ABSENT_CASES)
@pytest.mark.parametrize("cluster", [{}, {"autotermination_minutes": None}], ids=["missing", "null"])
def test_absent_attribute(element, limit, cluster):
    result = evaluate({"autotermination_minutes": element}, cluster)
    if limit is None:
        assert result.allowed
    else:
        (violation,) = result.violations
        assert (violation.path, violation.limit, violation.actual) == ("autotermination_minutes", limit, None)
        assert "autotermination_minutes is not set" in violation.message
        if limit == "required":
            assert "requires it" in violation.message
        else:
            assert "defaultValue" in violation.message


def test_absent_nested_attribute_is_required():
    definition = {"aws_attributes.first_on_demand": {"type": "range", "minValue": 1}}
    for cluster in ({}, {"aws_attributes": {}}, {"aws_attributes": {"availability": "SPOT"}}):
        assert _limits(evaluate(definition, cluster)) == [("aws_attributes.first_on_demand", "required")]
    assert evaluate(definition, {"aws_attributes": {"first_on_demand": 1}}).allowed


# --- forbidden on a parent ---------------------------------------------------------------------------------------

FORBIDDEN_PARENT_CASES = [
    ({"autoscale": {"min_workers": 1, "max_workers": 4}}, True),
    ({"autoscale": {"max_workers": 4}}, True),
    ({"autoscale": {}}, False),  # sets nothing
    ({"autoscale": {"min_workers": None}}, False),
    ({"num_workers": 4}, False),
]


@pytest.mark.parametrize(("cluster", "violated"), FORBIDDEN_PARENT_CASES)
def test_forbidden_on_a_parent_catches_values_below_it(cluster, violated):
    result = evaluate({"autoscale": {"type": "forbidden"}}, cluster)
    assert _limits(result) == ([("autoscale", "forbidden")] if violated else [])
    if violated:
        assert result.violations[0].actual == cluster["autoscale"]


def test_forbidden_autoscale_written_as_both_children():
    definition = {"autoscale.min_workers": {"type": "forbidden", "hidden": True},
                  "autoscale.max_workers": {"type": "forbidden", "hidden": True}}
    result = evaluate(definition, {"autoscale": {"min_workers": 1, "max_workers": 4}})
    assert _limits(result) == [("autoscale.min_workers", "forbidden"), ("autoscale.max_workers", "forbidden")]
    assert evaluate(definition, {"num_workers": 2}).allowed


def test_forbidden_list_attribute():
    definition = {"init_scripts": {"type": "forbidden"}}
    assert _paths(evaluate(definition, {"init_scripts": [{"volumes": {"destination": "/Volumes/x"}}]})) == [
        "init_scripts"]
    assert evaluate(definition, {"init_scripts": []}).allowed


# --- list paths: `*` and a numbered index ------------------------------------------------------------------------

VOLUMES_ONLY = {"init_scripts.*.volumes.destination": {"type": "regex", "pattern": "/Volumes/main/ops/.*"}}

WILDCARD_CASES = [
    # (init_scripts, violating concrete paths)
    ([{"volumes": {"destination": "/Volumes/main/ops/a.sh"}}], []),
    ([{"volumes": {"destination": "/Volumes/main/ops/a.sh"}},
      {"volumes": {"destination": "/Volumes/main/ops/b.sh"}}], []),
    ([{"volumes": {"destination": "/Volumes/main/ops/a.sh"}},
      {"volumes": {"destination": "/Volumes/other/x.sh"}}], ["init_scripts.1.volumes.destination"]),
    ([{"volumes": {"destination": "/tmp/a.sh"}},
      {"volumes": {"destination": "/tmp/b.sh"}}], ["init_scripts.0.volumes.destination",
                                                   "init_scripts.1.volumes.destination"]),
    # an item without the attribute is not checked by this element
    ([{"workspace": {"destination": "/Shared/x.sh"}},
      {"volumes": {"destination": "/Volumes/main/ops/a.sh"}}], []),
]


@pytest.mark.parametrize(("scripts", "violating"), WILDCARD_CASES)
def test_wildcard_path_checks_every_item(scripts, violating):
    result = evaluate(VOLUMES_ONLY, {"init_scripts": scripts})
    assert _paths(result) == ["init_scripts.*.volumes.destination"] * len(violating)
    for violation, where in zip(result.violations, violating, strict=True):
        assert violation.limit == "regex"
        assert violation.message.startswith(f"{where} is ")


@pytest.mark.parametrize(("element", "limit"), [
    ({"type": "regex", "pattern": "/Volumes/.*"}, "required"),
    ({"type": "regex", "pattern": "/Volumes/.*", "isOptional": True}, None),
    ({"type": "regex", "pattern": "/Volumes/.*", "defaultValue": "/Volumes/main/ops/a.sh"}, None),
    ({"type": "regex", "pattern": "/Volumes/.*", "defaultValue": "/tmp/a.sh"}, "regex"),
    ({"type": "forbidden"}, None),
    ({"type": "fixed", "value": "/Volumes/main/ops/a.sh"}, None),
])
@pytest.mark.parametrize("cluster", [{}, {"init_scripts": []},
                                     {"init_scripts": [{"workspace": {"destination": "/Shared/x.sh"}}]}],
                         ids=["no-list", "empty-list", "no-item-has-it"])
def test_wildcard_path_with_no_items(element, limit, cluster):
    result = evaluate({"init_scripts.*.volumes.destination": element}, cluster)
    assert _limits(result) == ([] if limit is None else [("init_scripts.*.volumes.destination", limit)])


def test_forbidden_wildcard_path_reports_each_item():
    definition = {"init_scripts.*.dbfs.destination": {"type": "forbidden"}}
    cluster = {"init_scripts": [{"dbfs": {"destination": "dbfs:/a"}}, {"volumes": {"destination": "/Volumes/a"}},
                                {"dbfs": {"destination": "dbfs:/b"}}]}
    result = evaluate(definition, cluster)
    assert [v.actual for v in result.violations] == ["dbfs:/a", "dbfs:/b"]
    assert all(v.limit == "forbidden" for v in result.violations)


NUMBERED_INDEX = {"init_scripts.0.workspace.destination": {"type": "fixed", "value": "/Shared/bootstrap.sh"}}


@pytest.mark.parametrize(("scripts", "allowed"), [
    ([{"workspace": {"destination": "/Shared/bootstrap.sh"}}], True),
    ([{"workspace": {"destination": "/Shared/bootstrap.sh"}}, {"workspace": {"destination": "/Shared/other.sh"}}],
     True),  # only index 0 is limited
    ([{"workspace": {"destination": "/Shared/other.sh"}}, {"workspace": {"destination": "/Shared/bootstrap.sh"}}],
     False),
    ([], True),  # fixed and absent: Databricks fills it in
])
def test_numbered_index_path(scripts, allowed):
    result = evaluate(NUMBERED_INDEX, {"init_scripts": scripts})
    assert result.allowed is allowed
    if not allowed:
        assert _limits(result) == [("init_scripts.0.workspace.destination", "fixed")]


def test_numbered_index_past_the_end_is_absent():
    definition = {"ssh_public_keys.1": {"type": "allowlist", "values": ["ssh-ed25519 AAAA"]}}
    assert _limits(evaluate(definition, {"ssh_public_keys": ["ssh-ed25519 AAAA"]})) == [
        ("ssh_public_keys.1", "required")]


# --- map-typed attributes: keys with dots ------------------------------------------------------------------------

SPARK_CONF_CASES = [
    ({"spark.databricks.cluster.profile": "singleNode"}, True),
    ({"spark.databricks.cluster.profile": "serverless"}, False),
    ({"spark": {"databricks": {"cluster": {"profile": "singleNode"}}}}, None),  # nested is not the dotted key
    ({}, None),
]


@pytest.mark.parametrize(("spark_conf", "allowed"), SPARK_CONF_CASES)
def test_spark_conf_keys_with_dots(spark_conf, allowed):
    definition = {"spark_conf.spark.databricks.cluster.profile": {"type": "allowlist", "values": ["singleNode"]}}
    result = evaluate(definition, {"spark_conf": spark_conf})
    if allowed is None:  # the key is not there: required
        assert _limits(result) == [("spark_conf.spark.databricks.cluster.profile", "required")]
    else:
        assert result.allowed is allowed


@pytest.mark.parametrize(("path", "cluster", "allowed"), [
    ("custom_tags.cost_center", {"custom_tags": {"cost_center": "ml"}}, True),
    ("custom_tags.cost_center", {"custom_tags": {"cost_center": "web"}}, False),
    ("custom_tags.team.name", {"custom_tags": {"team.name": "ml"}}, True),
    ("spark_env_vars.PYSPARK.PYTHON", {"spark_env_vars": {"PYSPARK.PYTHON": "ml"}}, True),
    ("spark_env_vars.PYSPARK.PYTHON", {"spark_env_vars": {"PYSPARK.PYTHON": "py"}}, False),
    ("custom_tags.*", {"custom_tags": {"cost_center": "ml"}}, True),  # `*` is a literal key here: absent
])
def test_map_attribute_key_is_the_rest_of_the_path(path, cluster, allowed):
    assert evaluate({path: {"type": "fixed", "value": "ml"}}, cluster).allowed is allowed


def test_forbidden_map_key():
    definition = {"spark_conf.spark.databricks.repl.allowedLanguages": {"type": "forbidden"}}
    assert not evaluate(definition, {"spark_conf": {"spark.databricks.repl.allowedLanguages": "python"}}).allowed
    assert evaluate(definition, {"spark_conf": {"spark.databricks.repl": "x"}}).allowed


# --- virtual attributes: cluster_type ----------------------------------------------------------------------------

CLUSTER_TYPE_CASES = [
    ({"type": "fixed", "value": "job"}, "job", True),
    ({"type": "fixed", "value": "job"}, "all-purpose", False),
    ({"type": "allowlist", "values": ["all-purpose", "dlt"]}, "dlt", True),
    ({"type": "allowlist", "values": ["all-purpose", "dlt"]}, "job", False),
    ({"type": "blocklist", "values": ["dlt"]}, "all-purpose", True),
    ({"type": "blocklist", "values": ["dlt"]}, "dlt", False),
]


@pytest.mark.parametrize(("element", "cluster_type", "allowed"), CLUSTER_TYPE_CASES)
def test_cluster_type(element, cluster_type, allowed):
    result = evaluate({"cluster_type": element}, {}, cluster_type=cluster_type)
    assert result.allowed is allowed
    if not allowed:
        (violation,) = result.violations
        assert (violation.path, violation.limit, violation.actual) == ("cluster_type", element["type"], cluster_type)


def test_cluster_type_defaults_to_all_purpose_and_ignores_the_cluster_dict():
    definition = {"cluster_type": {"type": "fixed", "value": "job"}}
    assert not evaluate(definition, {"cluster_type": "job"}).allowed
    assert evaluate({"cluster_type": {"type": "fixed", "value": "all-purpose"}}, {}).allowed


def test_unknown_cluster_type_argument():
    with pytest.raises(ValueError, match="cluster_type"):
        evaluate({}, {}, cluster_type="jobs")


# --- virtual attributes: dbus_per_hour ---------------------------------------------------------------------------


def test_dbus_per_hour_unchecked_when_not_supplied():
    result = evaluate({"dbus_per_hour": {"type": "range", "maxValue": 10}}, {"num_workers": 2})
    assert result.allowed
    assert result.violations == ()
    (line,) = result.unchecked
    assert line.startswith("dbus_per_hour")
    assert "not checked" in line


def test_dbus_per_hour_unlimited_is_not_reported_as_unchecked():
    assert evaluate({"dbus_per_hour": {"type": "unlimited"}}, {}).unchecked == ()


def test_no_dbus_element_nothing_unchecked():
    assert evaluate({"num_workers": {"type": "range", "maxValue": 4}}, {"num_workers": 2}).unchecked == ()


@pytest.mark.parametrize(("dbus", "allowed"), [(9.5, True), (10, True), (10.0, True), (10.01, False), (0.0, True)])
def test_dbus_per_hour_checked_when_supplied(dbus, allowed):
    result = evaluate({"dbus_per_hour": {"type": "range", "maxValue": 10}}, {}, dbus_per_hour=dbus)
    assert result.allowed is allowed
    assert result.unchecked == ()
    if not allowed:
        (violation,) = result.violations
        assert (violation.path, violation.limit, violation.actual) == ("dbus_per_hour", "range", dbus)
        assert violation.message == "dbus_per_hour is 10.01; the policy allows at most 10 (range)"


def test_dbus_per_hour_must_be_a_number():
    with pytest.raises(TypeError):
        evaluate({}, {}, dbus_per_hour="10")  # type: ignore[arg-type]


# --- definition parsing and validation ---------------------------------------------------------------------------


def test_parse_definition_accepts_text_and_dict_and_returns_a_copy():
    definition = {"spark_version": {"type": "regex", "pattern": ".*-ml-.*"},
                  "node_type_id": {"type": "allowlist", "values": ["g5.xlarge"], "defaultValue": "g5.xlarge"}}
    from_text = parse_definition(json.dumps(definition))
    from_dict = parse_definition(definition)
    assert from_text == from_dict == definition
    from_dict["node_type_id"]["values"].append("p4d.24xlarge")
    assert definition["node_type_id"]["values"] == ["g5.xlarge"]
    assert parse_definition("{}") == {}


def test_evaluate_accepts_json_text():
    text = json.dumps({"num_workers": {"type": "range", "maxValue": 4}})
    assert _paths(evaluate(text, {"num_workers": 8})) == ["num_workers"]


DEFINITION_ERRORS = [
    # (definition, words the message must contain)
    ("{not json", ["not valid JSON"]),
    ("[1, 2]", ["not a JSON object"]),
    ('"fixed"', ["not a JSON object"]),
    ('{"num_workers": {"type": "fixed", "value": 1}, "num_workers": {"type": "forbidden"}}',
     ["'num_workers'", "more than once"]),
    ({"": {"type": "forbidden"}}, ["non-empty"]),
    ({"autoscale..max_workers": {"type": "forbidden"}}, ["'autoscale..max_workers'", "empty segment"]),
    ({"custom_tags.": {"type": "forbidden"}}, ["'custom_tags.'", "empty segment"]),
    ({"num_workers": "fixed"}, ["'num_workers'", "not an object"]),
    ({"num_workers": ["fixed", 2]}, ["'num_workers'", "not an object"]),
    ({"num_workers": None}, ["'num_workers'", "not an object"]),
    ({"num_workers": {"value": 2}}, ["'num_workers'", "no 'type'", "fixed"]),
    ({"num_workers": {"type": "exact", "value": 2}}, ["'num_workers'", "unknown type", "allowlist"]),
    ({"num_workers": {"type": "Fixed", "value": 2}}, ["'num_workers'", "unknown type"]),
    ({"num_workers": {"type": "fixed"}}, ["'num_workers'", "no 'value'"]),
    ({"node_type_id": {"type": "allowlist"}}, ["'node_type_id'", "no 'values'"]),
    ({"node_type_id": {"type": "blocklist"}}, ["'node_type_id'", "no 'values'"]),
    ({"node_type_id": {"type": "allowlist", "values": "g5.xlarge"}}, ["'node_type_id'", "not a list"]),
    ({"node_type_id": {"type": "allowlist", "values": []}}, ["'node_type_id'", "empty", "forbidden"]),
    ({"node_type_id": {"type": "blocklist", "values": []}}, ["'node_type_id'", "empty", "unlimited"]),
    ({"spark_version": {"type": "regex"}}, ["'spark_version'", "no 'pattern'"]),
    ({"spark_version": {"type": "regex", "pattern": 15}}, ["'spark_version'", "not a string"]),
    ({"spark_version": {"type": "regex", "pattern": "([a-z"}}, ["'spark_version'", "not a valid regular"]),
    ({"num_workers": {"type": "range"}}, ["'num_workers'", "neither 'minValue' nor 'maxValue'"]),
    ({"num_workers": {"type": "range", "isOptional": True}}, ["'num_workers'", "neither"]),
    ({"num_workers": {"type": "range", "maxValue": "10"}}, ["'num_workers'", "'maxValue'", "not a number"]),
    ({"num_workers": {"type": "range", "minValue": True}}, ["'num_workers'", "'minValue'", "not a number"]),
    ({"num_workers": {"type": "range", "minValue": 5, "maxValue": 1}}, ["'num_workers'", "greater than"]),
    ({"num_workers": {"type": "range", "maxValue": 10, "isOptional": "yes"}}, ["'num_workers'", "'isOptional'"]),
    ({"runtime_engine": {"type": "fixed", "value": "PHOTON", "hidden": 1}}, ["'runtime_engine'", "'hidden'"]),
    ({"num_workers": {"type": "range", "maxValue": 10, "isoptional": True}}, ["'num_workers'", "'isoptional'"]),
    ({"num_workers": {"type": "fixed", "values": [2]}}, ["'num_workers'", "'values'"]),
    ({"cluster_type": {"type": "fixed", "value": "jobs"}}, ["'cluster_type'", "all-purpose"]),
    ({"cluster_type": {"type": "allowlist", "values": ["job", "interactive"]}}, ["'cluster_type'", "interactive"]),
]


@pytest.mark.parametrize(("definition", "words"), DEFINITION_ERRORS)
def test_definition_errors(definition, words):
    with pytest.raises(DefinitionError) as caught:
        parse_definition(definition)
    for word in words:
        assert word in str(caught.value)
    # evaluate validates too
    with pytest.raises(DefinitionError):
        evaluate(definition, {})


def test_definition_error_is_a_value_error():
    with pytest.raises(ValueError):
        parse_definition({"x": {"type": "nope"}})


def test_bad_default_is_not_a_definition_error():
    definition = {"node_type_id": {"type": "allowlist", "values": ["g5.xlarge"], "defaultValue": "p3.2xlarge"}}
    assert parse_definition(definition) == definition


# --- a realistic GPU ML policy -----------------------------------------------------------------------------------

GPU_POLICY = {
    "autoscale.min_workers": {"type": "forbidden", "hidden": True},
    "autoscale.max_workers": {"type": "forbidden", "hidden": True},
    "aws_attributes.availability": {"type": "fixed", "value": "SPOT_WITH_FALLBACK", "hidden": True},
    "aws_attributes.first_on_demand": {"type": "range", "minValue": 1},
    "node_type_id": {"type": "allowlist", "values": ["g5.xlarge", "g5.2xlarge"], "defaultValue": "g5.xlarge"},
    "driver_node_type_id": {"type": "allowlist", "values": ["g5.xlarge", "g5.2xlarge"], "isOptional": True},
    "spark_version": {"type": "regex", "pattern": ".*-gpu-ml-.*"},
    "custom_tags.cost_center": {"type": "fixed", "value": "ml-platform"},
    "azure_attributes.availability": {"type": "forbidden", "hidden": True},
    "gcp_attributes.availability": {"type": "forbidden", "hidden": True},
    "dbus_per_hour": {"type": "range", "maxValue": 50},
}

COMPLIANT_GPU_CLUSTER = {
    "cluster_name": "dev-inference",
    "spark_version": "17.3.x-gpu-ml-scala2.13",
    "node_type_id": "g5.2xlarge",
    "driver_node_type_id": "g5.xlarge",
    "num_workers": 2,
    "aws_attributes": {"availability": "SPOT_WITH_FALLBACK", "first_on_demand": 1},
    "custom_tags": {"cost_center": "ml-platform", "workload_type": "inference"},
}


def test_realistic_policy_compliant_cluster():
    result = evaluate(json.dumps(GPU_POLICY), COMPLIANT_GPU_CLUSTER, dbus_per_hour=12.5)
    assert result.allowed, result.violations
    assert result.unchecked == ()


def test_realistic_policy_reports_exactly_the_broken_elements():
    cluster = {
        "cluster_name": "dev-inference",
        "spark_version": "17.3.x-gpu-ml-scala2.13",  # fine
        "node_type_id": "p3.2xlarge",  # not on the allowlist
        "autoscale": {"min_workers": 1, "max_workers": 8},  # both forbidden
        "aws_attributes": {"availability": "ON_DEMAND"},  # wrong fixed value; first_on_demand missing
        "gcp_attributes": {"availability": "PREEMPTIBLE_GCP"},  # forbidden
        "custom_tags": {"cost_center": "ml-platform"},  # fine
    }
    result = evaluate(GPU_POLICY, cluster)
    assert _limits(result) == [
        ("autoscale.min_workers", "forbidden"),
        ("autoscale.max_workers", "forbidden"),
        ("aws_attributes.availability", "fixed"),
        ("aws_attributes.first_on_demand", "required"),
        ("node_type_id", "allowlist"),
        ("gcp_attributes.availability", "forbidden"),
    ]
    assert [v.actual for v in result.violations] == [1, 8, "ON_DEMAND", None, "p3.2xlarge", "PREEMPTIBLE_GCP"]
    assert not result.allowed
    (line,) = result.unchecked
    assert line.startswith("dbus_per_hour not checked")


def test_realistic_policy_other_breaks():
    cluster = dict(COMPLIANT_GPU_CLUSTER, spark_version="17.3.x-scala2.13", custom_tags={"cost_center": "web"},
                   azure_attributes={"availability": "SPOT_AZURE"})
    cluster.pop("node_type_id")  # absent: gets the defaultValue g5.xlarge, which is allowed
    result = evaluate(GPU_POLICY, cluster, dbus_per_hour=80.0)
    assert _limits(result) == [
        ("spark_version", "regex"),
        ("custom_tags.cost_center", "fixed"),
        ("azure_attributes.availability", "forbidden"),
        ("dbus_per_hour", "range"),
    ]
