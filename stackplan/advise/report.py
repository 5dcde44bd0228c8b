"""What ``advise`` writes: the JSON document (the one shape every format reads), a terminal table, and Markdown and
HTML reports (``templates/advise.*.j2``) with charts: GPU use over time per workload against the low and high lines,
request P99 against the SLA, billed against expected DBU cost."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from dbxtypes.plan import Plan

from .advice import Finding, _plain
from .analysis import Analysis

SUMMARY_FIELDS = ("workload", "role", "min_workers", "max_workers", "runs", "minutes", "busy_minutes",
                  "median_busy_util", "p99_ms", "requests", "reclaims", "resizes", "idle_minutes", "billed_monthly_usd",
                  "dbu_monthly_expected")


def advise_doc(plan: Plan, findings: list[Finding], analysis: Analysis, thresholds: Mapping[str, Any],
               sla: float | None, usage_dir: str) -> dict[str, Any]:
    notes = []
    if sla is None:
        notes.append("no SLA (--sla-p99-ms or advise.sla_p99_ms in the policy config): latency was not judged.")
    if analysis.unmatched_clusters:
        notes.append(f"{analysis.unmatched_clusters} cluster(s) of the export belong to no workload of stack "
                     f"{plan.stack} (matched by cluster_name, or by the tags dbx_stack and workload_type).")
    missing = [n for n in ("gpu_timeline", "node_timeline", "cluster_events", "usage", "list_prices", "requests")
               if n not in analysis.inputs]
    if missing:
        notes.append(f"not in the export, so not judged from it: {', '.join(missing)}.")
    return {
        "stack": plan.stack, "stack_file": plan.stack_file, "usage": usage_dir,
        "inputs": analysis.inputs, "sla_p99_ms": sla,
        "thresholds": {k: v for k, v in thresholds.items()},
        "workloads": [{k: _plain(row.get(k)) for k in SUMMARY_FIELDS} for row in analysis.summary],
        "findings": [f.to_json() for f in findings],
        "notes": notes,
        "series": {
            "gpu_hourly": [{k: _plain(v) for k, v in r.items()} for r in analysis.gpu_hourly],
            "p99_hourly": [{k: _plain(v) for k, v in r.items()} for r in analysis.p99_hourly],
        },
    }


def money(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{'+' if value > 0 else '-' if value < 0 else ''}${abs(float(value)):,.2f}"


def advise_table(doc: Mapping[str, Any], width: int) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, no_color=True, highlight=False, soft_wrap=False)
    table = Table(title=f"Advice for stack {doc['stack']} from {doc['usage']}", title_justify="left")
    columns: tuple[tuple[str, dict[str, Any]], ...] = (
        ("severity", {}), ("finding", {}), ("workload", {}), ("evidence", {"overflow": "fold", "ratio": 3}),
        ("proposal", {"overflow": "fold", "ratio": 2}), ("$/month", {"justify": "right"}))
    for name, kw in columns:
        table.add_column(name, **kw)
    for f in doc["findings"]:
        proposal = f["proposal"]["summary"] if f["proposal"] else (f["note"] or "no change")
        if f["proposal"] and f["proposal"]["blocked_by"]:
            proposal += f" (refused by {', '.join(f['proposal']['blocked_by'])})"
        table.add_row(*map(Text, (f["severity"], f["id"], f["workload"], f["evidence"], proposal,
                                  money(f["monthly_cost_delta"]))))
    console.print(table)
    if not doc["findings"]:
        console.print("No findings.")
    for note in doc["notes"]:
        console.print(Text(f"note: {note}"))
    return buffer.getvalue()


# --------------------------------------------------------------------------------------------------------------------
# Charts (SVG drawn by the template from these numbers)
# --------------------------------------------------------------------------------------------------------------------

PALETTE = ("#3b6fb6", "#d9822b", "#3a9d5d", "#8e5bb5", "#c23b3b", "#5b8e8e")
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 720, 260, 56, 150, 16, 34


def _line_chart(title: str, rows: Sequence[Mapping[str, Any]], value: str, unit: str,
                lines: Sequence[tuple[float, str]], y_max: float | None = None) -> dict[str, Any]:
    series: dict[str, list[tuple[str, float]]] = {}
    for r in rows:
        if r.get(value) is not None:
            series.setdefault(str(r["workload"]), []).append((str(r["hour"]), float(r[value])))
    hours = sorted({h for points in series.values() for h, _ in points})
    top = y_max or max([v for p in series.values() for _, v in p] + [v for v, _ in lines] + [1.0]) * 1.1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    index = {h: i for i, h in enumerate(hours)}

    def x(h: str) -> float:
        return LEFT + (index[h] / max(len(hours) - 1, 1)) * plot_w

    def y(v: float) -> float:
        return TOP + plot_h - min(v, top) / top * plot_h

    return {
        "title": title, "width": WIDTH, "height": HEIGHT, "unit": unit, "empty": not series,
        "left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": TOP + plot_h,
        "series": [{"name": name, "colour": PALETTE[i % len(PALETTE)],
                    "points": " ".join(f"{x(h):.1f},{y(v):.1f}" for h, v in pts),
                    "legend_y": TOP + 14 + 16 * i} for i, (name, pts) in enumerate(sorted(series.items()))],
        "lines": [{"y": round(y(v), 1), "label": label} for v, label in lines],
        "ticks": [{"y": round(y(top * k / 4), 1), "label": f"{top * k / 4:,.0f}"} for k in range(5)],
        "first": hours[0][:16].replace("T", " ") if hours else "", "last": hours[-1][:16].replace("T", " ") if hours
        else "",
    }


def _bars(doc: Mapping[str, Any]) -> dict[str, Any]:
    rows = [w for w in doc["workloads"] if w.get("billed_monthly_usd") is not None or w.get("dbu_monthly_expected")]
    top = max([float(w.get("billed_monthly_usd") or 0) for w in rows] +
              [float(w.get("dbu_monthly_expected") or 0) for w in rows] + [1.0]) * 1.1
    bar_w = 360
    out = []
    for i, w in enumerate(rows):
        billed, expected = float(w.get("billed_monthly_usd") or 0), float(w.get("dbu_monthly_expected") or 0)
        out.append({"name": w["workload"], "y": 10 + 44 * i, "billed_w": round(billed / top * bar_w, 1),
                    "expected_w": round(expected / top * bar_w, 1), "billed": money(billed).lstrip("+"),
                    "expected": money(expected).lstrip("+")})
    return {"rows": out, "height": 20 + 44 * len(rows), "x": 170, "width": 720}


def charts(doc: Mapping[str, Any]) -> dict[str, Any]:
    t = doc["thresholds"]
    sla = doc["sla_p99_ms"]
    return {
        "gpu": _line_chart("GPU use per workload (mean of each hour, %)", doc["series"]["gpu_hourly"], "util", "%",
                           [(float(t["gpu_low_percent"]), f"{t['gpu_low_percent']:g}% low"),
                            (float(t["gpu_high_percent"]), f"{t['gpu_high_percent']:g}% high")], y_max=100.0),
        "p99": _line_chart("Request P99 per hour (ms)", doc["series"]["p99_hourly"], "p99_ms", "ms",
                           [(float(sla), f"SLA {sla:g} ms")] if sla else []),
        "bill": _bars(doc),
    }


def render_report(doc: Mapping[str, Any], *, html: bool) -> str:
    from stackplan.reports import render_template

    return render_template("advise.html.j2" if html else "advise.md.j2",
                           {"doc": doc, "charts": charts(doc), "money": money})
