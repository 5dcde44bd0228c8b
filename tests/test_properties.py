"""Property tests: the generator (stack spec + components) and the guardrails (policy pack, cluster
policies) agree on every stack the validator accepts."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import assume, given
from hypothesis import strategies as st

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.shape import shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import SPOT_WITH_FALLBACK
from dbx_ai_infra.engine.engine import run_program
from dbx_ai_infra.gpucatalog import load_catalog
from dbx_ai_infra.guardrails import evaluate
from dbx_ai_infra.policies.registry import evaluate_plan, evaluate_resource
from dbx_ai_infra.stackspec import LoadedStack, resolve, spec_from_config
from dbx_ai_infra.stackspec.load import _to_pulumi_value

CATALOG = load_catalog()
LIBS = ["transformers==4.44.2", "peft==0.12.0", "vllm==0.5.4", "accelerate==0.33.0"]


def models(training: bool):
    return st.fixed_dictionaries({
        "params_billions": st.sampled_from([0.5, 1, 3, 7, 13]),
        "precision": st.sampled_from(["bf16", "fp16", "int8", "int4"]),
        **({"method": st.sampled_from(["full", "lora"])} if training else {}),
    })


@st.composite
def stack_configs(draw, with_training: bool = False):
    cloud = draw(st.sampled_from(["aws", "azure", "gcp"]))
    family = draw(st.sampled_from(CATALOG.families(cloud)))
    config = {
        "dbx-ai-infra:cloud": cloud, "dbx-ai-infra:gpu_family": family,
        "dbx-ai-infra:single_user_name": "ml@example.com",
        "dbx-ai-infra:tags": {"workload": "genai", "cost_center": draw(st.sampled_from(["ai", "research"]))},
    }
    sections = draw(st.sets(st.sampled_from(["training", "inference", "dev"]), min_size=1))
    if with_training:
        sections.add("training")
    pools = {}
    if "training" in sections:
        n = draw(st.integers(1, 8))
        training = {"num_workers": n, "model": draw(models(True)), "spot": draw(st.booleans()),
                    "first_on_demand": draw(st.integers(1, n + 1)),
                    "autotermination_minutes": draw(st.integers(10, 120)),
                    "libraries": draw(st.lists(st.sampled_from(LIBS), unique=True, max_size=2))}
        if draw(st.booleans()):
            training["job"] = {"python_file": "/Workspace/train.py", "max_retries": draw(st.integers(0, 5))}
            training["all_purpose_cluster"] = True  # the cluster too (a job alone is the default): the checks need it
        config["dbx-ai-infra:training"] = training
    if "inference" in sections:
        lo = draw(st.integers(1, 4))
        config["dbx-ai-infra:inference"] = {
            "min_workers": lo, "max_workers": draw(st.integers(lo, 16)), "model": draw(models(False)),
            "spot_above_base": draw(st.booleans()), "autotermination_minutes": draw(st.integers(10, 120))}
    if "dev" in sections:
        dev = {"shuffle_partitions": draw(st.integers(1, 16)), "autotermination_minutes": draw(st.integers(10, 120))}
        if draw(st.booleans()):
            dev["model"] = draw(models(False))
        config["dbx-ai-infra:dev"] = dev
    for section in sections:
        if draw(st.booleans()):
            pools[section] = {"min_idle_instances": draw(st.integers(0, 2))}
    if pools:
        config["dbx-ai-infra:instance_pools"] = pools
    config["dbx-ai-infra:cluster_policies"] = {"enabled": draw(st.booleans())}
    return config


def accepted(config) -> LoadedStack:
    """The stack if the validator accepts it; hypothesis discards the example otherwise."""
    try:
        resolved = resolve(spec_from_config(config, "generated.yaml"), "generated.yaml")
    except InputError:
        assume(False)
    return LoadedStack("gen", Path("generated.yaml"), {k: _to_pulumi_value(v) for k, v in config.items()}, resolved)


# ---- single bad mutations: each is caught by the matching rule, and by the cluster policy where one exists

BLOCK_CLOUD = {"awsAttributes": "aws", "azureAttributes": "azure", "gcpAttributes": "gcp"}


def _block(inputs):
    return next((k for k in ("awsAttributes", "azureAttributes", "gcpAttributes") if k in inputs), None)


def make_inference_all_spot(r, role):
    if role != "inference" or _block(r) is None:
        return None
    block = _block(r)
    r[block]["availability"] = SPOT_WITH_FALLBACK[BLOCK_CLOUD[block]]
    r[block]["firstOnDemand"] = 1  # base workers on spot
    return "databricks-cluster-disallow-all-spot-inference"


def add_autoscale_to_training(r, role):
    if role != "training":
        return None
    r["autoscale"] = {"minWorkers": 1, "maxWorkers": r.get("numWorkers", 1) + 2}
    r.pop("numWorkers", None)
    return "databricks-cluster-disallow-autoscaled-or-spot-training"


def swap_cloud_block(r, role):
    block = _block(r)
    if block is None:
        return None
    other = "azureAttributes" if block != "azureAttributes" else "awsAttributes"
    r[other] = r.pop(block)
    return "databricks-cluster-require-matching-cloud-attributes"


def cpu_runtime(r, role):
    if "nodeTypeId" not in r:
        return None
    r["sparkVersion"] = "17.3.x-scala2.13"
    # with kind CLASSIC_PREVIEW, use_ml_runtime makes that the GPU ML runtime on a GPU node (provider docs,
    # resources/cluster.md): the mutation drops it too, or the cluster would still be right
    r.pop("useMlRuntime", None)
    return "databricks-cluster-require-matching-runtime"


def unpin_a_library(r, role):
    r["libraries"] = [*r.get("libraries", []), {"pypi": {"package": "torch"}}]
    return "databricks-library-require-pinned-pip-versions"


def drop_a_tag(r, role):
    r["customTags"].pop("cost_center")
    return "databricks-resource-require-tags"


def never_terminate(r, role):
    if role == "inference":
        return None  # an inference cluster may never terminate: its on-demand base stays up
    r["autoterminationMinutes"] = 0
    return "databricks-cluster-require-autotermination"


MUTATIONS = [make_inference_all_spot, add_autoscale_to_training, swap_cloud_block, cpu_runtime, unpin_a_library,
             drop_a_tag, never_terminate]
#: Mutations a cluster policy cannot refuse: libraries are outside policy definitions, and a fixed tag that is
#: left out is filled in by the workspace rather than refused.
NOT_A_POLICY_MATTER = {unpin_a_library, drop_a_tag}


#: A stack on which every mutation applies: all three roles with their own cloud blocks (no pools), policies on.
EVERY_MUTATION_APPLIES = {
    "dbx-ai-infra:cloud": "aws", "dbx-ai-infra:gpu_family": "a10g", "dbx-ai-infra:single_user_name": "ml@example.com",
    "dbx-ai-infra:tags": {"workload": "genai", "cost_center": "ai"},
    "dbx-ai-infra:training": {"num_workers": 2, "model": {"params_billions": 1, "precision": "bf16", "method": "lora"},
                              "spot": True, "first_on_demand": 1, "autotermination_minutes": 60, "libraries": []},
    "dbx-ai-infra:inference": {"min_workers": 2, "max_workers": 4, "model": {"params_billions": 1, "precision": "fp16"},
                               "spot_above_base": True, "autotermination_minutes": 60},
    "dbx-ai-infra:dev": {"shuffle_partitions": 8, "autotermination_minutes": 60},
    "dbx-ai-infra:cluster_policies": {"enabled": True},
}


def judge_generated_stack(config) -> set[str]:
    """Run the program once on a generated stack and check, on that one plan: no mandatory violation; each bad
    mutation of each cluster is caught by its rule, and by the stack's cluster policy where a policy can refuse it;
    a grant of all privileges to account users on its catalog is refused. Returns the mutations that applied."""
    result = run_program(accepted(config))
    mandatory = [v for v in evaluate_plan(result) if v.mandatory]
    assert mandatory == [], mandatory
    plan = result.to_json()
    clusters = [r for r in plan["resources"] if r["type"] == "databricks:index/cluster:Cluster"]
    assert clusters
    definitions = {r["id"]: json.loads(r["inputs"]["definition"]) for r in plan["resources"]
                   if r["type"] == "databricks:index/clusterPolicy:ClusterPolicy"}
    applied = set()
    for mutation in MUTATIONS:
        for resource in clusters:
            inputs = copy.deepcopy(resource["inputs"])
            rule = mutation(inputs, inputs["customTags"]["workload_type"])
            if rule is None:
                continue
            applied.add(mutation.__name__)
            found = {v.policy for v in evaluate_resource(resource["type"], inputs, urn=resource["urn"],
                                                         name=resource["name"])}
            assert rule in found, (mutation.__name__, found)
            if mutation in NOT_A_POLICY_MATTER or "policyId" not in inputs:
                continue
            (view,) = shapes_of_resource(resource["type"], inputs)
            assert not evaluate(definitions[inputs["policyId"]], dict(view.props)).allowed, mutation.__name__
    (catalog,) = [r for r in plan["resources"] if r["type"] == "databricks:index/catalog:Catalog"]
    bad = {"catalog": catalog["inputs"]["name"], "grants": [{"principal": "account users", "privileges": ["ALL_PRIVILEGES"]}]}
    found = {v.policy for v in evaluate_resource("databricks:index/grants:Grants", bad, urn="u", name="g")}
    assert "databricks-uc-disallow-all-privileges-to-account-users" in found
    return applied


# One program run per generated stack serves every check of it (each used to run the program for itself: 9 runs
# of the same kind of stack for what one run shows).
@given(stack_configs())
def test_a_generated_stack_has_no_mandatory_violation_and_each_bad_mutation_of_it_is_caught(config):
    judge_generated_stack(config)


def test_every_mutation_applies_to_a_stack_with_every_role():
    """The generated stacks exercise every mutation: on this one, each applies (and is caught)."""
    assert judge_generated_stack(EVERY_MUTATION_APPLIES) == {m.__name__ for m in MUTATIONS}


# ---- costs of whole generated stacks

from dbx_ai_infra.pricing import diff_costs, load_prices, price_plan  # noqa: E402

PRICES = load_prices()


def priced(config):
    loaded = accepted(config)
    plan = run_program(loaded)
    plan.assumptions = loaded.spec.usage.model_dump()
    plan.cost = price_plan(plan, PRICES)
    return plan.to_json()


@given(stack_configs(with_training=True), st.sampled_from(["training_hours_per_month", "training_job_hours_per_month",
                                                           "inference_hours_per_month", "dev_hours_per_working_day"]),
       st.floats(1.0, 3.0))
def test_stack_cost_is_monotone_in_hours_and_in_workers_and_zero_against_itself(config, hours_key, factor):
    """One priced program run per generated stack (each has a training cluster; the other roles at random) serves
    every check: the self-diff, more hours, and one more worker on the training cluster (the plan re-priced with
    the cluster's numWorkers raised; that the program sets numWorkers from the spec is tested on its own)."""
    plan = priced(config)
    assert diff_costs(plan, plan)["total"]["delta"]["monthly_expected"] == 0
    more = copy.deepcopy(plan)
    default = more["assumptions"][hours_key]
    more["assumptions"][hours_key] = min(default * factor, 24 if hours_key.startswith("dev") else 744)
    more["cost"] = price_plan(more, PRICES).to_json()
    before, after = plan["cost"]["total"]["monthly"], more["cost"]["total"]["monthly"]
    for key in ("min", "expected", "max"):
        assert after[key] >= before[key] - 1e-9
    bigger = copy.deepcopy(plan)
    (training,) = [r for r in bigger["resources"] if r["type"] == "databricks:index/cluster:Cluster"
                   and r["inputs"]["customTags"]["workload_type"] == "training"]
    training["inputs"]["numWorkers"] += 1
    grown = price_plan(bigger, PRICES).to_json()["total"]
    assert grown["hourly"] > plan["cost"]["total"]["hourly"]
    assert grown["monthly"]["expected"] >= plan["cost"]["total"]["monthly"]["expected"]


def test_one_more_training_worker_costs_more_on_a_fixed_stack():
    """The generated stacks exercise the workers check: on this one it applies (and holds)."""
    plan, bigger = priced(EVERY_MUTATION_APPLIES), copy.deepcopy(EVERY_MUTATION_APPLIES)
    bigger["dbx-ai-infra:training"]["num_workers"] += 1
    assert priced(bigger)["cost"]["total"]["hourly"] > plan["cost"]["total"]["hourly"]
