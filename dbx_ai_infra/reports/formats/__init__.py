"""The format registry: a ``--format`` name -> its renderer and the report kinds it accepts.

A format is one module here with a ``render(report) -> str`` function (``report``: a `dbx_ai_infra.reports.reportdoc`
document) and one line in `FORMATS`. The commands' ``--format`` choices are built from this table, and a module is
imported only when its format is used (the start-up budget of issue 23).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dbx_ai_infra.reports.reportdoc import Report

#: The report kinds (`dbx_ai_infra.reports.reportdoc`), in the order the CLI names them.
KINDS = ("preview", "check", "cost", "audit", "drift", "advise")
STACKS = frozenset({"preview", "check", "cost"})
FINDINGS = STACKS | {"audit", "drift"}
EVERY = frozenset(KINDS)


@dataclass(frozen=True)
class Format:
    name: str
    help: str
    #: The report kinds this format renders (`dbx_ai_infra.reports.reportdoc`).
    kinds: frozenset[str]
    #: The module (under this package) whose ``render`` draws it; imported on first use.
    module: str

    def render(self, report: Report) -> str:
        renderer = importlib.import_module(f"{__name__}.{self.module}")
        return str(renderer.render(report))


FORMATS = (
    Format("table", "a table (default)", EVERY, "table"),
    Format("json", "JSON (same as --json)", EVERY, "json_doc"),
    Format("sarif", "SARIF 2.1.0 for code scanning, each finding at the stack field behind it", FINDINGS, "sarif"),
    Format("junit", "JUnit XML for CI test reports", FINDINGS, "junit"),
    Format("github", "GitHub Actions annotations", FINDINGS, "github"),
    Format("markdown", "Markdown (a pull-request comment)", STACKS | {"advise"}, "markdown"),
    Format("html", "a standalone HTML page", STACKS | {"advise"}, "html"),
)
BY_NAME = {f.name: f for f in FORMATS}
#: The formats whose output is a list of findings for CI (the same in every command that finds something).
FINDING_FORMATS = tuple(f.name for f in FORMATS if f.module in ("sarif", "junit", "github"))


def choices(*kinds: str) -> list[str]:
    """The format names a command offers: those that render any of its report kinds, in registry order."""
    return [f.name for f in FORMATS if f.kinds & set(kinds)]


def help_text(*kinds: str) -> str:
    """``--format``'s help: each offered format and what it is."""
    return "; ".join(f"{f.name}: {f.help}" for f in FORMATS if f.kinds & set(kinds))


def accepts(name: str, kind: str) -> bool:
    return kind in BY_NAME[name].kinds


def kinds_of(name: str) -> list[str]:
    """The report kinds a format renders: for an error that says where a format can be used."""
    return [k for k in KINDS if k in BY_NAME[name].kinds]


def render(name: str, report: Report) -> str:
    """``report`` in format ``name`` (a name `choices` offered for the report's kind)."""
    fmt = BY_NAME[name]
    if report.kind not in fmt.kinds:  # the CLI refuses such a pair before any work; this guards the API
        raise ValueError(f"format {name} does not render a {report.kind} report")
    return fmt.render(report)
