"""Terminal rendering with rich: the resource table, violations and costs."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from dbx_ai_infra.dbxtypes.plan import Plan, Violation
from dbx_ai_infra.dbxtypes.text import printable
from dbx_ai_infra.reports.summary import (
    facts,
    leaves_out,
    money,
    month_text,
    prices_line,
    short_type,
    signed_money,
    spot_lines,
    subject,
    total_month_unknown,
    violations_summary,
)

FILE_WIDTH = 160  # files, pipes and tests: one stable width, no colour
_width = FILE_WIDTH
_colour = False
_terminal = False
_LEVEL_STYLE = {"mandatory": "bold red", "advisory": "yellow", "excepted": "dim", "baselined": "dim",
                "not-judged": "cyan"}


def fit_terminal(columns: int, colour: bool) -> None:
    """Render for a terminal: ``columns`` wide (at least 80), in colour unless ``colour`` is false (NO_COLOR)."""
    global _width, _colour, _terminal
    _width, _colour, _terminal = max(80, columns), colour, True


def current_width() -> int:
    """The width tables are rendered at: the terminal's (see `fit_terminal`) or `FILE_WIDTH`."""
    return _width


def plain_console(buffer: io.StringIO, width: int, colour: bool = False) -> Console:
    """A console that shows text as written: no markup (``[red]``, ``[/x]`` in a name or an env var is text, never a
    style or a MarkupError), no emoji codes, no highlighting."""
    return Console(file=buffer, width=width, no_color=not colour, force_terminal=colour, highlight=False,
                   soft_wrap=False, markup=False, emoji=False)


def _console(buffer: io.StringIO) -> Console:
    return plain_console(buffer, _width, _colour)


def cell(text: str, style: str = "") -> Text:
    """A table cell of input text: control characters escaped (`dbx_ai_infra.dbxtypes.text.printable`)."""
    return Text(printable(text), style=style)


def title(text: str) -> Text:
    return Text(printable(text, one_line=True))


#: The narrowest the free-text column ("what", a violation's message) is let shrink to before a less important column
#: goes: below it, the text folds into the name's cell instead.
TEXT_MIN = 30


def table_width(widths: list[int]) -> int:
    """The width rich's default box gives columns of these content widths (a space each side, a rule between)."""
    return sum(widths) + 3 * len(widths) + 1


def _resource_rows(plan: Plan) -> list[tuple[str, str, str, list[str]]]:
    """Each resource's row (components first, each followed by its children): its short type, name, what it is, and
    its prices when the plan is priced ($/hour, $/month expected; blank for one without a cost entry)."""
    cost = plan.cost.resources if plan.cost is not None else {}
    ordered = sorted(plan.resources, key=lambda r: (r.parent or r.urn, r.parent is not None, r.name))
    rows = []
    for r in ordered:
        c = cost.get(r.urn)
        prices = ([] if not cost else ["", ""] if c is None else [money(c.hourly), month_text(c, c.monthly.expected)])
        rows.append((short_type(r.type), printable(r.name), printable(facts(r)), prices))
    return rows


def _resources_table(plan: Plan, rows: list[tuple[str, str, str, list[str]]]) -> Table:
    """The resource table at the current width: the type column goes first, then what each resource is moves under
    its name (names and money never truncate)."""
    priced = bool(plan.cost is not None and plan.cost.resources)
    name_w = max([len(r[1]) for r in rows] + [4])
    type_w = max([len(r[0]) for r in rows] + [4])
    money_w = [max([len(r[3][i]) for r in rows] + [len(h)]) for i, h in enumerate(("$/hour", "$/month"))] \
        if priced else []
    fixed = [name_w, *money_w]
    show_type = _width >= table_width([type_w, *fixed, TEXT_MIN])
    what_apart = show_type or _width >= table_width([*fixed, TEXT_MIN])
    table = Table(title=title(f"{subject(plan)} {plan.stack} ({plan.cloud}) - {len(plan.resources)} resources"),
                  title_justify="left")
    if show_type:
        table.add_column("type", no_wrap=True, min_width=type_w)
    table.add_column("name" if what_apart else "name / what", no_wrap=what_apart, min_width=name_w)
    if what_apart:
        table.add_column("what", overflow="fold")
    if priced:
        table.add_column("$/hour", justify="right", no_wrap=True, min_width=money_w[0])
        table.add_column("$/month (expected)", justify="right", no_wrap=True, min_width=money_w[1])
    for kind, name, what, prices in rows:
        head = [Text(kind)] if show_type else []
        # apart: a column each; else the name whole on its line, what it is folded under it
        cells = [Text(name), Text(what)] if what_apart else [Text(name + ("\n  " + what if what else ""),
                                                                    overflow="fold")]
        table.add_row(*head, *cells, *map(Text, prices))
    return table


def _cost_lines(plan: Plan) -> list[str]:
    """The total, the price sources and the spot lines of a priced plan (none when it is not priced)."""
    if plan.cost is None:
        return []
    total = plan.cost.total
    month = ("the month unknown" if total_month_unknown(plan.cost) else
             f"{money(total.monthly.min)} - {money(total.monthly.max)}/month, "
             f"expected {money(total.monthly.expected)}/month")
    return [f"Total: {money(total.hourly)}/hour at the base size, {money(total.hourly_max)}/hour at full size; "
            f"{month} ({plan.cost.currency}){leaves_out(total.unpriced, total.hourly_only)}",
            f"Prices: {prices_line(plan.cost)}", *(f"  {spot}" for spot in spot_lines(plan.cost))]


def _notes(plan: Plan) -> list[str]:
    """The sizing lines (under their heading) and the advice of a plan."""
    sizing = ["Sizing (GPU memory need -> node):", *(f"  {line.text}" for line in plan.sizing)] if plan.sizing else []
    return [*sizing, *(f"Advice ({a.id}): {a.resource_name}: {a.message}" for a in plan.advice or [])]


def plan_table(plan: Plan) -> str:
    """The resources, with what each is and costs, then the totals, sizing, advice and findings. Names and money
    never truncate: at a narrow width the type column goes first, then what each resource is moves under its name."""
    buffer = io.StringIO()
    console = _console(buffer)
    console.print(_resources_table(plan, _resource_rows(plan)))
    lines = _cost_lines(plan)
    if lines:  # the total line printed as a string, as it always was; the others as text
        console.print(lines[0], soft_wrap=not _terminal)
    for line in [*lines[1:], *_notes(plan)]:
        console.print(Text(printable(line)), soft_wrap=not _terminal)
    if plan.violations is not None:
        buffer.write(violations_table(plan.violations))  # rendered already: printed again, it was read as markup
    return buffer.getvalue()


def violations_table(violations: list[Violation], heading: str = "Policy violations") -> str:
    """The findings. A policy's name never breaks mid-word: where the width cannot hold it beside the resource and a
    readable message, the policy, the resource and the message share one column, each on its own line."""
    buffer = io.StringIO()
    console = _console(buffer)
    if not violations:
        console.print("Policies: no violations.")
        return buffer.getvalue()
    level_w = max(len(v.level) for v in violations)
    policy_w = max(len(v.policy) for v in violations)
    resource_w = max(len(printable(v.resource_name)) for v in violations)
    apart = _width >= table_width([level_w, policy_w, min(resource_w, 40), TEXT_MIN])
    table = Table(title=title(f"{heading}: {violations_summary(violations)}"), title_justify="left")
    table.add_column("level", no_wrap=True, min_width=level_w)
    if apart:
        table.add_column("policy", no_wrap=True, min_width=policy_w)
        table.add_column("resource", overflow="fold")
        table.add_column("message", overflow="fold", ratio=2)
    else:
        table.add_column("policy / resource / message", overflow="fold")
    for v in violations:  # a message such as "local[*]" or "[red]" is shown as written
        style = _LEVEL_STYLE["mandatory"] if v.mandatory else _LEVEL_STYLE.get(v.level, "")
        if apart:
            table.add_row(cell(v.level, style), cell(v.policy), cell(v.resource_name), cell(v.shown_message))
        else:
            table.add_row(cell(v.level, style), Text(printable(f"{v.policy}\n{v.resource_name}\n{v.shown_message}"),
                                                     overflow="fold"))
    console.print(table)
    return buffer.getvalue()


def _expected(side: dict[str, Any] | None) -> str:
    """A side's expected $/month in a cost change: ``-`` when absent, the hourly figure when priced by the hour only."""
    if side is None:
        return "-"
    if side.get("monthly_expected") is None and side.get("hourly") is not None:  # priced by the hour only
        return f"unknown ({money(side['hourly'])}/h)"
    return money(side.get("monthly_expected"))


def _change(delta: dict[str, Any]) -> str:
    """A cost change's delta: signed $/month, else unknown (with the hourly delta where it is known)."""
    month, hour = delta.get("monthly_expected"), delta.get("hourly")
    if month is not None:
        return signed_money(month)
    return "unknown" if hour is None else f"unknown ({signed_money(hour)}/h)"


def _diff_row(row: dict[str, Any]) -> tuple[Text, ...]:
    """A changed resource's row: its change (and what changed), type, name, before, after, delta."""
    status = row["status"] + (f": {', '.join(row['what'])}" if row.get("what") else "")
    return tuple(map(cell, (status, short_type(row["type"]), row["name"], _expected(row["base"]),
                            _expected(row["head"]), _change(row["delta"]))))


def _diff_notes(diff: dict[str, Any]) -> list[str]:
    """The lines under a cost change: what leaves the change unknown, and each workload's sizing before and after."""
    total = diff["total"]
    lines = []
    if total.get("complete") is False:
        gone = [f"{side} {', '.join(names)}" for side, names in (total.get("unpriced") or {}).items() if names]
        lines.append(f"The change is unknown: unpriced on the {'; on the '.join(gone)} (left out of the totals above; "
                     f"an unpriced resource is never a saving).")
    return [*lines, *(f"Sizing of {z['workload']}: {z['base'] or '-'}  ->  {z['head'] or '-'}"
                      for z in diff.get("sizing") or [])]


def diff_table(diff: dict[str, Any]) -> str:
    buffer = io.StringIO()
    console = _console(buffer)
    table = Table(title=title(f"Cost change: {diff.get('base_stack')} -> {diff.get('head_stack')}"),
                  title_justify="left")
    table.add_column("change", overflow="fold")
    for column in ("type", "name"):
        table.add_column(column)
    for column in ("$/month before", "$/month after", "delta"):
        table.add_column(column, justify="right")
    for row in diff["rows"]:
        if row["status"] != "unchanged":
            table.add_row(*_diff_row(row))
    total = diff["total"]
    gone = total.get("unpriced") or {}
    table.add_row("total", "", "", *(_expected(total[side]) + (" + unpriced" if gone.get(side) else "")
                                    for side in ("base", "head")), _change(total["delta"]))
    console.print(table)
    for line in _diff_notes(diff):
        console.print(printable(line), soft_wrap=True)
    return buffer.getvalue()
