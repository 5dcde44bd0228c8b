"""Auditing a workspace export (issue 15): Databricks' own export shapes, AI compute told apart from the rest.

The fixtures are written from the REST API reference (Clusters API clusters/get and clusters/list, Jobs API 2.1/2.2
jobs/get and jobs/list, Instance Pools API, Cluster Policies API), not copied from a workspace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.policies.items import summary
from dbx_ai_infra.sources.exports import export_items

ALL_SPOT = "databricks-cluster-disallow-all-spot-inference"
TRAINING = "databricks-cluster-disallow-autoscaled-or-spot-training"
TAGS = {"workload": "etl", "cost_center": "data"}
#: A serving cluster says so (autoscaling alone does not tell a role).
SERVING_TAGS = {"workload": "chat", "cost_center": "ml", "workload_type": "inference"}

#: A CPU ETL cluster as clusters/get returns it: autoscaled, spot workers, a CPU runtime.
ETL = {
    "cluster_id": "0101-etl", "cluster_name": "nightly-etl", "spark_version": "17.3.x-scala2.13",
    "node_type_id": "m5.xlarge", "driver_node_type_id": "m5.xlarge", "autoscale": {"min_workers": 2, "max_workers": 8},
    "autotermination_minutes": 60, "aws_attributes": {"availability": "SPOT", "first_on_demand": 0},
    "custom_tags": TAGS, "state": "TERMINATED", "cluster_source": "UI", "data_security_mode": "USER_ISOLATION",
}
#: A job as jobs/get returns it: a shared job cluster and a task cluster.
JOB = {
    "job_id": 11, "creator_user_name": "a@example.com", "created_time": 1700000000000,
    "settings": {
        "name": "fine-tune", "max_concurrent_runs": 1, "tags": TAGS,
        "job_clusters": [{"job_cluster_key": "train", "new_cluster": {
            "spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.12xlarge", "num_workers": 2,
            "aws_attributes": {"availability": "SPOT", "first_on_demand": 0}, "custom_tags": TAGS}}],
        "tasks": [
            {"task_key": "train", "job_cluster_key": "train", "spark_python_task": {"python_file": "/W/t.py"}},
            {"task_key": "report", "new_cluster": {"spark_version": "17.3.x-scala2.13", "node_type_id": "m5.large",
                                                   "num_workers": 1, "custom_tags": TAGS},
             "notebook_task": {"notebook_path": "/W/r"}},
        ],
    },
}
POOL = {"instance_pool_id": "0101-pool", "instance_pool_name": "gpu-pool", "node_type_id": "g5.xlarge",
        "min_idle_instances": 0, "idle_instance_autotermination_minutes": 20,
        "custom_tags": {**TAGS, "workload_type": "inference"},
        "aws_attributes": {"availability": "SPOT"}}
POLICY = {"policy_id": "ABC", "name": "gpu", "definition": json.dumps({"autotermination_minutes": {
    "type": "range", "maxValue": 120}})}


def _gpu(cluster: dict, **extra) -> dict:
    return {**cluster, "node_type_id": "g5.xlarge", "driver_node_type_id": "g5.xlarge", **extra}


# --- AI compute told apart ------------------------------------------------------------------------------------------

def test_a_cpu_etl_cluster_with_spot_workers_passes_the_role_rules_and_the_same_shape_on_gpu_fails_them(judge_export):
    assert {v.policy for v in judge_export(ETL)} & {ALL_SPOT, TRAINING} == set()
    # untagged autoscaled all-purpose GPU compute is inference by its shape (issue 51, item 5): judged all-spot,
    # saying how its role was decided
    on_gpu = {v.policy: v for v in judge_export(_gpu(ETL))}
    assert on_gpu[ALL_SPOT].enforcement == "mandatory"
    assert "role: inference, from its shape: an all-purpose GPU cluster that autoscales" in on_gpu[ALL_SPOT].message
    gpu_runtime = {v.policy for v in judge_export({**ETL, "spark_version": "17.3.x-gpu-ml-scala2.13"})}
    assert ALL_SPOT in gpu_runtime  # a GPU runtime tells AI compute too
    tagged = {v.policy: v for v in judge_export(_gpu({**ETL, "custom_tags": {**TAGS, "workload_type":
                                                                                      "inference"}}))}
    assert "role: inference, from tag workload_type" in tagged[ALL_SPOT].message


def test_a_cpu_cluster_tagged_as_inference_is_judged_as_inference(judge_export):
    tagged = {**ETL, "custom_tags": {**TAGS, "workload_type": "inference"}}
    assert ALL_SPOT in {v.policy for v in judge_export(tagged)}


def test_generic_rules_still_judge_cpu_clusters(judge_export):
    untagged = {**ETL, "custom_tags": {}}
    assert "databricks-resource-require-tags" in {v.policy for v in judge_export(untagged)}


# --- export shapes --------------------------------------------------------------------------------------------------

def test_a_job_is_read_with_its_job_and_task_clusters_and_only_the_gpu_one_meets_the_training_rule(judge_export):
    violations = judge_export(JOB)
    spot_training = [v for v in violations if v.policy == TRAINING]
    assert spot_training and all(v.urn == "job:11" and v.resource_name == "fine-tune" for v in spot_training)
    assert all("job_clusters[train]" in v.message for v in spot_training)  # not the CPU report task's cluster
    assert summary(export_items(JOB, "j.json")) == {
        "clusters": 0, "gpu_clusters": 0, "jobs": 1, "job_clusters": 2, "gpu_job_clusters": 1, "instance_pools": 0,
        "cluster_policies": 0, "serving_endpoints": 0, "tokens": 0, "unchanged": 0}


@pytest.mark.parametrize("doc", [
    {"clusters": [ETL, _gpu(ETL, cluster_id="0101-gpu")]},
    [ETL, _gpu(ETL, cluster_id="0101-gpu")],
    [{"clusters": [ETL], "has_more": True, "next_page_token": "t"}, {"clusters": [_gpu(ETL, cluster_id="0101-gpu")]}],
], ids=["clusters/list", "CLI array", "pages"])
def test_cluster_lists_in_every_shape(doc):
    items = export_items(doc, "c.json")
    assert [i.urn for i in items] == ["cluster:0101-etl", "cluster:0101-gpu"]
    assert summary(items)["gpu_clusters"] == 1


def test_a_mixed_export_with_jobs_pools_and_policies(judge_export):
    doc = {"clusters": [ETL], "jobs": [JOB], "instance_pools": [POOL], "policies": [POLICY]}
    items = export_items(doc, "x.json")
    assert [i.resource_type for i in items] == ["databricks:index/cluster:Cluster", "databricks:index/job:Job",
                                                "databricks:index/instancePool:InstancePool", "cluster_policy"]
    violations = judge_export(doc)
    pool = [v for v in violations if v.urn == "instance-pool:0101-pool"]
    assert pool and all(v.resource_name == "gpu-pool" for v in pool)  # a spot pool for inference: refused


@pytest.mark.parametrize(("doc", "fragment"), [
    ({"jobs": {"job_id": 1}}, "jobs: must be a list"),
    ([ETL, {"id": 1}], "[1]: does not look like a Databricks cluster, job, instance pool, cluster policy or serving endpoint"),
    ({"clusters": [ETL, 3]}, "clusters[1]: is a int"),
])
def test_what_is_no_databricks_object_is_refused_with_its_place(doc, fragment):
    with pytest.raises(InputError) as caught:
        export_items(doc, "x.json")
    assert fragment in str(caught.value)


def test_check_reads_concatenated_pages_and_a_directory_of_exports(capsys, tmp_path):
    pages = tmp_path / "clusters.json"
    pages.write_text(json.dumps({"clusters": [ETL], "next_page_token": "t"}) + "\n"
                     + json.dumps({"clusters": [_gpu(ETL, cluster_id="0101-gpu", cluster_name="gpu-serve", custom_tags=SERVING_TAGS)]}) + "\n")
    assert main(["check", "--cluster-json", str(pages), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["checked"]["clusters"] == 2 and doc["checked"]["gpu_clusters"] == 1
    assert {v["resource_name"] for v in doc["violations"] if v["policy"] == ALL_SPOT} == {"gpu-serve"}

    export = tmp_path / "export"
    export.mkdir()
    (export / "clusters.json").write_text(pages.read_text())
    (export / "jobs.json").write_text(json.dumps({"jobs": [JOB]}))
    (export / "pools.json").write_text(json.dumps({"instance_pools": [POOL]}))
    assert main(["check", "--cluster-json", str(export)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"Checked {export}: 2 clusters (1 GPU), 1 job with 2 job clusters (1 GPU), "
                          "1 instance pool.")
    assert main(["check", "--cluster-json", str(export), "--format", "github"]) == 1
    commands = capsys.readouterr().out
    assert f"file={export / 'jobs.json'}" in commands and f"file={export / 'clusters.json'}" in commands


def test_an_empty_directory_and_a_broken_page_are_invalid_input(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["check", "--cluster-json", str(empty)]) == 2
    assert "no *.json file" in capsys.readouterr().err
    broken = tmp_path / "c.json"
    broken.write_text(json.dumps({"clusters": [ETL]}) + "\n{\"clusters\": [\n")
    assert main(["check", "--cluster-json", str(broken)]) == 2
    assert "(document 2)" in capsys.readouterr().err


def test_the_shipped_example_exports_are_read(capsys):
    """`examples/workspace-export/` (the README's audit example) is a mixed export a user can run as written."""
    export = Path(__file__).resolve().parent.parent / "examples" / "workspace-export"
    assert main(["check", "--cluster-json", str(export), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["checked"]["jobs"] >= 1 and doc["checked"]["gpu_clusters"] >= 1
    flagged = {v["resource_name"] for v in doc["violations"] if v["enforcement"] == "mandatory"}
    assert "nightly-etl" not in flagged  # the CPU ETL cluster meets only the generic rules, and passes them


def test_a_task_on_an_existing_gpu_cluster_judges_that_cluster_as_the_job_workload(judge_export):
    serving = _gpu(ETL, cluster_id="0303-gpu", cluster_name="shared-gpu", spark_version="17.3.x-gpu-ml-scala2.13",
                   autoscale=None, num_workers=2)
    serving.pop("autoscale")
    job = {"job_id": 5, "settings": {"name": "nightly-train", "tasks": [
        {"task_key": "fit", "existing_cluster_id": "0303-gpu", "spark_python_task": {"python_file": "/W/f.py"}},
        {"task_key": "etl", "existing_cluster_id": "0101-etl", "notebook_task": {"notebook_path": "/W/e"}}]}}
    alone = {v.policy for v in judge_export([serving])}
    assert TRAINING not in alone  # a fixed-size all-purpose GPU cluster has no role of its own
    with_job = [v for v in judge_export([serving, ETL, job]) if v.policy == TRAINING]
    assert with_job and all(v.resource_name == "shared-gpu (runs job nightly-train task fit)" for v in with_job)
    # the CPU cluster the etl task runs on stays generic
    assert not [v for v in judge_export([ETL, job]) if v.policy in (TRAINING, ALL_SPOT)]


@pytest.mark.parametrize("as_text", [True, False], ids=["definition as JSON text", "definition as an object"])
def test_a_cluster_that_breaks_the_policy_it_names_is_reported(capsys, tmp_path, as_text):
    definition = {"autotermination_minutes": {"type": "range", "maxValue": 30}}
    policy = {"policy_id": "P1", "name": "short-idle",
              "definition": json.dumps(definition) if as_text else definition}
    under = {**ETL, "policy_id": "P1"}                      # 60 idle minutes: over the policy's 30
    other = {**ETL, "cluster_id": "0101-b", "cluster_name": "no-policy"}
    export = tmp_path / "x.json"
    export.write_text(json.dumps({"clusters": [under, other], "policies": [policy]}))
    assert main(["check", "--cluster-json", str(export), "--json"]) == 0  # advisory
    found = [v for v in json.loads(capsys.readouterr().out)["violations"] if v["policy"] == "cluster-policy-violated"]
    assert [v["resource_name"] for v in found] == ["nightly-etl"]
    assert "breaks its cluster policy short-idle" in found[0]["message"]
    assert main(["check", "--cluster-json", str(export), "--format", "sarif"]) == 0
    log = json.loads(capsys.readouterr().out)
    assert "cluster-policy-violated" in {r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]}


def test_ci_formats_name_the_object_and_its_place_in_the_export(capsys, tmp_path):
    export = tmp_path / "c.json"
    export.write_text(json.dumps({"clusters": [ETL, _gpu(ETL, cluster_id="0101-gpu", cluster_name="gpu-serve", custom_tags=SERVING_TAGS)]}))
    assert main(["check", "--cluster-json", str(export), "--format", "github"]) == 1
    commands = [c for c in capsys.readouterr().out.splitlines() if ALL_SPOT in c]
    assert commands and all("::clusters[1] gpu-serve: " in c and ",line=" not in c for c in commands)
    assert main(["check", "--cluster-json", str(export), "--format", "sarif"]) == 1
    result = next(r for r in json.loads(capsys.readouterr().out)["runs"][0]["results"] if r["ruleId"] == ALL_SPOT)
    assert result["locations"][0]["logicalLocations"][1] == {"name": "clusters[1]", "kind": "element"}
    assert result["message"]["text"].startswith("clusters[1] gpu-serve: ")


# --- an export read one element at a time (issue 23) -----------------------------------------------------------------

_C1 = {**ETL, "cluster_id": "0101-a", "cluster_name": "a"}
_C2 = _gpu({**ETL, "cluster_id": "0101-b", "cluster_name": "b"})
_STREAMED_SHAPES = {
    "a list": json.dumps([_C1, JOB, POOL]),
    "a list response, paging first": json.dumps({"has_more": False, "clusters": [_C1, _C2]}),
    "two lists in the reader's order": json.dumps({"clusters": [_C1], "jobs": [JOB], "instance_pools": [POOL]}),
    "one object": json.dumps(_C1),
    "JSON lines": json.dumps(_C1) + "\n" + json.dumps(_C2) + "\n",
    "pages one after another": json.dumps({"clusters": [_C1]}, indent=2) + "\n" + json.dumps({"clusters": [_C2]}),
    "lists one after another": json.dumps([_C1]) + json.dumps([_C2, JOB]),
    "a list of list responses": json.dumps([{"clusters": [_C1]}, {"jobs": [JOB]}]),
    "empty pages": json.dumps({"clusters": None}) + json.dumps({"clusters": []}) + "[]",
}


@pytest.mark.parametrize("shape", list(_STREAMED_SHAPES))
def test_a_streamed_export_has_exactly_the_items_of_the_whole_document_reader(tmp_path, shape):
    from dbx_ai_infra.sources.exports import read_export_file, stream_export_file

    path = tmp_path / "export.json"
    path.write_text(_STREAMED_SHAPES[shape])
    stream = stream_export_file(path)
    streamed = [(stream.label(k, i.label), i.resource_type, i.name, i.urn, dict(i.props))
                for k, i in enumerate(list(stream))]
    whole = [(i.label, i.resource_type, i.name, i.urn, dict(i.props)) for i in read_export_file(path)]
    assert streamed == whole


@pytest.mark.parametrize("text", [
    json.dumps({"jobs": [JOB], "clusters": [_C1]}),  # the whole reader reads clusters first
    json.dumps({"clusters": [_C1], "cluster_name": "x"}),  # an object, not a list response
    json.dumps({"clusters": 3}),  # invalid: the whole reader names it
    '{"clusters": [{"cluster_id": "x", "cluster_id": "y"}]}',  # a repeated key
    "[" + json.dumps(_C1) + ",]",
    "",
])
def test_a_shape_the_stream_does_not_read_is_left_to_the_whole_document_reader(tmp_path, text):
    from dbx_ai_infra.sources.exports import NotStreamable, stream_export_file

    path = tmp_path / "export.json"
    path.write_text(text)
    with pytest.raises(NotStreamable):
        list(stream_export_file(path))


def test_the_streamed_audit_equals_the_whole_one_with_jobs_on_clusters_and_policies(tmp_path, monkeypatch):
    """Which clusters jobs run on and which policies the export holds are read in a first pass; the findings, counts,
    places and clusters are those of the whole-document audit, and the whole document was never read."""
    from dbx_ai_infra.sources import audit

    runs_on = _gpu({**ETL, "cluster_id": "0101-shared", "cluster_name": "shared", "custom_tags": TAGS})
    job = {"job_id": 12, "settings": {"name": "nightly", "tags": TAGS, "tasks": [
        {"task_key": "t", "existing_cluster_id": "0101-shared", "spark_python_task": {"python_file": "/W/t.py"}}]}}
    breaks = {**_C1, "cluster_id": "0101-p", "cluster_name": "p", "policy_id": "ABC", "autotermination_minutes": 600}
    path = tmp_path / "export.json"
    # the clusters come before the job and the policy that change how they are judged
    path.write_text(json.dumps({"clusters": [runs_on, breaks, _C2]}) + "\n" + json.dumps({"jobs": [job, JOB]})
                    + "\n" + json.dumps({"policies": [POLICY]}))
    whole = audit.audit_items(audit.read_export(str(path)), None, places=True, clusters=True)
    monkeypatch.setattr(audit, "read_export", lambda _path: pytest.fail("the export was read whole"))
    streamed = audit.audit_export_path(str(path), None, places=True, clusters=True)
    assert [v.to_json() for v in streamed.violations] == [v.to_json() for v in whole.violations]
    assert (streamed.counts, streamed.files, streamed.labels, streamed.clusters) == \
        (whole.counts, whole.files, whole.labels, whole.clusters)
    found = {(v.policy, v.resource_name) for v in streamed.violations}
    assert (audit.OWN_POLICY, "p") in found  # breaks its policy, named later in the file
    assert any(name.startswith("shared (runs job nightly") for _, name in found)  # judged as the job's workload
    assert streamed.labels["cluster:0101-p"] == "[0].clusters[1]"  # first document, relabelled once more followed


# --- a value known only after apply, in a streamed export (issue 53, item 5) ----------------------------------------

@pytest.mark.parametrize("written", ['"<known after apply>"', '"\\u003cknown after apply\\u003e"'])
def test_a_streamed_export_that_holds_a_value_known_only_after_apply_is_not_judged_on_it(tmp_path, written):
    """A streamed export is walked for unknown values only when its text may hold one: the marker as written, or
    spelt with JSON escapes (Go's encoder writes ``<`` as ``\\u003c``). Both read the same, not judged; the same
    cluster with a known runtime is judged."""
    from dbx_ai_infra.dbxtypes.plan import NOT_JUDGED
    from dbx_ai_infra.sources.audit import audit_export_path

    def policies(spark_version: str) -> dict[str, str]:
        text = json.dumps({"clusters": [_gpu(ETL)]}).replace('"17.3.x-scala2.13"', spark_version)
        path = tmp_path / "clusters.json"
        path.write_text(text)
        return {v.policy: v.enforcement for v in audit_export_path(str(path), None).violations}

    unknown = policies(written)
    assert "databricks-cluster-require-matching-runtime" in unknown
    assert unknown["databricks-cluster-require-matching-runtime"] == NOT_JUDGED
    known = policies('"17.3.x-scala2.13"')  # a CPU runtime on a GPU node: judged, a violation
    assert known["databricks-cluster-require-matching-runtime"] != NOT_JUDGED
