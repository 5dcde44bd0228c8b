"""Markdown (pull-request comment) and HTML (standalone page) cost reports of a plan.

Both go through one jinja2 :class:`~jinja2.Environment` with ``StrictUndefined`` over
``dbx_ai_infra/templates/report.md.j2``
and ``dbx_ai_infra/templates/report.html.j2``. The templates only hold ``if``/``for`` and substitutions: every number is
formatted, every row built and the SVG chart laid out here, in :func:`report_context`. A variable missing from the
context raises :class:`jinja2.UndefinedError` instead of rendering as an empty string.

Money is rounded to cents here, when rendering, never in the cost object.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import jinja2

from dbx_ai_infra import PACKAGE_DIR
from dbx_ai_infra.dbxtypes.plan import Cost, CostEntry, Plan, SizingLine
from dbx_ai_infra.dbxtypes.text import printable
from dbx_ai_infra.dbxtypes.vocabulary import INSTANCE_POOL, USAGE_DEFAULTS
from dbx_ai_infra.reports.summary import (
    cents,
    leaves_out,
    money,
    month_text,
    prices_line,
    short_type,
    signed_money,
    spot_lines,
    total_month_unknown,
    violations_summary,
)

__all__ = ["TEMPLATES_DIR", "environment", "render_combined", "render_html", "render_markdown", "render_template",
           "report_context"]

TEMPLATES_DIR = PACKAGE_DIR / "templates"
MARKDOWN_TEMPLATE = "report.md.j2"
HTML_TEMPLATE = "report.html.j2"

WORKLOAD_COLOURS = {"training": "#3b6fb6", "inference": "#d9822b", "interactive": "#3a9d5d", "serving": "#8e5bb5"}
OTHER_COLOUR = "#8a8a8a"
STATUS_WORDS = {"added": "added", "removed": "removed", "changed": "changed", "unchanged": "unchanged"}


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The one template environment: strict about undefined variables, HTML-escaping the ``.html.j2`` templates."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default_for_string=False,
                                            default=False),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # every value a template shows: control characters escaped (a PR comment, a page in a browser)
        finalize=lambda value: printable(value) if isinstance(value, str) else value,
    )


def render_template(name: str, context: Mapping[str, Any]) -> str:
    return environment().get_template(name).render(**context)


# --------------------------------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------------------------------

def number(value: Any) -> str:
    """A plain number without trailing zeros: 40, 0.5, 21.957642."""
    if isinstance(value, bool) or value is None:
        return "n/a" if value is None else str(value)
    if isinstance(value, (int, float)):
        if float(value).is_integer():
            return f"{int(value):,}"
        return f"{value:,.6f}".rstrip("0").rstrip(".")
    return str(value)


def _md_cell(text: Any) -> str:
    """Text safe inside a Markdown table cell (and a GitHub comment): no pipes, no line breaks, no raw HTML."""
    out = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(out.split())


def _plain(text: Any) -> str:
    return str(text)


def _figure_value(figure: str, value: Any, estimate: bool) -> str:
    if value is None:
        return "n/a"
    if figure.startswith("usd_per_dbu."):
        text = f"${number(value)}/DBU"
    elif figure.endswith(".usd_per_hour_on_demand"):
        text = f"${number(value)}/h"
    elif figure.endswith(".dbu_per_hour"):
        text = f"{number(value)} DBU/h"
    elif figure.startswith("spot_factor."):
        text = f"{number(value)} x on-demand VM"
    elif figure == "dbu_discount_on_spot":
        text = "none (DBUs billed in full on spot)"
    else:
        text = number(value)
    return text + (" (ESTIMATE)" if estimate else "")


# --------------------------------------------------------------------------------------------------------------------
# The context
# --------------------------------------------------------------------------------------------------------------------

def _nodes_text(entry: CostEntry) -> str:
    if entry.nodes is None:
        return "?"
    lo, hi = entry.nodes.min, entry.nodes.max
    if entry.type == INSTANCE_POOL:
        return f"{number(lo)} idle"
    return number(lo) if lo == hi else f"{number(lo)}-{number(hi)}"


def _basis(basis: str) -> str:
    """``always on`` or the usage assumption's name, short enough for a table cell."""
    return basis.split(":", 1)[0] if basis.startswith("always on") else basis.removeprefix("usage assumption ")


def _hourly_text(entry: CostEntry) -> str:
    if entry.unpriced is not None and not entry.hourly_only:
        return "unpriced"
    lo, hi = entry.hourly, entry.hourly_max
    if hi is None or lo is None or cents(hi) == cents(lo):
        return money(lo)
    return f"{money(lo)} (max {money(hi)})"


def _resource_rows(cost: Cost, esc: Callable[[Any], str]) -> list[dict[str, str]]:
    rows = []
    for urn, e in cost.resources.items():
        node_type = e.node_type_id or "?"
        if e.driver_node_type_id and e.driver_node_type_id != e.node_type_id:
            node_type = f"{node_type} (driver {e.driver_node_type_id})"
        if e.instance_pool:
            node_type = f"{node_type} via pool {e.instance_pool}"
        rows.append({
            "urn": esc(urn),
            "name": esc(e.name),
            "type": esc(short_type(str(e.type))),
            "workload": esc(e.workload_type or "unknown"),
            "node_type": esc(node_type),
            "nodes": esc(_nodes_text(e)),
            "availability": esc(e.availability or ""),
            "hourly": esc(_hourly_text(e)),
            "hours": esc("" if e.hours_per_month is None else
                         f"{number(e.hours_per_month)} h" + (f" ({_basis(e.hours_basis)})" if e.hours_basis else "")),
            "monthly_min": esc(month_text(e, e.monthly.min)),
            "monthly_expected": esc(month_text(e, e.monthly.expected)),
            "monthly_max": esc(month_text(e, e.monthly.max)),
            "saving": esc("" if e.unpriced is not None else money(e.saving_monthly_expected)),
            "unpriced": esc(e.unpriced or ""),
        })
    return rows


def _violation_rows(plan: Plan, esc: Callable[[Any], str]) -> tuple[str, list[dict[str, str]], str]:
    if plan.violations is None:
        return "absent", [], "Policies were not evaluated for this plan."
    violations = plan.violations
    if not violations:
        return "none", [], "No policy violations."
    rows = [{"level": esc(v.level), "level_class": "mandatory" if v.mandatory else "excepted" if v.excepted
             else "advisory", "policy": esc(v.policy), "resource": esc(v.resource_name or v.urn),
             "message": esc(v.shown_message)} for v in violations]
    return "some", rows, violations_summary(violations)


def _sizing_row(z: SizingLine, esc: Callable[[Any], str]) -> dict[str, str]:
    node = f"{z.node_type_id} ({z.gpu_count} x {z.gpu}, {number(z.gpu_memory_gb)} GB)"
    if z.pinned:
        node += ", pinned"
    if z.sharded:
        node += f"; {z.sharded}"
    smaller = "none in the family" if z.next_smaller is None else \
        f"{z.next_smaller.node_type_id} ({number(z.next_smaller.gpu_memory_gb)} GB)"
    return {"workload": esc(z.label), "formula": esc(f"{z.formula} ({z.rule})" if z.formula else z.rule),
            "node": esc(node), "smaller": esc(smaller)}


def _diff_context(diff: Mapping[str, Any] | None, esc: Callable[[Any], str]) -> dict[str, Any] | None:
    if diff is None:
        return None
    rows = []
    for r in diff.get("rows") or []:
        base, head, delta = r.get("base"), r.get("head"), r.get("delta") or {}
        rows.append({
            "name": esc(r.get("name")),
            "type": esc(short_type(str(r.get("type")))),
            "status": esc(STATUS_WORDS.get(r.get("status"), r.get("status"))
                          + (f": {', '.join(r.get('what') or r['changes'])}" if r.get("changes") else "")),
            "base_monthly": esc("-" if base is None else money(base.get("monthly_expected"))),
            "head_monthly": esc("-" if head is None else money(head.get("monthly_expected"))),
            "delta_monthly": esc(signed_money(delta.get("monthly_expected"))),
            "base_hourly": esc("-" if base is None else money(base.get("hourly"))),
            "head_hourly": esc("-" if head is None else money(head.get("hourly"))),
            "delta_hourly": esc(signed_money(delta.get("hourly"))),
        })
    total = diff.get("total") or {}
    b, h, d = total.get("base") or {}, total.get("head") or {}, total.get("delta") or {}
    counts = diff.get("counts") or {}
    sizing = [{"workload": esc(z["workload"]), "base": esc(z["base"] or "-"), "head": esc(z["head"] or "-")}
              for z in diff.get("sizing") or []]
    base_name, head_name = str(diff.get("base_stack") or "base"), str(diff.get("head_stack") or "head")
    return {
        "chart": _before_after_chart(diff.get("by_workload") or {}, base_name, head_name, esc),
        "sizing": sizing,
        "base_stack": esc(diff.get("base_stack") or "base"),
        "head_stack": esc(diff.get("head_stack") or "head"),
        "rows": rows,
        "counts": esc(", ".join(f"{counts.get(k, 0)} {k}" for k in ("added", "removed", "changed", "unchanged"))),
        "total": {
            "base_monthly": esc(money(b.get("monthly_expected"))
                                + (" + unpriced" if (total.get("unpriced") or {}).get("base") else "")),
            "head_monthly": esc(money(h.get("monthly_expected"))
                                + (" + unpriced" if (total.get("unpriced") or {}).get("head") else "")),
            "delta_monthly": esc(signed_money(d.get("monthly_expected"))),
            "incomplete": esc("" if total.get("complete", True) else
                              " (the change is unknown: unpriced on the " + "; on the ".join(
                                  f"{side} {', '.join(names)}" for side, names in (total.get("unpriced") or {}).items()
                                  if names) + ")"),
            "base_hourly": esc(money(b.get("hourly"))),
            "head_hourly": esc(money(h.get("hourly"))),
            "delta_hourly": esc(signed_money(d.get("hourly"))),
        },
    }


def _assumption_rows(cost: Cost, esc: Callable[[Any], str]) -> list[dict[str, str]]:
    rows = []
    for key, value in cost.assumptions.items():
        base, _, owner = key.partition(".")  # <assumption>.<workload or endpoint>: its own figure
        usage = USAGE_DEFAULTS.get(base)
        label, unit = (usage.label + (f", {owner}" if owner else ""), usage.unit) if usage else (key, "")
        if value is None and key == "inference_burst_avg_extra_workers":
            text = "half the headroom, (max - min workers) / 2"
        else:
            text = f"{number(value)} {unit}".strip()
        rows.append({"label": esc(label), "key": esc(key), "value": esc(text)})
    rows.append({"label": esc(f"Spot VM price on {cost.cloud}"), "key": esc("spot_factor"),
                 "value": esc(f"{number(cost.spot_factor)} x on-demand VM price (ESTIMATE; DBUs not discounted)")})
    rows.append({"label": esc("Databricks tier"), "key": esc("tier"), "value": esc(str(cost.tier))})
    return rows


def _source_rows(cost: Cost, esc: Callable[[Any], str]) -> list[dict[str, str]]:
    return [{"figure": esc(s.figure), "value": esc(_figure_value(s.figure, s.value, s.estimate)),
             "source": esc(s.source or "n/a"), "date": esc(s.date or "n/a")}
            for s in cost.sources]


_CHAR_W = 7.5  # SVG user units per character of the chart's 12 px system-ui text (digits are the widest)


def _chart(by_workload: Mapping[str, float], esc: Callable[[Any], str]) -> dict[str, Any]:
    """A horizontal bar chart of monthly expected cost per workload, laid out in SVG user units."""
    items = list(by_workload.items())
    texts = [money(v) + "/month" for _, v in items]
    # Room for the longest label and value at 12 px (about 7.5 units a character), so no text is clipped.
    label_w = math.ceil(16 + _CHAR_W * max((len(role) for role, _ in items), default=8))
    value_w = math.ceil(12 + _CHAR_W * max((len(t) for t in texts), default=16))
    bar_area, row_h, bar_h, top = 360, 30, 20, 10
    width = label_w + bar_area + value_w
    biggest = max((v for _, v in items), default=0.0)
    bars = []
    for i, (role, value) in enumerate(items):
        y = top + i * row_h
        w = 0.0 if biggest <= 0 else bar_area * value / biggest
        if value > 0:
            w = max(w, 1.0)
        bars.append({
            "workload": esc(role),
            "label": esc(role),
            "value_text": esc(texts[i]),
            "x": label_w, "y": y, "width": f"{w:.1f}", "height": bar_h,
            "fill": WORKLOAD_COLOURS.get(role, OTHER_COLOUR),
            "text_y": y + bar_h - 5, "label_x": label_w - 8, "value_x": f"{label_w + w + 6:.1f}",
        })
    return {"width": width, "height": top * 2 + max(1, len(items)) * row_h, "bars": bars,
            "title": esc("Monthly expected cost by workload")}


def _before_after_chart(by_workload: Mapping[str, Mapping[str, Any]], base: str, head: str,
                        esc: Callable[[Any], str]) -> dict[str, Any]:
    """Monthly expected cost per workload before and after the change: two bars a workload (the base in grey, the
    head in the workload's colour), on one scale, with room for every label."""
    items = [(role, float(v.get("base") or 0.0), float(v.get("head") or 0.0)) for role, v in by_workload.items()]
    labels = [(f"before: {money(b)}/month", f"after: {money(h)}/month") for _, b, h in items]
    label_w = math.ceil(16 + _CHAR_W * max((len(role) for role, _, _ in items), default=8))
    value_w = math.ceil(12 + _CHAR_W * max((len(t) for pair in labels for t in pair), default=16))
    bar_area, bar_h, gap, top = 360, 16, 14, 10
    row_h = 2 * bar_h + 4 + gap
    biggest = max((max(b, h) for _, b, h in items), default=0.0)

    def width(value: float) -> float:
        w = 0.0 if biggest <= 0 else bar_area * value / biggest
        return max(w, 1.0) if value > 0 else w

    bars = []
    for i, (role, b, h) in enumerate(items):
        y = top + i * row_h
        for j, (value, text, fill) in enumerate(((b, labels[i][0], OTHER_COLOUR),
                                                 (h, labels[i][1], WORKLOAD_COLOURS.get(role, OTHER_COLOUR)))):
            w = width(value)
            bar_y = y + j * (bar_h + 4)
            bars.append({"workload": esc(role), "label": esc(role) if j == 0 else "", "side": "base" if j == 0
                         else "head", "value_text": esc(text), "x": label_w, "y": bar_y, "width": f"{w:.1f}",
                         "height": bar_h, "fill": fill, "text_y": bar_y + bar_h - 4, "label_x": label_w - 8,
                         "value_x": f"{label_w + w + 6:.1f}"})
    return {"width": label_w + bar_area + value_w, "height": top * 2 + max(1, len(items)) * row_h, "bars": bars,
            "title": esc(f"Monthly expected cost by workload, before ({base}, grey) and after ({head})")}


def report_context(plan: Plan | Mapping[str, Any], diff: Mapping[str, Any] | None = None, *,
                   markdown: bool = True, part: bool = False, title: str | None = None) -> dict[str, Any]:
    """Everything the templates show, formatted. ``markdown`` escapes the cells for a Markdown table; for HTML
    the template's autoescaping does it. ``part``: one stack's section of a combined report (no page shell, no
    assumptions or price sources: the combined report shows those once)."""
    plan = plan if isinstance(plan, Plan) else Plan.from_json(plan)
    esc = _md_cell if markdown else _plain
    cost = plan.cost
    state, violations, violations_summary = _violation_rows(plan, esc)
    diff_ctx = _diff_context(diff, esc)
    ctx: dict[str, Any] = {
        "part": part,
        "title": esc(title or f"Cost review: stack {plan.stack}"),
        "stack": esc(plan.stack),
        "cloud": esc(plan.cloud),
        "project": esc(plan.project or ""),
        "stack_file": esc(plan.stack_file or ""),
        "has_cost": cost is not None,
        "violations_state": state,
        "has_violations": state == "some",
        "violations": violations,
        "violations_summary": esc(violations_summary),
        "diff": diff_ctx,
        "delta_text": "",
        "sizing": [_sizing_row(z, esc) for z in plan.sizing or []],
        "advice": [{"id": esc(a.id), "resource": esc(a.resource_name), "message": esc(a.message),
                    "delta": esc(signed_money(a.monthly_cost_delta))} for a in plan.advice or []],
    }
    if diff is not None:
        delta = ((diff.get("total") or {}).get("delta") or {}).get("monthly_expected")
        ctx["delta_text"] = esc(f"{signed_money(delta)}/month vs base {diff.get('base_stack') or 'base'}"
                                + ("" if (diff.get("total") or {}).get("complete", True) else
                                   " (unknown: a side leaves an unpriced resource out)"))
    if cost is None:
        ctx.update({"tier": "", "currency": "", "prices": "", "spot_lines": [], "total": {}, "resources": [],
                    "assumptions": [], "notes": [], "unpriced": [], "sources": [], "workloads": [],
                    "workloads_text": "", "chart": _chart({}, esc)})
        return ctx
    total = cost.total
    by_workload = cost.by_workload
    ctx.update({
        "tier": esc(cost.tier),
        "currency": esc(cost.currency),
        "prices": esc(prices_line(cost)),
        "spot_lines": [esc(line) for line in spot_lines(cost)],
        "total": {
            **{k: esc("unknown" if total_month_unknown(cost) else money(getattr(total.monthly, k)))
               for k in ("expected", "min", "max")},
            "hourly": esc(money(total.hourly)),
            "hourly_max": esc(money(total.hourly_max)),
            **{k: esc("unknown" if total_month_unknown(cost) else money(getattr(total, field)))
               for k, field in (("all_on_demand", "all_on_demand_monthly_expected"),
                                ("saving", "saving_monthly_expected"))},
            "incomplete": esc(leaves_out(total.unpriced, total.hourly_only)),
        },
        "resources": _resource_rows(cost, esc),
        "assumptions": _assumption_rows(cost, esc),
        "notes": [esc(n) for n in cost.notes],
        "unpriced": [{"name": esc(u.name), "reason": esc(u.reason),
                      "hourly": esc("" if u.hourly is None else f"{money(u.hourly)}/hour, in the hourly total; its "
                                    "month unknown")} for u in cost.unpriced],
        "sources": _source_rows(cost, esc),
        "workloads": [{"name": esc(role), "monthly": esc(money(v))} for role, v in by_workload.items()],
        "workloads_text": esc("; ".join(f"{role} {money(v)}" for role, v in by_workload.items())),
        "chart": _chart(by_workload, esc),
    })
    return ctx


def render_markdown(plan: Plan | Mapping[str, Any], diff: Mapping[str, Any] | None = None, *,
                    title: str | None = None) -> str:
    """The stack's review (cost, findings, sizing) as Markdown, for a pull-request comment."""
    return render_template(MARKDOWN_TEMPLATE, report_context(plan, diff, markdown=True, title=title))


def render_html(plan: Plan | Mapping[str, Any], diff: Mapping[str, Any] | None = None, *,
                title: str | None = None) -> str:
    """The stack's review as a standalone HTML page (inline CSS and SVG, nothing fetched from the network)."""
    return render_template(HTML_TEMPLATE, report_context(plan, diff, markdown=False, title=title))


def _merged_reference(contexts: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Assumptions, notes and price sources of several stacks, each shown once; a value that only some stacks
    use names them."""
    names = [name for name, _ in contexts]
    assumptions: dict[tuple[str, str, str], list[str]] = {}
    sources: dict[tuple[str, str, str, str], None] = {}
    notes: dict[str, None] = {}
    for name, ctx in contexts:
        for a in ctx["assumptions"]:
            assumptions.setdefault((a["label"], a["key"], a["value"]), []).append(name)
        for s in ctx["sources"]:
            sources[(s["figure"], s["value"], s["source"], s["date"])] = None
        for n in ctx["notes"]:
            notes[n] = None
    rows = [{"label": label, "key": key, "value": value if stacks == names else f"{value} ({', '.join(stacks)})"}
            for (label, key, value), stacks in assumptions.items()]
    return {"assumptions": rows, "notes": list(notes),
            "sources": [{"figure": f, "value": v, "source": s, "date": d} for f, v, s, d in sources]}


def render_combined(runs: list[Any], *, html: bool, against: str | None, title: str = "Stack review") -> str:
    """One report for several stacks (``runs``: `dbx_ai_infra.engine.multi.StackRun`, already in report order): a
    summary line per stack, changed stacks in full, unchanged ones folded away, errors with their message, and the
    assumptions and price sources once."""
    from markupsafe import Markup

    esc = _plain if html else _md_cell
    summary: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    shown: list[Any] = []  # Markdown text, or {"stack", "html"} for HTML
    folded: list[Any] = []
    priced: list[tuple[str, dict[str, Any]]] = []
    for run in runs:
        if run.plan is None:
            summary.append({"stack": esc(run.stack), "cloud": "", "monthly": "", "delta": "", "error": True,
                            "policies": "", "status": esc("error: could not be reviewed")})
            errors.append({"stack": run.stack, "source": run.source, "error": str(run.error).replace("```", "'''")})
            continue
        ctx = report_context(run.plan, run.diff, markdown=not html, part=True)
        if ctx["has_cost"]:
            priced.append((run.plan.stack, ctx))
        delta = ((run.diff or {}).get("total") or {}).get("delta", {}).get("monthly_expected") if run.diff else None
        status = ("no base plan: new" if against else "no base") if run.diff is None else \
            ("changed" if run.changed else "unchanged")
        summary.append({"stack": esc(run.plan.stack), "cloud": esc(run.plan.cloud), "error": False,
                        "monthly": esc(ctx["total"].get("expected", "n/a")) + (
                            esc(" (incomplete: unpriced " + ", ".join(run.plan.cost.total.unpriced) + ")")
                            if run.plan.cost is not None and not run.plan.cost.total.complete else ""),
                        "delta": esc("-" if run.diff is None else signed_money(delta)),
                        "policies": ctx["violations_summary"] if ctx["has_violations"] else esc("none"),
                        "status": esc(status)})
        body = render_template(HTML_TEMPLATE if html else MARKDOWN_TEMPLATE, ctx)
        section = {"stack": run.plan.stack, "html": Markup(body)} if html else body
        (shown if run.changed else folded).append(section)
    unchanged = [r.plan.stack for r in runs if r.plan is not None and not r.changed]
    context = {
        "title": esc(f"{title}: {len(runs)} stacks" + (f" against {against}" if against else "")),
        "summary": summary, "errors": errors, "shown": shown, "folded": folded,
        "folded_summary": esc(f"{len(folded)} unchanged stack{'s' if len(folded) != 1 else ''}: "
                              f"{', '.join(unchanged)}"),
        "has_reference": bool(priced),
        **_merged_reference(priced),
    }
    return render_template("combined.html.j2" if html else "combined.md.j2", context)
