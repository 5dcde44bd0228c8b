"""The cost per 1,000 requests of each workload with requests (issue 29, seed 000 s5: "is the unit cost per request
falling"): the bill's DBUs plus the cost model's VM part over the window, per thousand requests, and its halves."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from dbx_ai_infra.advise.telemetry import write_exports
from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.engine.pipeline import build_plan


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("unit")
    plan = build_plan("dev", with_policies=False, with_cost=True)
    write_exports(root / "usage", plan, days=2, full_window=True)
    out = root / "a.json"
    assert main(["advise", "--stack", "dev", "--usage", str(root / "usage"), "--json", "--out", str(out)]) == 0
    return {"plan": plan, "root": root, "doc": json.loads(out.read_text())}


def test_every_workload_with_requests_has_its_cost_per_1k_requests(dev) -> None:
    plan, doc = dev["plan"], dev["doc"]
    by_name = {w["workload"]: w for w in doc["workloads"]}
    served = by_name["dev-inference"]
    requests = list(csv.DictReader((dev["root"] / "usage" / "requests.csv").open()))
    assert served["requests"] == len(requests) > 0
    entry = next(plan.cost.resources[r.urn] for r in plan.resources if r.name == "dev-inference-cluster")
    vm_monthly = float(entry.monthly.expected) - float(entry.dbu_monthly_expected)
    hours = 48.0  # the export's two whole days
    billed = served["billed_monthly_usd"] * hours / 730
    expected = (billed + vm_monthly * hours / 730) * 1000 / len(requests)
    assert served["cost_per_1k_requests"] == pytest.approx(expected, rel=1e-3)
    # a workload without requests has none
    assert by_name["dev-dev"]["cost_per_1k_requests"] is None and by_name["dev-dev"]["requests"] is None


def test_the_trend_compares_the_window_s_halves(dev) -> None:
    w = next(w for w in dev["doc"]["workloads"] if w["workload"] == "dev-inference")
    first, second = w["cost_per_1k_requests_first_half"], w["cost_per_1k_requests_second_half"]
    assert first and second
    assert w["cost_per_1k_requests_trend_percent"] == pytest.approx(100 * (second / first - 1), abs=0.1)


def test_the_reports_show_it(dev, tmp_path: Path) -> None:
    usage = dev["root"] / "usage"
    for fmt in ("markdown", "html"):
        out = tmp_path / f"a.{fmt}"
        assert main(["advise", "--stack", "dev", "--usage", str(usage), "--format", fmt, "--out", str(out)]) == 0
        text = out.read_text()
        assert "$ per 1k requests" in text and "2nd half vs 1st" in text and "GPU memory peak %" in text
    assert "Cost per 1,000 requests: is it falling" in (tmp_path / "a.html").read_text()
