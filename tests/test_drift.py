"""`check --stack STACK --cluster-json|--workspace`: drift between a shipped stack and what a workspace runs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.shape import normalize_props
from dbx_ai_infra.engine.pipeline import build_plan

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = json.loads((ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text())


def _deployed(stack: str) -> dict:
    """What `pulumi up` of the stack leaves in a workspace, as clusters/list, jobs/list and instance-pools/list
    return it (ids filled in; the provider-only `libraries` live elsewhere in the API)."""
    plan = build_plan(stack, with_policies=False)
    doc: dict = {"clusters": [], "jobs": [], "instance_pools": []}
    for r in plan.resources:
        props = normalize_props(r.inputs)
        if r.type == "databricks:index/cluster:Cluster":
            props.pop("libraries", None)
            doc["clusters"].append({**props, "cluster_id": f"{r.name}-id", "state": "RUNNING"})
        elif r.type == "databricks:index/job:Job":
            doc["jobs"].append({"job_id": len(doc["jobs"]) + 1, "settings": props})
        elif r.type == "databricks:index/instancePool:InstancePool":
            doc["instance_pools"].append({**props, "instance_pool_id": "pool-1"})
    return doc


def _drift(capsys, tmp_path, doc: dict, *extra: str) -> dict:
    export = tmp_path / "ws.json"
    export.write_text(json.dumps(doc))
    assert main(["check", "--stack", "prod", "--cluster-json", str(export), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_workspace_as_the_stack_deploys_it_has_no_drift(capsys, tmp_path):
    result = _drift(capsys, tmp_path, _deployed("prod"))
    assert result["drift"] == [] and result["counts"] == {"drift-changed": 0, "drift-missing": 0,
                                                          "drift-unowned-gpu": 0}


def test_changed_fields_missing_resources_and_unowned_gpu_compute(capsys, tmp_path):
    doc = _deployed("prod")
    training = doc["jobs"][0]["settings"]["job_clusters"][0]["new_cluster"]  # prod trains on its job's compute
    training["num_workers"] = 4                                   # resized by hand
    training["aws_attributes"]["availability"] = "SPOT"           # and moved to spot
    training["node_type_id"] = "p4de.24xlarge"                    # and another node type
    inference = next(c for c in doc["clusters"] if c["cluster_name"] == "prod-inference")
    inference["custom_tags"].pop("cost_center")                   # a tag lost
    doc["instance_pools"] = []                                    # the pool was deleted
    doc["clusters"].append({"cluster_id": "x1", "cluster_name": "alice-gpu", "num_workers": 1,
                            "spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.xlarge"})
    doc["clusters"].append({"cluster_id": "x2", "cluster_name": "etl", "num_workers": 1,
                            "spark_version": "17.3.x-scala2.13", "node_type_id": "m5.xlarge"})
    result = _drift(capsys, tmp_path, doc)
    changed = [v["message"] for v in result["drift"] if v["policy"] == "drift-changed"]
    assert any(m.startswith("job_clusters[train].size: the stack says num_workers 2, the workspace runs num_workers 4")
               for m in changed)
    assert any(m.startswith("job_clusters[train].availability: the stack says SPOT_WITH_FALLBACK, the workspace runs "
                            "SPOT") for m in changed)
    assert any(m.startswith("tags.cost_center: the stack says ai-team, the workspace runs (none)") for m in changed)
    assert any(m.startswith("job_clusters[train].node_type_id: the stack says p4d.24xlarge, the workspace runs "
                            "p4de.24xlarge") for m in changed)
    assert [v["resource_name"] for v in result["drift"] if v["policy"] == "drift-missing"] == \
        ["prod-inference-pool-pool"]
    assert [v["resource_name"] for v in result["drift"] if v["policy"] == "drift-unowned-gpu"] == ["alice-gpu"]


def test_drift_in_sarif_points_at_the_stack_field(capsys, tmp_path):
    doc = _deployed("prod")
    next(c for c in doc["clusters"] if c["cluster_name"] == "prod-inference")["autoscale"]["max_workers"] = 12
    export = tmp_path / "ws.json"
    export.write_text(json.dumps(doc))
    assert main(["check", "--stack", "prod", "--cluster-json", str(export), "--format", "sarif"]) == 0
    log = json.loads(capsys.readouterr().out)
    assert not list(jsonschema.Draft4Validator(SARIF_SCHEMA).iter_errors(log))
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "drift-changed"
    line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    text = (ROOT / "stacks" / "Pulumi.prod.yaml").read_text().splitlines()
    assert text[line - 1].strip() == "min_workers: 2"  # the inference size, where the stack states it


def test_drift_takes_one_stack(capsys, tmp_path):
    assert main(["check", "--all", "--cluster-json", str(tmp_path / "x.json")]) == 2
    assert "drift compares one stack" in capsys.readouterr().err


def test_the_drift_table_says_what_it_compared(capsys, tmp_path):
    export = tmp_path / "ws.json"
    export.write_text(json.dumps(_deployed("prod")))
    assert main(["check", "--stack", "prod", "--cluster-json", str(export)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Drift of stack prod (stacks/Pulumi.prod.yaml) against {export}: 0 changed fields, "
                          "0 missing resources, 0 GPU compute owned by no stack.")
    assert "No drift." in out
