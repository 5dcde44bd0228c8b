"""Job compute for recurring training (issue 28, part 5): the priced advice, and the stack setting that acts on it."""

from __future__ import annotations

import copy

import pytest
from conftest import BASE_CONFIG

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.engine.pipeline import build_plan


def test_an_all_purpose_training_cluster_beside_its_job_is_priced_on_job_compute(write_stack):
    # the test stack asks for the all-purpose cluster beside its job (all_purpose_cluster: true)
    plan = build_plan(str(write_stack(copy.deepcopy(BASE_CONFIG))), with_cost=True)
    (advice,) = [a for a in plan.advice if a.id == "training-on-job-compute"]
    cost = {r.name: plan.cost.resources[r.urn] for r in plan.resources if r.urn in plan.cost.resources}
    cluster, job = cost["test-training-cluster"], cost["test-training-job"]
    assert advice.resource_name == "test-training-cluster"
    assert advice.monthly_cost_delta == pytest.approx(job.hourly * cluster.hours_per_month - cluster.monthly.expected)
    assert advice.monthly_cost_delta < 0 and "training.all_purpose_cluster: false" in advice.message


def test_a_training_workload_with_a_job_makes_no_all_purpose_cluster_unless_it_asks(write_stack, plan_of):
    """pulumi up would otherwise start (and wait for) an idle multi-GPU cluster beside the job: prod's 3 x
    p4d.24xlarge."""
    names = {r["name"] for r in plan_of("prod")["resources"]}
    assert "prod-training-job" in names and "prod-training-cluster" not in names
    config = copy.deepcopy(BASE_CONFIG)
    del config["dbx-ai-infra:training"]["all_purpose_cluster"]
    names = {r.name for r in build_plan(str(write_stack(config))).resources}
    assert "test-training-job" in names and "test-training-cluster" not in names
    config["dbx-ai-infra:training"].pop("job")  # no job: the cluster is the training's compute
    names = {r.name for r in build_plan(str(write_stack(config, name="nojob"))).resources}
    assert "test-training-cluster" not in names and "nojob-training-cluster" in names


def test_the_job_alone_makes_no_all_purpose_cluster_and_needs_a_job(write_stack, capsys):
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:training"]["all_purpose_cluster"] = False
    plan = build_plan(str(write_stack(config)), with_cost=True)
    names = {r.name for r in plan.resources}
    assert "test-training-job" in names and "test-training-cluster" not in names
    assert not [a for a in plan.advice or [] if a.id == "training-on-job-compute"]
    del config["dbx-ai-infra:training"]["job"]
    assert main(["preview", "--stack", str(write_stack(config))]) == 2
    assert "dbx-ai-infra:training: all_purpose_cluster is false but job is not set" in capsys.readouterr().err
