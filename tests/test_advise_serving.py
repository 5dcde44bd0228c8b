"""advise on Model Serving endpoints (issue 29): their inference tables (``serving_requests``) read, their requests in
flight by Little's law, launches from zero, and the three serving findings with priced proposals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dbx_ai_infra.advise.analysis import emitted_sql, run_local
from dbx_ai_infra.advise.targets import endpoint_rows, endpoint_targets, target_rows, targets_of
from dbx_ai_infra.advise.telemetry import write_exports
from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.advise_thresholds import advise_settings
from dbx_ai_infra.engine.pipeline import build_plan
from tests.test_advise import STACK

SLA = 1000.0


@pytest.fixture(scope="module")
def stack_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serving") / "Pulumi.obs.yaml"
    path.write_text(STACK, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def plan(stack_file: Path) -> Any:
    return build_plan(str(stack_file), with_policies=False, with_cost=True)


def advise(stack_file: Path, usage: Path, *extra: str) -> dict[str, Any]:
    out = usage.parent / f"{usage.name}.json"
    assert main(["advise", "--stack", str(stack_file), "--usage", str(usage), "--json", "--out", str(out),
                 *extra]) == 0
    return dict(json.loads(out.read_text(encoding="utf-8")))


def planted(stack_file: Path, plan: Any, tmp_path: Path, plant: str, *extra: str) -> dict[str, Any]:
    write_exports(tmp_path / "usage", plan, plant=[plant], days=2)
    return advise(stack_file, tmp_path / "usage", "--sla-p99-ms", str(SLA), *extra)


def only(doc: dict[str, Any], fid: str) -> dict[str, Any]:
    found = [f for f in doc["findings"] if f["id"] == fid]
    assert len(found) == 1, [f["id"] for f in doc["findings"]]
    return found[0]


def test_the_endpoints_of_the_plan_are_its_model_serving_resources(plan: Any) -> None:
    endpoints = {e.workload: e for e in endpoint_targets(plan)}
    assert set(endpoints) == {"obs-chat", "obs-burst"}
    chat = endpoints["obs-chat"]
    assert (chat.min_concurrency, chat.max_concurrency, chat.scale_to_zero) == (8, 16, False)
    assert chat.key == "serving.endpoints.obs-chat"
    # the table the endpoint logs to: <catalog>.<schema>.<prefix>_payload, the prefix the component sets
    assert chat.payload_table == "ai_obs.serving.obs_chat_payload"  # the stack's catalog, ai_<stack>
    assert endpoints["obs-burst"].scale_to_zero and chat.monthly_expected > 0


def test_requests_in_flight_are_littles_law_over_the_logged_rows(plan: Any, tmp_path: Path) -> None:
    """A hand-written inference table: the figures are arithmetic on it. Minute 0: 30 logged rows of 1,000 ms at a
    sampling fraction of 0.5 (60 requests, 60 s of execution: 1 in flight); minute 1: 30 rows of 4,000 ms (4 in
    flight); then 45 idle minutes and one request of 90 s on the scale-to-zero endpoint (a launch)."""
    rows = ["endpoint_name,request_time,status_code,execution_duration_ms,sampling_fraction"]
    for minute, duration in ((0, 1000), (1, 4000)):
        rows += [f"obs-burst,2026-11-01T00:{minute:02d}:{2 * j:02d}Z,200,{duration},0.5" for j in range(30)]
    rows.append("obs-burst,2026-11-01T00:47:00Z,503,90000,0.5")
    rows.append("someone-else,2026-11-01T00:00:00Z,200,5,1")  # another workspace endpoint: not the stack's
    usage = tmp_path / "usage"
    usage.mkdir()
    (usage / "serving_requests.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (usage / "clusters.csv").write_text("cluster_id,cluster_name,tags\n", encoding="utf-8")
    # its bill: two hours of 10 DBUs at $0.07 (the usage rows name the endpoint: usage_metadata.endpoint_name)
    (usage / "usage.csv").write_text(
        "usage_start_time,usage_end_time,sku_name,usage_unit,usage_quantity,cluster_id,endpoint_name\n"
        "2026-11-01T00:00:00Z,2026-11-01T01:00:00Z,SERVING,DBU,10,,obs-burst\n"
        "2026-11-01T01:00:00Z,2026-11-01T02:00:00Z,SERVING,DBU,10,,obs-burst\n", encoding="utf-8")
    (usage / "list_prices.csv").write_text(
        "sku_name,currency_code,usage_unit,price_start_time,price_end_time,pricing_default\n"
        "SERVING,USD,DBU,2026-01-01T00:00:00Z,,0.07\n", encoding="utf-8")
    settings = advise_settings({"min_busy_minutes": 1}, SLA)
    analysis = run_local(str(usage), target_rows(targets_of(plan, 200), plan.stack), settings,
                         endpoints=endpoint_rows(endpoint_targets(plan)))
    burst = next(e for e in analysis.endpoints if e["endpoint"] == "obs-burst")
    assert burst["logged_requests"] == 61 and burst["requests"] == pytest.approx(122)
    assert burst["minutes"] == 3
    # the peak minute: 30 rows x 4,000 ms / 0.5 = 240,000 ms of execution in 60,000 ms; the launch minute: 3
    assert burst["peak_concurrency"] == pytest.approx(4.0)
    assert burst["launches"] == 1 and burst["launch_p50_ms"] == pytest.approx(90000) and burst["launch_errors"] == 1
    assert burst["billed_usd"] == pytest.approx(1.4)
    assert burst["cost_per_1k_requests"] == pytest.approx(1.4 * 1000 / 122)
    # a month is 730 hours; the bill's window is its span in whole days (one here)
    assert burst["billed_monthly_usd"] == pytest.approx(1.4 * 730 / 24)
    chat = next(e for e in analysis.endpoints if e["endpoint"] == "obs-chat")
    assert chat["requests"] is None and chat["launches"] == 0  # no rows: nothing judged
    assert {e["endpoint"] for e in analysis.endpoints} == {"obs-chat", "obs-burst"}


def test_healthy_endpoints_are_billed_as_priced_and_have_a_cost_per_request(stack_file: Path, plan: Any,
                                                                             tmp_path: Path) -> None:
    write_exports(tmp_path / "usage", plan, days=2)
    doc = advise(stack_file, tmp_path / "usage", "--sla-p99-ms", str(SLA))
    assert not [f for f in doc["findings"] if f["role"] == "serving"]
    figures = {e["endpoint"]: e for e in doc["endpoints"]}
    chat, burst = figures["obs-chat"], figures["obs-burst"]
    assert chat["billed_monthly_usd"] == pytest.approx(chat["monthly_expected"], rel=0.01)  # always warm: as priced
    # scale to zero: up its usage assumption's hours in one stretch a day, billed by the hour it was up
    assert burst["billed_monthly_usd"] == pytest.approx(burst["monthly_expected"], rel=0.1)
    assert burst["launches"] >= 1 and burst["launch_p50_ms"] < SLA  # a launch a day, not a slow one
    for e in (chat, burst):
        assert e["cost_per_1k_requests"] > 0


def test_at_max_concurrency_raises_the_maximum_in_whole_replicas_priced_at_full_size(stack_file: Path, plan: Any,
                                                                                      tmp_path: Path) -> None:
    doc = planted(stack_file, plan, tmp_path, "serving-latency-at-max-concurrency")
    found = only(doc, "serving-latency-at-max-concurrency")
    assert found["severity"] == "critical" and found["workload"] == "obs-burst" and found["role"] == "serving"
    figures = found["figures"]
    assert figures["p99_ms"] > SLA and figures["minutes_at_max"] > 0
    key = "dbx-ai-infra:serving.endpoints.obs-burst.concurrency.max"
    new = found["proposal"]["edit"][key]
    assert found["proposal"]["current"][key] == 8
    assert new > 8 and new % 4 == 0 and new >= 8 * figures["p99_ms"] / SLA
    p = found["proposal"]
    # more replicas at full size; the expected month (the minimum's replicas) does not move
    assert p["monthly_max_after"] > p["monthly_max_before"] and p["monthly_after"] == p["monthly_before"]
    assert p["blocked_by"] == []


def test_overprovisioned_lowers_the_minimum_and_saves(stack_file: Path, plan: Any, tmp_path: Path) -> None:
    doc = planted(stack_file, plan, tmp_path, "serving-overprovisioned")
    found = only(doc, "serving-overprovisioned")
    assert found["workload"] == "obs-chat"
    key = "dbx-ai-infra:serving.endpoints.obs-chat.concurrency.min"
    new = found["proposal"]["edit"][key]
    peak = found["figures"]["peak_concurrency"]
    assert 4 <= new < 8 and new % 4 == 0 and new >= peak * 1.25
    assert found["monthly_cost_delta"] < 0 and found["proposal"]["blocked_by"] == []


def test_cold_starts_keep_the_endpoint_warm_at_a_price(stack_file: Path, plan: Any, tmp_path: Path) -> None:
    doc = planted(stack_file, plan, tmp_path, "serving-cold-starts")
    found = only(doc, "serving-cold-starts")
    assert found["workload"] == "obs-burst"
    assert found["figures"]["launches"] > 0 and found["figures"]["launch_p50_ms"] > SLA
    # the endpoint sends a lower bound of 0 while it scales to zero: kept warm, it needs a minimum (one replica)
    assert found["proposal"]["edit"] == {"dbx-ai-infra:serving.endpoints.obs-burst.scale_to_zero": False,
                                         "dbx-ai-infra:serving.endpoints.obs-burst.concurrency.min": 4}
    assert found["monthly_cost_delta"] > 0  # warm all month costs more than 60 active hours
    assert "launch" in found["evidence"]
    burst = next(e for e in doc["endpoints"] if e["endpoint"] == "obs-burst")
    assert burst["launches"] == found["figures"]["launches"]


def test_without_an_sla_serving_latency_is_not_judged(stack_file: Path, plan: Any, tmp_path: Path) -> None:
    write_exports(tmp_path / "usage", plan, plant=["serving-cold-starts"], days=2)
    doc = advise(stack_file, tmp_path / "usage")
    assert not {f["id"] for f in doc["findings"]} & {"serving-cold-starts", "serving-latency-at-max-concurrency"}
    assert doc["endpoints"] and any(e["launches"] for e in doc["endpoints"])  # measured, just not judged


def test_without_the_serving_export_a_note_says_endpoints_were_not_judged(stack_file: Path, plan: Any,
                                                                          tmp_path: Path) -> None:
    write_exports(tmp_path / "usage", plan, days=1)
    (tmp_path / "usage" / "serving_requests.csv").unlink()
    doc = advise(stack_file, tmp_path / "usage", "--sla-p99-ms", str(SLA))
    assert any("serving_requests" in n for n in doc["notes"])
    assert not [f for f in doc["findings"] if f["role"] == "serving"]


def test_a_serving_proposal_written_to_the_stack_builds(stack_file: Path, plan: Any, tmp_path: Path) -> None:
    write_exports(tmp_path / "usage", plan, plant=["serving-overprovisioned", "serving-cold-starts"], days=2)
    edited = tmp_path / "Pulumi.obs.yaml"
    code = main(["advise", "--stack", str(stack_file), "--usage", str(tmp_path / "usage"), "--sla-p99-ms", str(SLA),
                 "--json", "--out", str(tmp_path / "a.json"), "--write-stack", str(edited)])
    assert code == 0
    after = build_plan(str(edited), with_policies=False, with_cost=True)
    served = {e.workload: e for e in endpoint_targets(after)}
    assert served["obs-chat"].min_concurrency == 4 and served["obs-burst"].scale_to_zero is False


def test_emit_sql_reads_each_endpoints_payload_table(plan: Any) -> None:
    files = emitted_sql(stack=plan.stack, telemetry="/Volumes/ai/ops/telemetry", days=7,
                        targets=target_rows(targets_of(plan, 200), plan.stack), settings=advise_settings({}, SLA),
                        endpoints=endpoint_rows(endpoint_targets(plan)))
    sources = files["01_sources.sql"]
    assert "FROM ai_obs.serving.obs_chat_payload" in sources and "FROM ai_obs.serving.obs_burst_payload" in sources
    assert "'obs-chat' AS endpoint_name" in sources and "UNION ALL" in sources
    assert "FROM endpoint_summary" in files["03_findings.sql"]


def test_the_reports_have_a_serving_endpoints_table(stack_file: Path, plan: Any, tmp_path: Path) -> None:
    write_exports(tmp_path / "usage", plan, plant=["serving-cold-starts"], days=2)
    base = ["advise", "--stack", str(stack_file), "--usage", str(tmp_path / "usage"), "--sla-p99-ms", str(SLA)]
    assert main([*base, "--format", "markdown", "--out", str(tmp_path / "a.md")]) == 0
    assert main([*base, "--format", "html", "--out", str(tmp_path / "a.html")]) == 0
    md = (tmp_path / "a.md").read_text(encoding="utf-8")
    table = md[md.index("### Serving endpoints"):]
    burst = next(line for line in table.splitlines() if line.startswith("| obs-burst "))
    chat = next(line for line in table.splitlines() if line.startswith("| obs-chat "))
    header = [c.strip() for c in table.splitlines()[2].strip("|").split("|")]

    def column(line: str, name: str) -> str:
        return [c.strip() for c in line.strip().strip("|").split("|")][header.index(name)]

    assert column(burst, "provisioned concurrency") == "0-8, scales to zero"  # its lower bound, as sent
    assert column(burst, "launch P50 ms") not in ("", "n/a")
    assert column(chat, "launches") == "n/a"  # not scale-to-zero: no launches to count
    assert column(chat, "billed $/month").startswith("$") and column(chat, "$ per 1k requests").startswith("$")
    html = (tmp_path / "a.html").read_text(encoding="utf-8")
    assert "<h2>Serving endpoints</h2>" in html and "<td>obs-burst</td>" in html


def test_a_csv_file_is_sniffed_once_and_reads_as_auto_detection_does(tmp_path: Path) -> None:
    """`sources.sniffed`: a single CSV file's view reads with the options the sniffer found (no sniff per statement),
    with the same columns and types as auto-detection; a directory keeps auto-detection."""
    import duckdb

    from dbx_ai_infra.advise.sources import column_types, find_inputs, sniffed

    (tmp_path / "clusters.csv").write_text('cluster_id,cluster_name,tags\n1,a,"{""x"": ""y, z""}"\n', encoding="utf-8")
    (tmp_path / "gpu_timeline").mkdir()
    (tmp_path / "gpu_timeline" / "n1.csv").write_text("cluster_id,gpu_util_percent\n1,50\n", encoding="utf-8")
    found = find_inputs(str(tmp_path))
    con = duckdb.connect()
    once = sniffed(con, found["clusters"])
    assert "auto_detect=false" in once.reader and "auto_detect = true" in found["clusters"].reader
    assert column_types(con, once) == column_types(con, found["clusters"])
    assert con.execute(f"SELECT tags FROM {once.reader}").fetchall() == [('{"x": "y, z"}',)]  # quoted comma kept
    assert sniffed(con, found["gpu_timeline"]) is found["gpu_timeline"]
