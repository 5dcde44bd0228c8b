"""The audit on realistic documents (`tests/corpus/`, written from the API reference): every shape a workspace
returns or a user keeps is read, and each gets the verdict a platform engineer gives it by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbx_ai_infra.cli.cli import main

CORPUS = Path(__file__).parent / "corpus"
CONFORMANCE = "databricks-api-conformance"
UNRECOGNISED = "databricks-export-unrecognised-field"

#: document -> (exit code, {(policy, enforcement)}, what was checked): judged by hand.
#: Every document of the corpus runs a runtime within a year of its end of support as of 2026-12 (15.4 LTS ends
#: 2027-08-19, 14.3 LTS 2027-02-01): the runtime rule warns from 12 months before (issue 52, item 8).
NEAR_END = ("databricks-cluster-require-supported-runtime", "advisory")
VERDICTS: dict[str, tuple[int, set[tuple[str, str]], dict[str, int]]] = {
    # a clusters/get response with every read-only field a workspace writes: well configured, a two-node training
    # cluster without a GPU interconnect, pinned to one zone (both advisory)
    "clusters-get-gpu-training.json": (0, {NEAR_END, ("databricks-cluster-prefer-interconnect-for-multi-node-training",
                                            "advisory"), ("databricks-cluster-prefer-auto-zone", "advisory")},
                                       {"clusters": 1, "gpu_clusters": 1}),
    # clusters/list: a CPU job cluster (no auto-termination: it ends with its run) and a GPU single-node notebook
    "clusters-list-mixed.json": (0, {NEAR_END}, {"clusters": 2, "gpu_clusters": 1}),
    # Jobs API 2.0 (job-level new_cluster, libraries, spark_python_task, max_retries; one on an existing cluster)
    "jobs-list-api20.json": (0, {NEAR_END}, {"jobs": 2, "job_clusters": 1, "gpu_job_clusters": 1}),
    # a jobs/create payload: settings without the jobs/get envelope; a single-node GPU job cluster is batch work
    # (taken as training, not interactive), so the checkpoint advice applies, saying its role was taken
    "jobs-create-payload.json": (0, {NEAR_END, ("databricks-training-require-checkpoint-location", "advisory")},
                                 {"jobs": 1, "job_clusters": 1, "gpu_job_clusters": 1}),
    # a runs/submit run: run_name and a job-level new_cluster
    "runs-submit.json": (0, {NEAR_END}, {"jobs": 1, "job_clusters": 1, "gpu_job_clusters": 0}),
    # a serverless job: tasks with an environment, no cluster; nothing to judge but its tags
    "serverless-job.json": (0, set(), {"jobs": 1, "job_clusters": 0}),
    # a rendered Asset Bundle (its permissions are the bundle's, not job settings)
    "bundle-rendered.json": (0, {NEAR_END}, {"jobs": 1, "job_clusters": 1, "gpu_job_clusters": 1}),
    # a dbx deployment file
    "dbx-deployment.json": (0, {NEAR_END}, {"jobs": 1, "job_clusters": 1, "gpu_job_clusters": 0}),
    # an MLflow project's backend config: a nameless new_cluster, a job cluster (no auto-termination asked); its
    # role is guessed from its job context (training), so the checkpoint advice is advisory
    "mlflow-backend-config.json": (0, {NEAR_END, ("databricks-training-require-checkpoint-location", "advisory")},
                                   {"clusters": 1, "gpu_clusters": 1}),
    # a bare policy definition: read as a policy, never as a cluster
    "policy-definition.json": (0, set(), {"clusters": 0, "cluster_policies": 1}),
    # instance-pools/list with its read-only fields
    "instance-pools-list.json": (0, set(), {"instance_pools": 1}),
    # a field no API type knows: advisory, never mandatory
    "cluster-with-unknown-field.json": (0, {NEAR_END, (UNRECOGNISED, "advisory")}, {"clusters": 1}),
    # the seed's mistake on an untagged cluster: an autoscaled all-purpose GPU cluster is inference by its shape
    # (issue 51, item 5), so its all-spot base is mandatory, and it may run without auto-termination
    "untagged-autoscaled-gpu.json": (1, {NEAR_END, ("databricks-cluster-disallow-all-spot-inference", "mandatory")},
                                     {"clusters": 1, "gpu_clusters": 1}),
    # the export shows the cluster as it is: a fixed attribute of its policy it lacks breaks the policy
    "cluster-breaks-its-policy.json": (0, {NEAR_END, ("cluster-policy-violated", "advisory")},
                                       {"clusters": 1, "cluster_policies": 1}),
    # first_on_demand absent means 0 (the provider's documented default): the only node of this serving cluster
    # runs on spot
    "inference-single-node-no-first-on-demand.json": (1, {NEAR_END, ("databricks-cluster-disallow-all-spot-inference",
                                                           "mandatory")}, {"clusters": 1, "gpu_clusters": 1}),
    # an export split by object kind, one directory each
    "split-export": (0, {NEAR_END}, {"clusters": 2, "jobs": 2, "job_clusters": 1}),
}


def test_every_document_of_the_corpus_has_a_verdict():
    names = {p.name for p in CORPUS.iterdir() if p.suffix == ".json" or p.is_dir()}
    assert names == set(VERDICTS)


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_each_document_gets_its_verdict(name, capsys, tmp_path):
    code, expected, checked = VERDICTS[name]
    out = tmp_path / "audit.json"
    assert main(["check", "--cluster-json", str(CORPUS / name), "--json", "--out", str(out)]) == code
    doc = json.loads(out.read_text())
    found = {(v["policy"], v["enforcement"]) for v in doc["violations"]}
    assert found == expected, [v["message"] for v in doc["violations"]]
    assert {k: doc["checked"][k] for k in checked} == checked
    assert "error" not in capsys.readouterr().err


def test_a_role_taken_from_the_shape_is_said_to_be_taken(tmp_path):
    out = tmp_path / "a.json"
    main(["check", "--cluster-json", str(CORPUS / "jobs-create-payload.json"), "--json", "--out", str(out)])
    (message,) = [v["message"] for v in json.loads(out.read_text())["violations"] if v["policy"] != NEAR_END[0]]
    assert ("training cluster (role: training, from its shape: a GPU job cluster with fixed workers) has no "
            "checkpoint location") in message


def test_no_field_a_workspace_wrote_is_an_api_conformance_violation(tmp_path):
    """The responses of the corpus carry read-only fields; none is flagged, mandatory or advisory."""
    responses = ["clusters-get-gpu-training.json", "clusters-list-mixed.json", "instance-pools-list.json",
                 "jobs-list-api20.json"]
    for name in responses:
        out = tmp_path / f"{name}.out"
        main(["check", "--cluster-json", str(CORPUS / name), "--json", "--out", str(out)])
        policies = {v["policy"] for v in json.loads(out.read_text())["violations"]}
        assert not policies & {CONFORMANCE, UNRECOGNISED}, name


def test_what_the_project_generates_stays_strict():
    """The same unknown field in a Pulumi input is the conformance rule's, mandatory."""
    from dbx_ai_infra.policies.registry import evaluate_resource

    cluster = json.loads((CORPUS / "cluster-with-unknown-field.json").read_text())
    pulumi = {"sparkVersion": cluster["spark_version"], "nodeTypeId": cluster["node_type_id"], "numWorkers": 1,
              "gpuSharingMode": "TIME_SLICED"}
    found = {(v.policy, v.enforcement) for v in evaluate_resource("databricks:index/cluster:Cluster", pulumi,
                                                                   urn="u", name="n")}
    assert (CONFORMANCE, "mandatory") in found and not any(p == UNRECOGNISED for p, _ in found)
