"""Issue 45, item 3: a corpus of Terraform code written in the shapes public Databricks repositories use (the
provider's examples, terraform-databricks-examples' department clusters), each read as written with the verdict a
platform engineer would give: the exit code and every finding, by rule, level and address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stackplan_cli.cli import main

CORPUS = Path(__file__).resolve().parent / "terraform_corpus"
M, A = "mandatory", "advisory"
VERDICTS: dict[str, tuple[int, set[tuple[str, str, str]]]] = {
    # every peer gap, each caught once, on the resource that has it
    "peer-gaps": (1, {
        ("databricks-token-require-lifetime", M, "databricks_token.ci"),
        ("databricks-cluster-require-complete-autoscale-bounds", M, "databricks_cluster.half_autoscale"),
        ("databricks-resource-require-access-control", A, "databricks_cluster.half_autoscale"),
        ("databricks-cluster-require-runtime-key", M, "databricks_cluster.apache_version"),
        ("databricks-resource-require-access-control", A, "databricks_cluster.apache_version"),
        ("databricks-job-disallow-spark-submit-task", M, "databricks_job.legacy"),
        ("databricks-job-require-service-principal-owner", A, "databricks_job.legacy"),
    }),
    # CPU clusters meet no role rule; a 1-1 autoscale range is refused by the API; the GPU notebook cluster is asked
    # its role; the permissions name each instance through [each.key]
    "department-clusters": (1, {
        ("databricks-cluster-configure-worker-bounds", M, 'databricks_cluster.department["marketing"]'),
        ("databricks-cluster-tag-autoscaled-gpu-compute", A, 'databricks_cluster.department["research"]'),
    }),
}


def test_every_module_of_the_corpus_has_a_verdict() -> None:
    assert {p.name for p in CORPUS.iterdir() if p.is_dir()} == set(VERDICTS)


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_each_module_gets_its_verdict(name: str, capsys) -> None:
    code, expected = VERDICTS[name]
    assert main(["check", "--terraform", str(CORPUS / name), "--json"]) == code
    out, err = capsys.readouterr()
    found = {(v["policy"], v["enforcement"], v["resource_name"]) for v in json.loads(out)["violations"]}
    assert found == expected
    assert "Traceback" not in err and "error" not in err
