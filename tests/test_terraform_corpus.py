"""Issue 45, item 3: a corpus of Terraform code written in the shapes public Databricks repositories use (the
provider's examples, terraform-databricks-examples' department clusters, a security-minded workspace baseline), each
read as written with the verdict a
platform engineer would give: the exit code and every finding, by rule, level and address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbx_ai_infra.cli.cli import main

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
        ("databricks-cluster-require-supported-runtime", A, "databricks_job.legacy"),  # within a year of its end of support
        ("databricks-cluster-require-supported-runtime", A, "databricks_cluster.half_autoscale"),  # within a year of its end of support
    }),
    # CPU clusters meet no role rule; a 1-1 autoscale range is refused by the API; the GPU notebook cluster is asked
    # its role; the permissions name each instance through [each.key]
    "department-clusters": (1, {
        ("databricks-cluster-configure-worker-bounds", M, 'databricks_cluster.department["marketing"]'),
        ("databricks-cluster-disallow-all-spot-inference", M, 'databricks_cluster.department["research"]'),
        ("databricks-cluster-require-supported-runtime", A, 'databricks_cluster.department["marketing"]'),  # within a year of its end of support
        ("databricks-cluster-require-supported-runtime", A, 'databricks_cluster.department["research"]'),  # within a year of its end of support
        ("databricks-cluster-require-supported-runtime", A, 'databricks_cluster.department["finance"]'),  # within a year of its end of support
    }),
    # the provider's example shape: node type and runtime from data sources; the LTS runtime passes, the node type
    # is not known to be a GPU one (no min_gpus), so only the generic rules speak
    "docs-shared-cluster": (1, {
        ("databricks-resource-require-tags", M, "databricks_cluster.shared_autoscaling"),
        ("databricks-resource-require-access-control", A, "databricks_cluster.shared_autoscaling"),
    }),
    # a platform baseline: the hand-made token never expires; the fine-tuning job, owned by a service principal and
    # granted to the team, passes but for its model cache on DBFS
    "platform-baseline": (1, {
        ("databricks-token-require-lifetime", M, "databricks_token.someone"),
        ("databricks-cluster-require-volumes-for-caches", A, "databricks_job.finetune"),
        ("databricks-cluster-require-supported-runtime", A, "databricks_job.finetune"),  # within a year of its end of support
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
