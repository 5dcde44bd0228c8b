"""What ``advise`` writes: the JSON document (the one shape every format reads), a terminal table, and Markdown and
HTML reports (``templates/advise.*.j2``) with charts: GPU use over time per workload against the low and high lines,
request P99 against the SLA, billed against expected DBU cost."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from dbx_ai_infra.advise.analysis import Analysis, plain
from dbx_ai_infra.dbxtypes.money import money as usd
from dbx_ai_infra.dbxtypes.plan import Plan
from dbx_ai_infra.reports.pages import _md_cell, render_template
from dbx_ai_infra.reports.render import TEXT_MIN, cell, plain_console, table_width, title
from dbx_ai_infra.reports.summary import money as plain_money
from dbx_ai_infra.reports.summary import signed_money

SUMMARY_FIELDS = ("workload", "role", "min_workers", "max_workers", "runs", "minutes", "busy_minutes",
                  "median_busy_util", "p99_ms", "requests", "reclaims", "resizes", "idle_minutes", "billed_monthly_usd",
                  "dbu_monthly_expected", "gpu_mem_peak_percent", "gpu_mem_p99_percent", "cost_per_1k_requests",
                  "cost_per_1k_requests_first_half", "cost_per_1k_requests_second_half")
ENDPOINT_FIELDS = ("endpoint", "min_concurrency", "max_concurrency", "scale_to_zero", "requests", "logged_requests",
                   "p50_ms", "p99_ms", "error_rate", "minutes", "peak_concurrency", "p95_concurrency",
                   "minutes_at_max", "launches", "launch_p50_ms", "launch_max_ms", "launch_errors",
                   "billed_monthly_usd", "monthly_expected", "cost_per_1k_requests")


def _trend(first: Any, second: Any) -> float | None:
    """The change of the cost per 1,000 requests from the window's first half to its second, percent (negative:
    falling, seed 000's "is the unit cost per request falling")."""
    return None if not first or second is None else round(100 * (float(second) / float(first) - 1), 1)


def advise_doc(plan: Plan, findings: list[dict[str, Any]], analysis: Analysis, thresholds: Mapping[str, Any],
               sla: float | None, usage_dir: str) -> dict[str, Any]:
    notes = []
    if sla is None:
        notes.append("no SLA (--sla-p99-ms or advise.sla_p99_ms in the policy config): latency was not judged.")
    if analysis.unmatched_clusters:
        notes.append(f"{analysis.unmatched_clusters} cluster(s) of the export belong to no workload of stack "
                     f"{plan.stack} (matched by cluster_name, or by the tags dbx_stack, workload_type and "
                     f"dbx_workload).")
    missing = [n for n in ("gpu_timeline", "node_timeline", "cluster_events", "usage", "list_prices", "requests")
               + (("serving_requests",) if analysis.endpoints else ()) if n not in analysis.inputs]
    if missing:
        notes.append(f"not in the export, so not judged from it: {', '.join(missing)}.")
    for name, path in analysis.empty_inputs.items():
        notes.append(f"{path} holds no rows: {JUDGED_FROM.get(name, name)} not judged.")
    if analysis.duplicate_usage_rows:
        notes.append(f"{analysis.duplicate_usage_rows} exact duplicate row(s) of "
                     f"{analysis.inputs.get('usage', 'usage')} dropped (the same billing rows twice would bill "
                     f"twice).")
    out = analysis.usage_outside
    if out:
        window = (f"the export window {_day(out['window_first'])} to {_day(out['window_last'])}"
                  if out.get("window_first") else "the time of this run (they start in the future)")
        notes.append(f"{out['rows_outside']} usage row(s) of {analysis.inputs.get('usage', 'usage')} start outside "
                     f"{window} (from {_day(out['first_outside'])} to {_day(out['last_outside'])}): left out of "
                     f"the bill. Fix: export usage for the days the telemetry covers.")
    return {
        "stack": plan.stack, "stack_file": plan.stack_file, "usage": usage_dir,
        "inputs": analysis.inputs, "sla_p99_ms": sla,
        "thresholds": {k: v for k, v in thresholds.items()},
        "workloads": [{**{k: plain(row.get(k)) for k in SUMMARY_FIELDS},
                       "cost_per_1k_requests_trend_percent": _trend(row.get("cost_per_1k_requests_first_half"),
                                                                    row.get("cost_per_1k_requests_second_half"))}
                      for row in analysis.summary],
        "endpoints": [{k: plain(row.get(k)) for k in ENDPOINT_FIELDS} for row in analysis.endpoints],
        "findings": findings,
        "notes": notes,
        "series": {
            "gpu_hourly": [{k: plain(v) for k, v in r.items()} for r in analysis.gpu_hourly],
            "p99_hourly": [{k: plain(v) for k, v in r.items()} for r in analysis.p99_hourly],
        },
    }


#: What each input tells the findings: named when an input is present but empty.
JUDGED_FROM = {"gpu_timeline": "GPU use (gpu-underutilized, gpu-balanced, latency-over-sla-*)",
               "node_timeline": "CPU, memory and network use", "cluster_events": "reclaims, resizes and idle time",
               "usage": "the bill (cost-drift)", "list_prices": "the bill's prices (cost-drift)",
               "requests": "latency (latency-over-sla-*)", "clusters": "which cluster is which workload",
               "serving_requests": "the serving endpoints (serving-*)"}


def _day(value: Any) -> str:
    return str(value)[:10] if value is not None else "?"


def money(value: Any) -> str:
    """A monthly change (``+$1.00``, ``-$1.00``): the project's money format (cents rounded half away from zero);
    ``n/a`` when nothing was priced."""
    return "n/a" if value is None else signed_money(float(value))


def advise_table(doc: Mapping[str, Any], width: int) -> str:
    from rich.table import Table


    buffer = io.StringIO()
    console = plain_console(buffer, width)
    table = Table(title=title(f"Advice for stack {doc['stack']} from {doc['usage']}"), title_justify="left")
    findings = doc["findings"]

    def widest(values: list[str], header: str) -> int:
        return max([len(v) for v in values] + [len(header)])

    def proposal_of(f: Mapping[str, Any]) -> str:
        text = f["proposal"]["summary"] if f["proposal"] else (f["note"] or "no change")
        if f["proposal"] and f["proposal"]["blocked_by"]:
            text += f" (refused by {', '.join(f['proposal']['blocked_by'])})"
        return str(text)

    # ids, workloads and money never cut; where the width cannot hold evidence and proposal apart at a readable
    # width, they share one column (the proposal on its own line)
    fixed = [widest([f["severity"] for f in findings], "severity"), widest([f["id"] for f in findings], "finding"),
             widest([f["workload"] for f in findings], "workload"),
             widest([money(f["monthly_cost_delta"]) for f in findings], "$/month")]
    apart = width >= table_width([*fixed, TEXT_MIN, TEXT_MIN])
    table.add_column("severity", no_wrap=True, min_width=fixed[0])
    table.add_column("finding", no_wrap=True, min_width=fixed[1])  # an id is a contract: never cut
    table.add_column("workload", no_wrap=True, min_width=fixed[2])
    if apart:
        table.add_column("evidence", overflow="fold", ratio=3)
        table.add_column("proposal", overflow="fold", ratio=2)
    else:
        table.add_column("evidence / proposal", overflow="fold")
    table.add_column("$/month", justify="right", no_wrap=True, min_width=fixed[3])
    for f in findings:
        text = [f["evidence"], proposal_of(f)] if apart else [f"{f['evidence']}\n-> {proposal_of(f)}"]
        table.add_row(*map(cell, (f["severity"], f["id"], f["workload"], *text, money(f["monthly_cost_delta"]))))
    console.print(table)
    if not doc["findings"]:
        console.print("No findings.")
    edits = [f for f in doc["findings"] if f["proposal"] and not f["proposal"]["blocked_by"]]
    if edits:
        console.print("Edits: set these keys in the stack file (under config:), or apply them all with "
                      "--write-stack FILE:")
        for f in edits:
            console.print(cell(f"# {f['id']} on {f['workload']}"))
            console.print(cell(f["proposal"]["yaml"].rstrip("\n")))
    for note in doc["notes"]:
        console.print(cell(f"note: {note}"))
    return buffer.getvalue()


# --------------------------------------------------------------------------------------------------------------------
# Charts (SVG drawn by the template from these numbers)
# --------------------------------------------------------------------------------------------------------------------

PALETTE = ("#3b6fb6", "#d9822b", "#3a9d5d", "#8e5bb5", "#c23b3b", "#5b8e8e")
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 720, 260, 56, 150, 16, 34


def _hour(value: str) -> float:
    return datetime.fromisoformat(value).timestamp() / 3600


def _line_chart(title: str, rows: Sequence[Mapping[str, Any]], value: str, unit: str,
                lines: Sequence[tuple[float, str]], y_max: float | None = None,
                span: tuple[float, float] | None = None, colours: Mapping[str, str] | None = None
                ) -> dict[str, Any]:
    """A line per workload over time (x proportional to time over ``span``, hours since the epoch); a gap of more
    than an hour without data breaks the line (the cluster was down)."""
    series: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        if r.get(value) is not None:
            series.setdefault(str(r["workload"]), []).append((_hour(str(r["hour"])), float(r[value])))
    hours = sorted({h for points in series.values() for h, _ in points})
    first, last = span if span else ((hours[0], hours[-1]) if hours else (0.0, 1.0))
    top = y_max or max([v for p in series.values() for _, v in p] + [v for v, _ in lines] + [1.0]) * 1.1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(h: float) -> float:
        return LEFT + (h - first) / max(last - first, 1.0) * plot_w

    def y(v: float) -> float:
        return TOP + plot_h - min(v, top) / top * plot_h

    def segments(points: list[tuple[float, float]]) -> list[str]:
        out: list[list[tuple[float, float]]] = []
        for h, v in sorted(points):
            if not out or h - out[-1][-1][0] > 1.01:
                out.append([])
            out[-1].append((h, v))
        return [" ".join(f"{x(h):.1f},{y(v):.1f}" for h, v in seg) for seg in out]

    def label(h: float) -> str:
        return datetime.fromtimestamp(h * 3600, UTC).strftime("%Y-%m-%d %H:%M")

    right, bottom = WIDTH - RIGHT, TOP + plot_h
    return {
        "title": title, "width": WIDTH, "height": HEIGHT, "unit": unit, "empty": not series,
        "left": LEFT, "right": right, "top": TOP, "bottom": bottom, "empty_y": TOP + 20,
        "axis_x": LEFT - 6, "legend_box_x": right + 12, "legend_text_x": right + 26, "label_x": right - 4,
        "date_y": bottom + 16,
        "series": [{"name": name, "colour": (colours or {}).get(name, PALETTE[i % len(PALETTE)]),
                    "segments": segments(pts),
                    "legend_y": TOP + 14 + 16 * i, "box_y": TOP + 5 + 16 * i}
                   for i, (name, pts) in enumerate(sorted(series.items()))],
        "lines": [{"y": round(y(v), 1), "text_y": round(y(v) - 4, 1), "label": label_} for v, label_ in lines],
        "ticks": [{"y": round(y(top * k / 4), 1), "text_y": round(y(top * k / 4) + 4, 1),
                   "label": f"{top * k / 4:,.0f}"} for k in range(5)],
        "first": label(first) if hours else "", "last": label(last) if hours else "",
    }


def _bars(doc: Mapping[str, Any]) -> dict[str, Any]:
    rows = [w for w in doc["workloads"] if w.get("billed_monthly_usd") is not None or w.get("dbu_monthly_expected")]
    top = max([float(w.get("billed_monthly_usd") or 0) for w in rows] +
              [float(w.get("dbu_monthly_expected") or 0) for w in rows] + [1.0]) * 1.1
    bar_w = 360
    out = []
    for i, w in enumerate(rows):
        billed, expected = float(w.get("billed_monthly_usd") or 0), float(w.get("dbu_monthly_expected") or 0)
        y, x = 10 + 44 * i, 170
        billed_w, expected_w = round(billed / top * bar_w, 1), round(expected / top * bar_w, 1)
        out.append({"name": w["workload"], "y": y, "name_x": x - 8, "name_y": y + 14, "x": x,
                    "billed_w": billed_w, "billed_text_x": x + billed_w + 6, "billed_text_y": y + 13,
                    "expected_y": y + 18, "expected_w": expected_w, "expected_text_x": x + expected_w + 6,
                    "expected_text_y": y + 31, "billed": _usd(billed), "expected": _usd(expected)})
    return {"rows": out, "height": 20 + 44 * len(rows), "width": 720}


def _unit_cost_bars(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Cost per 1,000 requests of each workload with requests: the window's first half against its second."""
    rows = [w for w in doc["workloads"] if w.get("cost_per_1k_requests") is not None]
    halves = [float(w.get(k) or 0) for w in rows
              for k in ("cost_per_1k_requests_first_half", "cost_per_1k_requests_second_half")]
    top = max([*halves, 1e-9]) * 1.1
    bar_w, out = 360, []
    for i, w in enumerate(rows):
        first = w.get("cost_per_1k_requests_first_half")
        second = w.get("cost_per_1k_requests_second_half")
        y, x = 10 + 44 * i, 170
        first_w = round(float(first or 0) / top * bar_w, 1)
        second_w = round(float(second or 0) / top * bar_w, 1)
        out.append({"name": w["workload"], "y": y, "name_x": x - 8, "name_y": y + 14, "x": x,
                    "billed_w": first_w, "billed_text_x": x + first_w + 6, "billed_text_y": y + 13,
                    "expected_y": y + 18, "expected_w": second_w, "expected_text_x": x + second_w + 6,
                    "expected_text_y": y + 31, "billed": f"1st half {_cents(first)}",
                    "expected": f"2nd half {_cents(second)} "
                                f"({_trend_text(w.get('cost_per_1k_requests_trend_percent'))})"
                                if second is not None else "2nd half: no requests"})
    return {"rows": out, "height": 20 + 44 * len(rows), "width": 720}


def charts(doc: Mapping[str, Any]) -> dict[str, Any]:
    t = doc["thresholds"]
    sla = doc["sla_p99_ms"]
    every = [_hour(str(r["hour"])) for r in (*doc["series"]["gpu_hourly"], *doc["series"]["p99_hourly"])]
    span = (min(every), max(every)) if every else None
    colours = {str(w["workload"]): PALETTE[i % len(PALETTE)] for i, w in enumerate(doc["workloads"])}
    gpu_heading, p99_heading = "GPU use over time", "Request P99 against the SLA"
    out: dict[str, Any] = {
        "gpu": _line_chart("GPU use per workload (mean of each hour, %)", doc["series"]["gpu_hourly"], "util", "%",
                           [(float(t["gpu_low_percent"]), f"{t['gpu_low_percent']:g}% low"),
                            (float(t["gpu_high_percent"]), f"{t['gpu_high_percent']:g}% high")], y_max=100.0,
                           span=span, colours=colours),
        "p99": _line_chart("Request P99 per hour (ms)", doc["series"]["p99_hourly"], "p99_ms", "ms",
                           [(float(sla), f"SLA {sla:g} ms")] if sla else [], span=span,
                           colours=colours),
        "bill": _bars(doc),
        "unit": _unit_cost_bars(doc),
    }
    out["gpu"]["heading"], out["p99"]["heading"] = gpu_heading, p99_heading
    out["lines"] = [out["gpu"], out["p99"]]
    return out


def _usd(value: Any) -> str:
    return "n/a" if value is None else plain_money(float(value))


def _cents(value: Any) -> str:
    """A cost per 1,000 requests: dollars with four decimals below a dollar (``$0.0123``)."""
    if value is None:
        return "n/a"
    v = float(value)
    return f"${v:,.4f}" if v < 1 else usd(v)  # sub-dollar figures keep four decimals; a dollar or more, cents


def _trend_text(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{float(value):+.1f}% ({'falling' if value < 0 else 'rising' if value > 0 else 'flat'})"


def _whole(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):,.0f}"


def _proposal_text(f: Mapping[str, Any]) -> str:
    if not f["proposal"]:
        return str(f["note"] or "no change")
    text = str(f["proposal"]["summary"])
    if f["proposal"]["blocked_by"]:
        text += f" (refused: {'; '.join(f['proposal']['blocked_by'])})"
    if f.get("note"):
        text += f". {f['note']}"
    return text


def _tenth(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):,.1f}"


def view(doc: Mapping[str, Any], *, markdown: bool) -> dict[str, Any]:
    """Everything the advise templates show, formatted: the templates only substitute."""
    cell = _md_cell if markdown else str
    findings = []
    for f in doc["findings"]:
        proposal = f["proposal"]
        findings.append({
            "severity": f["severity"], "id": f["id"], "workload": cell(f["workload"]),
            "evidence": cell(f["evidence"]), "proposal": cell(_proposal_text(f)),
            "delta": money(f["monthly_cost_delta"]),
            # the fragment to paste under the stack file's config: (or let --write-stack apply it)
            "edit_lines": proposal["yaml"].splitlines() if proposal else [],
            "before": _usd(proposal["monthly_before"]) if proposal else "",
            "after": _usd(proposal["monthly_after"]) if proposal else "",
        })
    workloads = [{"workload": cell(w["workload"]), "role": w["role"], "runs": w["runs"] or 0,
                  "busy": w["busy_minutes"] or 0, "util": _whole(w["median_busy_util"]), "p99": _whole(w["p99_ms"]),
                  "reclaims": w["reclaims"], "resizes": w["resizes"], "billed": _usd(w["billed_monthly_usd"]),
                  "expected": _usd(w["dbu_monthly_expected"]), "mem": _whole(w["gpu_mem_peak_percent"]),
                  "mem_p99": _whole(w["gpu_mem_p99_percent"]), "per_1k": _cents(w["cost_per_1k_requests"]),
                  "trend": _trend_text(w["cost_per_1k_requests_trend_percent"])} for w in doc["workloads"]]
    endpoints = [{"endpoint": cell(e["endpoint"]),
                  "concurrency": f"{e['min_concurrency']}-{e['max_concurrency']}"
                  + (", scales to zero" if e["scale_to_zero"] else ""),
                  "requests": _whole(e["requests"]), "p50": _whole(e["p50_ms"]), "p99": _whole(e["p99_ms"]),
                  "peak": _tenth(e["peak_concurrency"]), "p95": _tenth(e["p95_concurrency"]),
                  "at_max": e["minutes_at_max"] if e["minutes"] else "n/a",
                  "launches": e["launches"] if e["scale_to_zero"] else "n/a",
                  "launch_p50": _whole(e["launch_p50_ms"]), "billed": _usd(e["billed_monthly_usd"]),
                  "expected": _usd(e["monthly_expected"]), "per_1k": _cents(e["cost_per_1k_requests"])}
                 for e in doc.get("endpoints", [])]
    priced = sum(1 for f in doc["findings"] if f["monthly_cost_delta"] is not None)
    return {
        "stack": doc["stack"], "stack_file": doc["stack_file"], "usage": doc["usage"],
        "sla_text": f"SLA P99 {doc['sla_p99_ms']:g} ms" if doc["sla_p99_ms"] else "no SLA given",
        "count_text": f"{len(findings)} finding(s)" + (f", {priced} with a priced proposal" if priced else ""),
        "findings": findings, "proposed": [f for f in findings if f["edit_lines"]],
        "workloads": workloads, "endpoints": endpoints, "notes": [cell(n) for n in doc["notes"]],
        "charts": charts(doc),
    }


def render_report(doc: Mapping[str, Any], *, html: bool) -> str:
    return render_template("advise.html.j2" if html else "advise.md.j2", view(doc, markdown=not html))
