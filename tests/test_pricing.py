"""The cost model (dbx_ai_infra/pricing/): hand-computed prices, spot mix, pools, unpriced items, overrides, diffs, monotonicity.

Expected figures are computed in the tests from the catalog's VM and DBU figures and the list $/DBU of
pricing.md section 4, never copied from an engine result.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from typing import Any

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dbx_ai_infra import pricing
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.gpucatalog import Catalog, NodeType, load_catalog
from dbx_ai_infra.pricing import (
    PriceBook,
    PriceOverrides,
    diff_costs,
    load_overrides_file,
    load_prices,
)
from dbx_ai_infra.pricing.book import RATES_PATH
from dbx_ai_infra.pricing.regions import REGIONS_PATH


def price_plan(plan: Any, book: PriceBook) -> dict[str, Any]:
    """The cost object as the plan JSON carries it (these tests check the JSON contract)."""
    return pricing.price_plan(plan, book).to_json()


CLUSTER = "databricks:index/cluster:Cluster"
JOB = "databricks:index/job:Job"
POOL = "databricks:index/instancePool:InstancePool"
MODEL_SERVING_ENDPOINT = "databricks:index/modelServing:ModelServing"

# pricing.md section 4 (lakemeter_dbu_prices, 2026-04-10) and the spot defaults of section 5 (ESTIMATE).
AWS_PREMIUM_ALL_PURPOSE = 0.55
AWS_PREMIUM_JOBS = 0.15
AWS_ENTERPRISE_ALL_PURPOSE = 0.65
AZURE_PREMIUM_JOBS = 0.30
AWS_SPOT = 0.39  # the cloud factor: a node type with no spot row of its own
AZURE_SPOT = 0.25
GCP_SPOT = 0.55
CLOUD_SPOT = {"aws": AWS_SPOT, "azure": AZURE_SPOT, "gcp": GCP_SPOT}
_REGIONS = yaml.safe_load(REGIONS_PATH.read_text())


def _spot(node: str, cloud: str = "aws") -> float:
    """The spot factor a spot node of ``node`` is priced at, read off regions.yaml by hand: spot / on demand of its
    reference-region row, else the cloud factor."""
    data = _REGIONS["clouds"][cloud]
    row = data["vm"].get(data["reference"], {}).get("nodes", {}).get(node)
    if not row:  # the generated rows (dbx_ai_infra/pricing/vm_prices.json, issue 53): the reference region's, with a spot price
        generated = json.loads((REGIONS_PATH.parent / "vm_prices.json").read_text())["clouds"][cloud]
        row = generated.get(data["reference"], {}).get("nodes", {}).get(node)
    return row[1] / row[0] if row and row[1] is not None else CLOUD_SPOT[cloud]

ASSUMPTIONS = {"training_hours_per_month": 40, "training_job_hours_per_month": 80, "inference_hours_per_month": 730,
               "inference_burst_hours_per_month": 120, "inference_burst_avg_extra_workers": None,
               "dev_hours_per_working_day": 6, "working_days_per_month": 21, "pool_idle_hours_per_month": 730}


@pytest.fixture(scope="module")
def prices() -> PriceBook:
    return load_prices()


@functools.cache
def _node(node_type_id: str) -> tuple[float, float]:
    node = load_catalog().get(node_type_id)
    assert node is not None and node.usd_per_hour_on_demand is not None and node.dbu_per_hour is not None
    return node.usd_per_hour_on_demand, node.dbu_per_hour


# --- hand-made plans --------------------------------------------------------------------------------------------

def _urn(stack: str, rtype: str, name: str) -> str:
    return f"urn:pulumi:{stack}::dbx-ai-infra::{rtype}::{name}"


def resource(rtype: str, name: str, inputs: dict[str, Any], stack: str = "t") -> dict[str, Any]:
    return {"urn": _urn(stack, rtype, name), "id": f"{name}-id", "type": rtype, "name": name,
            "parent": None, "inputs": inputs}


def cluster(name: str, node: str, *, workers: int | None = 0, autoscale: tuple[int, int] | None = None,
            role: str = "training", availability: str | None = "ON_DEMAND", first_on_demand: int | None = 1,
            cloud: str = "aws", pool: str | None = None, driver: str | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"sparkVersion": "17.3.x-gpu-ml-scala2.13", "customTags": {"workload_type": role}}
    if pool:
        spec["instancePoolId"] = pool
        spec["driverInstancePoolId"] = pool
    else:
        spec["nodeTypeId"] = node
        if driver:
            spec["driverNodeTypeId"] = driver
        if availability is not None:
            block: dict[str, Any] = {"availability": availability}
            if first_on_demand is not None:
                block["firstOnDemand"] = first_on_demand
            spec[f"{cloud}Attributes"] = block
    if autoscale:
        spec["autoscale"] = {"minWorkers": autoscale[0], "maxWorkers": autoscale[1]}
    elif workers is not None:
        spec["numWorkers"] = workers
    spec.update(extra)
    return spec


def job(name: str, *specs: dict[str, Any], stack: str = "t") -> dict[str, Any]:
    clusters = [{"jobClusterKey": f"c{i}", "newCluster": s} for i, s in enumerate(specs)]
    return resource(JOB, name, {"name": name, "jobClusters": clusters,
                                "tasks": [{"taskKey": "train", "jobClusterKey": "c0"}]}, stack)


def pool(name: str, node: str, min_idle: int, cloud: str = "aws", stack: str = "t") -> dict[str, Any]:
    return resource(POOL, name, {"instancePoolName": name, "nodeTypeId": node, "minIdleInstances": min_idle,
                                 "maxCapacity": 10, f"{cloud}Attributes": {"availability": "ON_DEMAND"},
                                 "customTags": {"workload_type": "inference"}}, stack)


def plan_of(*resources: dict[str, Any], cloud: str = "aws", stack: str = "t", **assumptions: Any) -> dict[str, Any]:
    return {"stack": stack, "project": "dbx-ai-infra", "stack_file": f"stacks/Pulumi.{stack}.yaml", "cloud": cloud,
            "resources": list(resources), "outputs": {}, "assumptions": {**ASSUMPTIONS, **assumptions}}


def priced(plan: dict[str, Any], book: PriceBook | None = None) -> dict[str, Any]:
    out = copy.deepcopy(plan)
    out["cost"] = price_plan(out, book or load_prices())
    return out


def entry(cost: dict[str, Any], name: str) -> dict[str, Any]:
    found = [e for e in cost["resources"].values() if e["name"] == name]
    assert len(found) == 1, name
    return found[0]


# --- the price data -----------------------------------------------------------------------------------------------

def test_rates_file_holds_the_reference_figures_with_sources_and_dates(prices):
    raw = yaml.safe_load(RATES_PATH.read_text())
    assert raw["default_tier"] == "premium"
    assert prices.tier == "premium"
    expected = {("aws", "premium"): (0.15, 0.55, 0.07), ("aws", "enterprise"): (0.20, 0.65, 0.07),
                ("azure", "premium"): (0.30, 0.55, 0.07), ("gcp", "premium"): (0.15, 0.55, 0.07),
                ("gcp", "enterprise"): (0.20, 0.65, 0.07)}
    for (cloud, tier), (jobs, ap, serving) in expected.items():
        block = raw["usd_per_dbu"][cloud][tier]
        assert (block["jobs_compute"]["value"], block["all_purpose"]["value"], block["model_serving"]["value"]) \
            == (jobs, ap, serving)
        for figure in block.values():
            assert figure["source"] == "lakemeter_dbu_prices" and str(figure["date"]) == "2026-04-10"
    assert "enterprise" not in raw["usd_per_dbu"]["azure"]  # no Azure Enterprise tier
    # Spot defaults: ESTIMATES inside pricing.md section 5's ranges.
    ranges = {"aws": (0.21, 0.53, AWS_SPOT), "azure": (0.18, 0.30, AZURE_SPOT), "gcp": (0.52, 0.57, GCP_SPOT)}
    for cloud, (lo, hi, default) in ranges.items():
        spot = raw["spot_factor"][cloud]
        assert spot["value"] == default and spot["estimate"] is True and spot["range"] == [lo, hi]
        assert lo <= prices.spot_factor(cloud) <= hi
    assert raw["dbu_on_spot"]["discounted"] is False
    # Node prices are not repeated in rates.yaml: they come from the catalog.
    assert "node_types" not in raw
    text = RATES_PATH.read_text()
    assert "dbx_ai_infra/gpucatalog/node_types.yaml" in text and "ESTIMATE" in text


def test_price_book_reads_node_prices_from_the_catalog(prices):
    catalog = load_catalog()
    for node in catalog:
        assert prices.node(node.node_type_id).usd_per_hour_on_demand == node.usd_per_hour_on_demand
        assert prices.node(node.node_type_id).dbu_per_hour == node.dbu_per_hour
    src = prices.source_of("node_types.g5.xlarge.usd_per_hour_on_demand")
    assert src["date"] == catalog.get("g5.xlarge").price_date and "karpenter_aws_price" in src["source"]
    assert prices.source_of("usd_per_dbu.aws.premium.all_purpose")["date"] == "2026-04-10"
    assert prices.source_of("spot_factor.aws")["estimate"] is True


# --- hand-computed prices ------------------------------------------------------------------------------------------

def test_small_plan_matches_hand_computed_prices():
    vm12, dbu12 = _node("g5.12xlarge")
    vm1, dbu1 = _node("g5.xlarge")
    vm4, dbu4 = _node("g4dn.xlarge")
    plan = plan_of(
        # all-purpose training: driver on demand (firstOnDemand 1), 2 spot workers, 40 h
        resource(CLUSTER, "train", cluster("train", "g5.12xlarge", workers=2, availability="SPOT_WITH_FALLBACK",
                                           first_on_demand=1)),
        # training job cluster: on demand, 1 worker, jobs compute, 80 h
        job("train-job", cluster("j", "g5.12xlarge", workers=1, availability="ON_DEMAND")),
        # inference: autoscale 1..5, firstOnDemand 2 covers the base (driver + 1 worker); the extra workers are spot
        resource(CLUSTER, "serve", cluster("serve", "g5.xlarge", autoscale=(1, 5), role="inference",
                                           availability="SPOT_WITH_FALLBACK", first_on_demand=2)),
        # interactive single node on demand: 6 h x 21 days
        resource(CLUSTER, "dev", cluster("dev", "g4dn.xlarge", workers=0, role="interactive")),
    )
    cost = price_plan(plan, load_prices())

    # training cluster
    driver = vm12 + dbu12 * AWS_PREMIUM_ALL_PURPOSE
    spot_worker = vm12 * _spot("g5.12xlarge") + dbu12 * AWS_PREMIUM_ALL_PURPOSE
    train_hourly = driver + 2 * spot_worker
    train = entry(cost, "train")
    assert train["compute_kind"] == "all_purpose" and train["workload_type"] == "training"
    assert train["nodes"] == {"min": 3, "max": 3}
    assert train["hourly"] == pytest.approx(train_hourly)
    assert train["monthly"] == pytest.approx({"min": train_hourly * 40, "expected": train_hourly * 40,
                                              "max": train_hourly * 40})
    assert train["all_on_demand_monthly_expected"] == pytest.approx(3 * driver * 40)
    assert train["saving_monthly_expected"] == pytest.approx(2 * vm12 * (1 - _spot("g5.12xlarge")) * 40)

    # job cluster
    job_node = vm12 + dbu12 * AWS_PREMIUM_JOBS
    tj = entry(cost, "train-job")
    assert tj["compute_kind"] == "jobs_compute"
    assert tj["hourly"] == pytest.approx(2 * job_node)
    assert tj["monthly"]["expected"] == pytest.approx(2 * job_node * 80)
    assert tj["saving_monthly_expected"] == pytest.approx(0)

    # inference
    od = vm1 + dbu1 * AWS_PREMIUM_ALL_PURPOSE
    spot = vm1 * _spot("g5.xlarge") + dbu1 * AWS_PREMIUM_ALL_PURPOSE
    base = 2 * od                    # driver + min worker, both within firstOnDemand 2
    full = base + 4 * spot           # workers 2..5 are nodes 3..6: spot
    extra = (5 - 1) / 2              # half the headroom: 2 workers, both spot
    serve = entry(cost, "serve")
    assert serve["nodes"] == {"min": 2, "max": 6}
    assert serve["hourly"] == pytest.approx(base)
    assert serve["hourly_max"] == pytest.approx(full)
    assert serve["monthly"]["min"] == pytest.approx(base * 730)
    assert serve["monthly"]["expected"] == pytest.approx(base * 730 + extra * spot * 120)
    assert serve["monthly"]["max"] == pytest.approx(full * 730)
    assert serve["all_on_demand_monthly_expected"] == pytest.approx(base * 730 + extra * od * 120)

    # interactive
    dev_node = vm4 + dbu4 * AWS_PREMIUM_ALL_PURPOSE
    dev = entry(cost, "dev")
    assert dev["nodes"] == {"min": 1, "max": 1}
    assert dev["monthly"]["expected"] == pytest.approx(dev_node * 6 * 21)

    # totals and by workload
    expected_total = (train_hourly * 40 + 2 * job_node * 80 + base * 730 + extra * spot * 120 + dev_node * 126)
    assert cost["total"]["monthly"]["expected"] == pytest.approx(expected_total)
    assert cost["total"]["hourly"] == pytest.approx(train_hourly + 2 * job_node + base + dev_node)
    assert cost["total"]["hourly_max"] == pytest.approx(train_hourly + 2 * job_node + full + dev_node)
    assert cost["by_workload"] == pytest.approx({"training": train_hourly * 40 + 2 * job_node * 80,
                                                 "inference": base * 730 + extra * spot * 120,
                                                 "interactive": dev_node * 126})
    assert list(cost["by_workload"]) == ["training", "inference", "interactive"]
    assert cost["currency"] == "USD" and cost["tier"] == "premium" and cost["unpriced"] == []
    assert cost["assumptions"]["inference_hours_per_month"] == 730


def test_worked_examples_of_the_pricing_page_hold():
    """docs/pricing-model.md, the docs' page on how prices are computed, works an all-purpose training cluster and
    dev's spot mix above the base by hand; the engine agrees (prod's job and inference cluster, the page's other
    examples, are held by tests/test_readme_figures.py)."""
    from pathlib import Path

    from dbx_ai_infra.engine.pipeline import build_plan

    page = (Path(__file__).resolve().parent.parent / "docs" / "pricing-model.md").read_text()
    vm, dbu = _node("p4d.24xlarge")
    hourly = (vm + dbu * AWS_PREMIUM_ALL_PURPOSE) + 2 * (vm * _spot("p4d.24xlarge") + dbu * AWS_PREMIUM_ALL_PURPOSE)
    cost = price_plan(plan_of(resource(CLUSTER, "prod-training-cluster", cluster(
        "x", "p4d.24xlarge", workers=2, availability="SPOT_WITH_FALLBACK", first_on_demand=1))), load_prices())
    assert entry(cost, "prod-training-cluster")["monthly"]["expected"] == pytest.approx(hourly * 40)
    assert f"{hourly:.7f}" in page and f"{hourly * 40:,.6f}" in page
    dev = build_plan("dev", with_cost=True).cost
    (inference,) = [e for e in dev.resources.values() if e.name == "dev-inference-cluster"]
    assert f"**{inference.monthly.expected:.5f} $**" in page and f"{inference.hourly_max:.6f}" in page


def test_dbu_rate_follows_the_compute_kind_and_the_cloud():
    vm, dbu = _node("Standard_NC4as_T4_v3")
    plan = plan_of(job("j", cluster("j", "Standard_NC4as_T4_v3", workers=0, cloud="azure",
                                    availability="ON_DEMAND_AZURE")), cloud="azure")
    cost = price_plan(plan, load_prices())
    assert entry(cost, "j")["hourly"] == pytest.approx(vm + dbu * AZURE_PREMIUM_JOBS)


def test_plan_is_not_modified_and_money_is_not_rounded(prices):
    plan = plan_of(resource(CLUSTER, "a", cluster("a", "p4d.24xlarge", workers=1)))
    before = copy.deepcopy(plan)
    cost = price_plan(plan, prices)
    assert plan == before
    vm, dbu = _node("p4d.24xlarge")
    hourly = entry(cost, "a")["hourly"]
    assert hourly == pytest.approx(2 * (vm + dbu * AWS_PREMIUM_ALL_PURPOSE))
    assert round(hourly, 2) != hourly  # kept at full precision; renderers round


# --- diffs ----------------------------------------------------------------------------------------------------------

def _small_plan() -> dict[str, Any]:
    return plan_of(
        resource(CLUSTER, "train", cluster("train", "g5.12xlarge", workers=2, availability="SPOT_WITH_FALLBACK")),
        resource(CLUSTER, "serve", cluster("serve", "g5.xlarge", autoscale=(2, 6), role="inference")),
        pool("p", "g5.xlarge", 1),
    )


def test_diff_of_a_plan_against_itself_is_zero():
    plan = priced(_small_plan())
    diff = diff_costs(plan, plan)
    assert diff["counts"] == {"added": 0, "removed": 0, "changed": 0, "unchanged": 3}
    for row in diff["rows"]:
        assert row["status"] == "unchanged" and row["changes"] == []
        assert all(v == 0 for v in row["delta"].values())
    assert all(v == 0 for v in diff["total"]["delta"].values())
    assert all(w["delta"] == 0 for w in diff["by_workload"].values())


def test_diff_of_shipped_stack_against_itself_is_zero():
    from dbx_ai_infra.engine.pipeline import build_plan

    plan = build_plan("prod", with_policies=False).to_json()
    plan["cost"] = price_plan(plan, load_prices())
    diff = diff_costs(plan, copy.deepcopy(plan))
    assert diff["counts"]["unchanged"] == len(plan["cost"]["resources"]) > 0
    assert all(v == 0 for v in diff["total"]["delta"].values())


def test_diff_reports_added_removed_and_changed_resources():
    base = _small_plan()
    head = copy.deepcopy(base)
    head["resources"] = [r for r in head["resources"] if r["name"] != "p"]            # removed
    head["resources"][0]["inputs"]["numWorkers"] = 3                                   # changed
    head["resources"].append(resource(CLUSTER, "dev", cluster("dev", "g4dn.xlarge", role="interactive")))  # added
    b, h = priced(base), priced(head)
    diff = diff_costs(b, h)
    status = {r["name"]: r["status"] for r in diff["rows"]}
    assert status == {"train": "changed", "serve": "unchanged", "dev": "added", "p": "removed"}
    rows = {r["name"]: r for r in diff["rows"]}
    assert "nodes" in rows["train"]["changes"]
    assert rows["dev"]["base"] is None
    assert rows["dev"]["delta"]["monthly_expected"] == pytest.approx(entry(h["cost"], "dev")["monthly"]["expected"])
    assert rows["p"]["head"] is None
    assert rows["p"]["delta"]["monthly_expected"] == pytest.approx(-entry(b["cost"], "p")["monthly"]["expected"])
    total_delta = h["cost"]["total"]["monthly"]["expected"] - b["cost"]["total"]["monthly"]["expected"]
    assert diff["total"]["delta"]["monthly_expected"] == pytest.approx(total_delta)
    assert sum(r["delta"]["monthly_expected"] for r in diff["rows"]) == pytest.approx(total_delta)


def test_diff_needs_cost_objects():
    with pytest.raises(InputError, match="cost"):
        diff_costs(_small_plan(), _small_plan())


# --- one worker more ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("availability, first_on_demand", [("ON_DEMAND", None), ("SPOT_WITH_FALLBACK", 1),
                                                           ("SPOT_WITH_FALLBACK", 5)])
def test_adding_a_worker_adds_exactly_one_node_cost(availability, first_on_demand):
    vm, dbu = _node("g5.4xlarge")
    on_demand_node = vm + dbu * AWS_PREMIUM_ALL_PURPOSE
    spot_node = vm * _spot("g5.4xlarge") + dbu * AWS_PREMIUM_ALL_PURPOSE

    def cost_with(workers: int) -> dict[str, Any]:
        return priced(plan_of(resource(CLUSTER, "c", cluster("c", "g5.4xlarge", workers=workers,
                                                             availability=availability,
                                                             first_on_demand=first_on_demand))))

    before, after = cost_with(2), cost_with(3)
    # the 4th node: spot unless on demand or within firstOnDemand
    fourth = spot_node if availability.startswith("SPOT") and 4 > (first_on_demand or 1) else on_demand_node
    diff = diff_costs(before, after)
    assert diff["total"]["delta"]["hourly"] == pytest.approx(fourth)
    assert diff["total"]["delta"]["monthly_expected"] == pytest.approx(fourth * 40)
    assert diff["rows"][0]["status"] == "changed"


# --- spot mix --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cloud, node, availability, on_demand, factor, rate", [
    ("aws", "g5.12xlarge", "SPOT_WITH_FALLBACK", "ON_DEMAND", _spot("g5.12xlarge"), AWS_PREMIUM_ALL_PURPOSE),
    ("aws", "g5.12xlarge", "SPOT", "ON_DEMAND", _spot("g5.12xlarge"), AWS_PREMIUM_ALL_PURPOSE),
    ("azure", "Standard_NC24ads_A100_v4", "SPOT_WITH_FALLBACK_AZURE", "ON_DEMAND_AZURE",
     _spot("Standard_NC24ads_A100_v4", "azure"), 0.55),
    ("gcp", "a2-highgpu-1g", "PREEMPTIBLE_WITH_FALLBACK_GCP", "ON_DEMAND_GCP", _spot("a2-highgpu-1g", "gcp"), 0.55),
])
def test_spot_lowers_the_vm_price_of_the_spot_share_only(cloud, node, availability, on_demand, factor, rate):
    vm, dbu = _node(node)
    workers = 3

    def hourly(avail: str, fod: int | None = 1) -> dict[str, Any]:
        c = cluster("c", node, workers=workers, cloud=cloud, availability=avail, first_on_demand=fod)
        return entry(price_plan(plan_of(resource(CLUSTER, "c", c), cloud=cloud), load_prices()), "c")

    od, spot = hourly(on_demand), hourly(availability)
    # driver on demand (firstOnDemand 1, as the components set it), 3 spot workers: only their VM part is discounted
    assert spot["spot_nodes"] == {"min": 3, "max": 3}
    assert od["hourly"] - spot["hourly"] == pytest.approx(workers * vm * (1 - factor))
    assert spot["hourly"] == pytest.approx(vm + dbu * rate + workers * (vm * factor + dbu * rate))
    # the DBU part is unchanged: remove the VM part and both are equal
    assert od["hourly"] - (workers + 1) * vm == pytest.approx(spot["hourly"] - vm - workers * vm * factor)
    # firstOnDemand 2: one spot worker fewer
    two = hourly(availability, 2)
    assert two["hourly"] - spot["hourly"] == pytest.approx(vm * (1 - factor))
    # firstOnDemand 0: the driver is spot too; and so is an absent firstOnDemand (the provider's default is 0)
    zero = hourly(availability, 0)
    assert spot["hourly"] - zero["hourly"] == pytest.approx(vm * (1 - factor))
    assert hourly(availability, None)["hourly"] == pytest.approx(zero["hourly"])
    assert spot["saving_monthly_expected"] == pytest.approx(workers * vm * (1 - factor) * 40)


def test_spot_factor_one_equals_on_demand_and_dbu_is_never_discounted():
    plan = plan_of(resource(CLUSTER, "c", cluster("c", "g5.12xlarge", workers=3, availability="SPOT")))
    full = load_prices(PriceOverrides(spot_factor={"aws": 1.0}))
    on_demand = plan_of(resource(CLUSTER, "c", cluster("c", "g5.12xlarge", workers=3)))
    assert entry(price_plan(plan, full), "c")["hourly"] == pytest.approx(
        entry(price_plan(on_demand, full), "c")["hourly"])
    # a tiny spot factor leaves the DBU part of every node in full
    vm, dbu = _node("g5.12xlarge")
    tiny = load_prices(PriceOverrides(spot_factor={"aws": 1e-9}))
    assert entry(price_plan(plan, tiny), "c")["hourly"] == pytest.approx(vm + 4 * dbu * AWS_PREMIUM_ALL_PURPOSE,
                                                                           rel=1e-6)


def test_missing_attributes_block_follows_the_cloud_default():
    vm, dbu = _node("g5.xlarge")
    aws = cluster("c", "g5.xlarge", workers=2, availability=None)
    cost = price_plan(plan_of(resource(CLUSTER, "c", aws)), load_prices())
    # AWS backend default: SPOT_WITH_FALLBACK, and firstOnDemand 0 (the provider's default): all three nodes spot
    assert entry(cost, "c")["hourly"] == pytest.approx(3 * (vm * _spot("g5.xlarge") + dbu * 0.55))
    vm_g, dbu_g = _node("g2-standard-4")
    gcp = cluster("c", "g2-standard-4", workers=2, availability=None, cloud="gcp")
    cost = price_plan(plan_of(resource(CLUSTER, "c", gcp), cloud="gcp"), load_prices())
    assert entry(cost, "c")["hourly"] == pytest.approx(3 * (vm_g + dbu_g * 0.55))


def test_burst_workers_use_the_configured_average_and_stay_within_the_headroom():
    vm, dbu = _node("g5.xlarge")
    node = vm + dbu * AWS_PREMIUM_ALL_PURPOSE
    serve = resource(CLUSTER, "s", cluster("s", "g5.xlarge", autoscale=(2, 6), role="inference"))
    cost = price_plan(plan_of(serve, inference_burst_avg_extra_workers=1.5), load_prices())
    e = entry(cost, "s")
    assert e["monthly"]["expected"] == pytest.approx(3 * node * 730 + 1.5 * node * 120)
    capped = entry(price_plan(plan_of(serve, inference_burst_avg_extra_workers=50), load_prices()), "s")
    assert capped["monthly"]["expected"] == pytest.approx(3 * node * 730 + 4 * node * 120)
    assert capped["monthly"]["expected"] <= capped["monthly"]["max"]


# --- pools ----------------------------------------------------------------------------------------------------------

def test_pool_idle_cost_is_vm_only_and_pool_backed_clusters_are_on_demand():
    vm, dbu = _node("g5.2xlarge")
    p = pool("p", "g5.2xlarge", 3)
    c = resource(CLUSTER, "serve", cluster("serve", "ignored", autoscale=(1, 3), role="inference", pool="p-id"))
    cost = price_plan(plan_of(p, c, pool_idle_hours_per_month=500), load_prices())
    idle = entry(cost, "p")
    assert idle["hourly"] == pytest.approx(3 * vm)
    assert idle["monthly"] == pytest.approx({"min": 3 * vm * 500, "expected": 3 * vm * 500, "max": 3 * vm * 500})
    assert idle["saving_monthly_expected"] == 0
    assert idle["workload_type"] == "inference"
    serve = entry(cost, "serve")
    node = vm + dbu * AWS_PREMIUM_ALL_PURPOSE
    assert serve["node_type_id"] == "g5.2xlarge"
    assert serve["spot_nodes"] == {"min": 0, "max": 0}
    assert serve["hourly"] == pytest.approx(2 * node) and serve["hourly_max"] == pytest.approx(4 * node)
    assert cost["total"]["monthly"]["expected"] == pytest.approx(
        3 * vm * 500 + 2 * node * 730 + 1 * node * 120)


def test_cluster_on_a_pool_missing_from_the_plan_is_unpriced():
    c = resource(CLUSTER, "serve", cluster("serve", "x", workers=1, role="inference", pool="nowhere-id"))
    cost = price_plan(plan_of(c), load_prices())
    assert "nowhere-id" in entry(cost, "serve")["unpriced"]


# --- unpriced ---------------------------------------------------------------------------------------------------------

def test_unknown_node_type_is_flagged_and_left_out_of_the_totals():
    good = resource(CLUSTER, "good", cluster("good", "g5.xlarge", workers=1))
    bad = resource(CLUSTER, "bad", cluster("bad", "x9.mega", workers=1))
    cost = price_plan(plan_of(good, bad), load_prices())
    only_good = price_plan(plan_of(good), load_prices())
    e = entry(cost, "bad")
    assert "x9.mega" in e["unpriced"] and "--prices" in e["unpriced"]
    assert e["hourly"] is None and e["monthly"] == {"min": None, "expected": None, "max": None}
    assert cost["unpriced"] == [{"urn": bad["urn"], "name": "bad", "reason": e["unpriced"], "hourly": None}]
    # the same figures as the plan without it, and the total says what it leaves out
    assert {k: v for k, v in cost["total"].items() if "complete" not in k and "unpriced" not in k} == \
        {k: v for k, v in only_good["total"].items() if "complete" not in k and "unpriced" not in k}
    assert cost["total"]["complete"] is False and cost["total"]["unpriced"] == ["bad"]
    assert only_good["total"]["complete"] is True and only_good["total"]["unpriced"] == []
    assert cost["by_workload"] == only_good["by_workload"]


def test_null_catalog_price_is_unpriced_not_zero():
    base = load_catalog().get("g5.xlarge")
    fields = {**base.__dict__, "node_type_id": "g5.free", "usd_per_hour_on_demand": None, "price_region": None,
              "price_date": None}
    catalog = Catalog([*load_catalog(), NodeType(**fields)], load_catalog().sources)
    book = load_prices(catalog=catalog)
    cost = price_plan(plan_of(resource(CLUSTER, "c", cluster("c", "g5.free", workers=1)),
                              resource(POOL, "p", pool("p", "g5.free", 2)["inputs"])), book)
    assert "no on-demand VM price" in entry(cost, "c")["unpriced"]
    assert entry(cost, "p")["unpriced"] is not None
    assert cost["total"]["monthly"]["expected"] == 0 and len(cost["unpriced"]) == 2


def test_unpriced_driver_or_job_cluster_makes_the_whole_resource_unpriced():
    c = resource(CLUSTER, "c", cluster("c", "g5.xlarge", workers=1, driver="m9.weird"))
    j = job("j", cluster("a", "g5.xlarge", workers=1), cluster("b", "nope.large", workers=1))
    cost = price_plan(plan_of(c, j), load_prices())
    assert "m9.weird" in entry(cost, "c")["unpriced"]
    assert "jobClusters[c1].newCluster" in entry(cost, "j")["unpriced"]
    assert cost["total"]["hourly"] == 0


def test_unknown_role_and_missing_tier_rate_are_unpriced():
    untagged = cluster("u", "g5.xlarge", workers=1)
    untagged["customTags"] = {}
    cost = price_plan(plan_of(resource(CLUSTER, "u", untagged)), load_prices())
    assert "workload_type" in entry(cost, "u")["unpriced"]
    # Azure has no Enterprise tier
    az = cluster("a", "Standard_NC4as_T4_v3", workers=0, cloud="azure", availability="ON_DEMAND_AZURE")
    plan = plan_of(resource(CLUSTER, "a", az), cloud="azure")
    cost = price_plan(plan, load_prices(PriceOverrides(tier="enterprise")))
    assert "enterprise" in entry(cost, "a")["unpriced"]
    # ... unless the rate is given
    fixed = load_prices(PriceOverrides(tier="enterprise", usd_per_dbu={"azure": {"all_purpose": 0.6}}))
    vm, dbu = _node("Standard_NC4as_T4_v3")
    assert entry(price_plan(plan, fixed), "a")["hourly"] == pytest.approx(vm + dbu * 0.6)


def test_role_falls_back_to_the_shape_when_untagged():
    auto = cluster("s", "g5.xlarge", autoscale=(1, 2))
    auto["customTags"] = {}
    single = cluster("d", "g5.xlarge", workers=0, sparkConf={"spark.databricks.cluster.profile": "singleNode"})
    single["customTags"] = {}
    in_job = cluster("j", "g5.xlarge", workers=1)
    in_job["customTags"] = {}
    cost = price_plan(plan_of(resource(CLUSTER, "s", auto), resource(CLUSTER, "d", single), job("j", in_job)),
                      load_prices())
    # issue 51, item 5: the untagged autoscaled all-purpose GPU cluster is inference by its shape, and priced as one
    assert [entry(cost, n)["workload_type"] for n in ("s", "d", "j")] == ["inference", "interactive", "training"]
    assert not entry(cost, "s")["unpriced"]


def test_invalid_assumptions_raise():
    plan = plan_of(resource(CLUSTER, "c", cluster("c", "g5.xlarge")), training_hours_per_month=-1)
    with pytest.raises(InputError, match="training_hours_per_month"):
        price_plan(plan, load_prices())
    with pytest.raises(InputError, match="cloud"):
        price_plan({**plan_of(), "cloud": "oracle"}, load_prices())


# --- overrides ---------------------------------------------------------------------------------------------------------

def test_override_objects_change_the_result():
    vm, dbu = _node("g5.xlarge")
    plan = plan_of(resource(CLUSTER, "c", cluster("c", "g5.xlarge", workers=1, availability="SPOT_WITH_FALLBACK")))
    default = entry(price_plan(plan, load_prices()), "c")["hourly"]
    own = _spot("g5.xlarge")
    assert default == pytest.approx(vm + dbu * 0.55 + vm * own + dbu * 0.55)
    spot = entry(price_plan(plan, load_prices(PriceOverrides(spot_factor={"aws": 0.3}))), "c")["hourly"]
    assert spot == pytest.approx(vm + dbu * 0.55 + vm * 0.3 + dbu * 0.55)
    tier = entry(price_plan(plan, load_prices(PriceOverrides(tier="enterprise"))), "c")["hourly"]
    assert tier == pytest.approx(vm + vm * own + 2 * dbu * AWS_ENTERPRISE_ALL_PURPOSE)
    node = load_prices({"node_types": {"g5.xlarge": {"usd_per_hour_on_demand": 2.0}}})
    assert entry(price_plan(plan, node), "c")["hourly"] == pytest.approx(2.0 + 2.0 * own + 2 * dbu * 0.55)
    # an override reprices a catalog node type (the CPU driver); one the catalog does not know is refused
    cpu = plan_of(resource(CLUSTER, "cpu", cluster("cpu", "m5.2xlarge", workers=1)))
    book = load_prices(PriceOverrides(node_types={"m5.2xlarge": {"usd_per_hour_on_demand": 0.312,
                                                                "dbu_per_hour": 1.0}}))
    assert entry(price_plan(cpu, book), "cpu")["hourly"] == pytest.approx(2 * (0.312 + 1.0 * 0.55))
    for typo, guess in (("g5.xlage", "g5.xlarge"), ("G5.XLARGE", "g5.xlarge"), ("x1e.xlarge", None)):
        with pytest.raises(InputError, match=r"is not a node type of the node catalog") as excinfo:
            load_prices(PriceOverrides(node_types={typo: {"usd_per_hour_on_demand": 1.0}}))
        assert guess is None or f"did you mean '{guess}'" in str(excinfo.value)


def test_later_overrides_win_and_sources_name_them(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("tier: enterprise\nspot_factor:\n  aws: 0.5\nusd_per_dbu:\n  aws:\n    all_purpose: 0.6\n")
    from_file = load_overrides_file(path)
    assert from_file.tier == "enterprise" and from_file.spot_factor == {"aws": 0.5}
    book = load_prices(from_file, None, PriceOverrides(spot_factor={"aws": 0.35}))
    assert book.tier == "enterprise"
    assert book.spot_factor("aws") == 0.35
    assert book.usd_per_dbu("aws", "all_purpose") == 0.6
    assert book.usd_per_dbu("aws", "jobs_compute") == 0.20  # enterprise list price
    assert str(path) in book.source_of("usd_per_dbu.aws.enterprise.all_purpose")["source"]
    assert book.source_of("spot_factor.aws")["source"] == "override"
    vm, dbu = _node("g5.xlarge")
    plan = plan_of(resource(CLUSTER, "c", cluster("c", "g5.xlarge", workers=1, availability="SPOT_WITH_FALLBACK")))
    cost = price_plan(plan, book)
    assert entry(cost, "c")["hourly"] == pytest.approx(vm + vm * 0.35 + 2 * dbu * 0.6)
    assert any(s["figure"] == "usd_per_dbu.aws.enterprise.all_purpose" and str(path) in s["source"]
               for s in cost["sources"])


def test_empty_overrides_file_changes_nothing(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("")
    plan = _small_plan()
    assert price_plan(plan, load_prices(load_overrides_file(path)))["total"] == \
        price_plan(plan, load_prices())["total"]


@pytest.mark.parametrize("text, field", [
    ("spot_factor: [0.4\n", "line"),
    ("spot_factors:\n  aws: 0.4\n", "spot_factors"),
    ("spot_factor:\n  aws: cheap\n", "spot_factor.aws"),
    ("spot_factor:\n  aws: 1.5\n", "spot_factor.aws"),
    ("spot_factor:\n  oracle: 0.5\n", "oracle"),
    ("tier: gold\n", "tier"),
    ("usd_per_dbu:\n  aws:\n    sql: 0.2\n", "usd_per_dbu.aws"),
    ("usd_per_dbu:\n  aws:\n    all_purpose: -1\n", "usd_per_dbu.aws.all_purpose"),
    ("node_types:\n  g5.xlarge:\n    usd_per_hour: 1.0\n", "node_types['g5.xlarge'].usd_per_hour"),
    ("node_types:\n  g5.xlarge:\n    dbu_per_hour: true\n", "node_types['g5.xlarge'].dbu_per_hour"),
    ("node_types:\n  g5.xlarge: 1.0\n", "node_types['g5.xlarge']"),
    ("- tier: premium\n", "mapping"),
])
def test_invalid_override_files_raise_naming_the_file_and_field(tmp_path, text, field):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_overrides_file(path)
    message = str(info.value)
    assert str(path) in message
    assert field in message
    assert "Fix:" in message
    assert isinstance(info.value, ValueError)


def test_unknown_key_error_suggests_the_right_one(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text("spot_factr:\n  aws: 0.4\n")
    with pytest.raises(InputError, match="did you mean 'spot_factor'"):
        load_overrides_file(path)


def test_missing_overrides_file_raises(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_overrides_file(tmp_path / "nope.yaml")


def test_override_model_is_strict():
    with pytest.raises(ValueError):
        PriceOverrides.model_validate({"spot_factor": {"aws": 0}})
    with pytest.raises(ValueError):
        PriceOverrides.model_validate({"colour": "blue"})
    with pytest.raises(InputError, match="spot_factor.aws"):
        load_prices({"spot_factor": {"aws": "0.4"}})


# --- shipped stacks ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("stack", ["dev", "prod", "azure-prod", "gcp-dev"])
def test_shipped_stacks_are_fully_priced_and_consistent(stack):
    from dbx_ai_infra.engine.pipeline import build_plan

    plan = build_plan(stack, with_policies=False).to_json()
    cost = price_plan(plan, load_prices())
    assert cost["unpriced"] == []
    clusters = [r for r in plan["resources"] if r["type"] in (CLUSTER, JOB, POOL, MODEL_SERVING_ENDPOINT)]
    assert set(cost["resources"]) == {r["urn"] for r in clusters}
    for e in cost["resources"].values():
        m = e["monthly"]
        assert 0 <= m["min"] <= m["expected"] <= m["max"]
        assert e["hourly"] <= e["hourly_max"]
        assert e["saving_monthly_expected"] >= -1e-9
        assert e["workload_type"] in ("training", "inference", "interactive", "serving")
    total = cost["total"]
    assert total["monthly"]["expected"] == pytest.approx(sum(cost["by_workload"].values()))
    assert total["monthly"]["expected"] == pytest.approx(
        sum(e["monthly"]["expected"] for e in cost["resources"].values()))
    figures = {s["figure"] for s in cost["sources"]}
    assert any(f.startswith(f"usd_per_dbu.{plan['cloud']}.premium.") for f in figures)
    assert all(s["source"] for s in cost["sources"])


# --- monotone in workers and hours (hypothesis) ---------------------------------------------------------------------

_NODES = ["g5.xlarge", "g5.12xlarge", "p4d.24xlarge", "g4dn.xlarge"]
_AVAILABILITY = ["ON_DEMAND", "SPOT_WITH_FALLBACK", "SPOT"]


@settings(max_examples=30, deadline=None)
@given(node=st.sampled_from(_NODES), availability=st.sampled_from(_AVAILABILITY),
       fod=st.integers(min_value=0, max_value=4), workers=st.integers(min_value=0, max_value=12),
       role=st.sampled_from(["training", "interactive"]))
def test_cost_grows_with_workers(node, availability, fod, workers, role):
    def cost(n: int) -> dict[str, Any]:
        c = cluster("c", node, workers=n, availability=availability, first_on_demand=fod, role=role)
        return entry(price_plan(plan_of(resource(CLUSTER, "c", c)), _BOOK), "c")

    a, b = cost(workers), cost(workers + 1)
    assert b["hourly"] > a["hourly"]
    assert b["monthly"]["expected"] > a["monthly"]["expected"]
    assert b["all_on_demand_monthly_expected"] >= b["monthly"]["expected"]


@settings(max_examples=30, deadline=None)
@given(lo=st.integers(min_value=0, max_value=6), extra=st.integers(min_value=0, max_value=6),
       more=st.integers(min_value=1, max_value=4), fod=st.integers(min_value=0, max_value=8),
       burst=st.floats(min_value=0, max_value=744), avg=st.one_of(st.none(), st.floats(min_value=0, max_value=10)))
def test_inference_cost_grows_with_max_workers_and_stays_ordered(lo, extra, more, fod, burst, avg):
    # A single node (0..0 workers) keeps its driver on demand whatever firstOnDemand says; skip that edge here.
    assume(lo + extra > 0 or fod > 0)
    def cost(hi: int) -> dict[str, Any]:
        c = cluster("s", "g5.xlarge", autoscale=(lo, hi), role="inference", availability="SPOT_WITH_FALLBACK",
                    first_on_demand=fod)
        plan = plan_of(resource(CLUSTER, "s", c), inference_burst_hours_per_month=burst,
                       inference_burst_avg_extra_workers=avg)
        return entry(price_plan(plan, _BOOK), "s")

    a, b = cost(lo + extra), cost(lo + extra + more)
    for e in (a, b):
        m = e["monthly"]
        assert m["min"] <= m["expected"] + 1e-9 and m["expected"] <= m["max"] + 1e-9
    assert b["monthly"]["max"] > a["monthly"]["max"]
    assert b["monthly"]["min"] == pytest.approx(a["monthly"]["min"])
    if avg is None:
        assert b["monthly"]["expected"] >= a["monthly"]["expected"] - 1e-9


@settings(max_examples=30, deadline=None)
@given(h1=st.floats(min_value=0, max_value=744), h2=st.floats(min_value=0, max_value=744),
       key=st.sampled_from(["training_hours_per_month", "training_job_hours_per_month", "inference_hours_per_month",
                            "inference_burst_hours_per_month", "pool_idle_hours_per_month",
                            "dev_hours_per_working_day", "working_days_per_month"]))
def test_cost_grows_with_hours(h1, h2, key):
    lo_h, hi_h = sorted((h1, h2))
    plan = _small_plan()
    plan["resources"].append(job("j", cluster("j", "g5.xlarge", workers=1)))
    plan["resources"].append(resource(CLUSTER, "dev", cluster("dev", "g4dn.xlarge", role="interactive")))
    low = price_plan({**plan, "assumptions": {**ASSUMPTIONS, key: lo_h}}, _BOOK)["total"]["monthly"]
    high = price_plan({**plan, "assumptions": {**ASSUMPTIONS, key: hi_h}}, _BOOK)["total"]["monthly"]
    for k in ("min", "expected", "max"):
        assert low[k] <= high[k] + 1e-9


_BOOK = load_prices()


def test_total_is_finite_for_extreme_but_valid_assumptions():
    cost = price_plan(plan_of(*_small_plan()["resources"], inference_hours_per_month=0,
                              inference_burst_hours_per_month=744), _BOOK)
    assert all(math.isfinite(v) for v in cost["total"]["monthly"].values())
    e = entry(cost, "serve")
    assert e["monthly"]["expected"] == 0  # the burst cannot exceed the hours the base is up


def test_a_total_past_any_real_cost_is_invalid_input_though_each_entry_is_not():
    """$/DBU overrides that leave each resource's cost under MAX_PLAN_NUMBER but put the plan's sums past it: the
    cost refuses the figures (no resource named: the sum is what is too large), never a total of that size."""
    from dbx_ai_infra.dbxtypes.plan import MAX_PLAN_NUMBER
    from dbx_ai_infra.engine.pipeline import build_plan

    plan = build_plan("prod", with_policies=False, with_cost=False)
    rate = 1e11
    book = load_prices({"usd_per_dbu": {"aws": {"all_purpose": rate, "jobs_compute": rate}}})
    with pytest.raises(InputError, match=r"prices: the figures give a cost that is not a finite number\. Fix: check "
                                         r"the price overrides for figures too large"):
        pricing.price_plan(plan, book)
    # each entry alone is under the bound (a resource past it is named instead)
    single = [plan.model_copy(update={"resources": [r]}) for r in plan.resources]
    assert all(abs(e.monthly.expected or 0) <= MAX_PLAN_NUMBER for one in single
               for e in pricing.price_plan(one, book).resources.values())
