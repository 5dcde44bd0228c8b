"""The benchmark suite: prints tables and writes them as Markdown (see --out and --record).

    .venv/bin/python bench/run.py                 # everything (what `make bench` runs), writes bench/RESULTS.latest.md
    .venv/bin/python bench/run.py --quick         # smaller sizes and fewer repeats
    .venv/bin/python bench/run.py --only growth   # one section: floor | growth | audit | advise | peer

A full run writes bench/RESULTS.latest.md, a --quick or --only run bench/RESULTS.partial.md (both git-ignored),
unless --out says otherwise; only a full run with --record (`make bench-record`) replaces the committed
bench/RESULTS.md, so running the benchmarks never dirties the tree by accident.

Every process measurement runs the command as a child of this process, its wall time from time.perf_counter around
it and its peak RSS measured by GNU time (/usr/bin/time, a fresh small process), so neither this process's memory
nor one measurement's leaks into another's. checkov is installed into its own virtualenv, bench/.venv-checkov,
because its pins (packaging<24) conflict with pulumi's (packaging>=26); this script creates it on first use.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import workload  # noqa: E402

from dbx_ai_infra.advise.findings import gpu_underutilized, latency_scale_out  # noqa: E402

#: What the advise benchmark plants: GPUs idle on the training cluster, latency over the SLA on inference.
_BENCH_PLANTS = (gpu_underutilized.SPEC.id, latency_scale_out.SPEC.id)

PY = sys.executable
CHECKOV_VENV = BENCH / ".venv-checkov"
CHECKOV_REQUIREMENTS = BENCH / "requirements-checkov.txt"
CHECKOV_CHECKS = BENCH / "checkov_checks"
STACKS = ("dev", "prod", "azure-prod", "gcp-dev")
#: Stack files checked in one process by the floor section (issue 23's goal: 1.4x the floor).
TEN_STACKS = 10
LINEAR_WITHIN = 1.5
#: The smallest difference of two whole-process times that a ratio is computed from.
MIN_SIGNAL = 0.15


@dataclass(frozen=True)
class Settings:
    """Sizes and repeats. A "round" runs every command of a section once, in turn, so that the machine's slow and
    fast spells (it is a shared VM) fall on all of them alike instead of on whichever ran last."""

    quick: bool
    floor_rounds: int
    growth_sizes: tuple[int, ...]
    growth_rounds: int
    peer_sizes: tuple[int, ...]
    peer_rounds: int
    #: (clusters, jobs) of the workspace-audit section (issue 15: up to 10,000 clusters and 5,000 jobs)
    audit_sizes: tuple[tuple[int, int], ...] = ((1000, 500), (2500, 1250), (5000, 2500), (10_000, 5000))
    #: files of the Terraform tree (issue 51, item 8: 5,000 files, each its variables, locals and one cluster)
    terraform_files: int = 5000
    terraform_rounds: int = 2
    #: days of telemetry of the advise section (each size), and whether it runs the analysis on Spark too
    advise_days: tuple[float, ...] = (7.5, 15.0, 30.0)
    advise_spark: bool = True
    #: rounds of the advise section's scan and analysis (each size): one of each in turn per round, the best of each
    #: kept (issue 53, item 3: with 2, the scan and then the analysis, consecutive recordings on this VM read 2.60x
    #: and 3.50x for one code; a slow spell fell on one side of the ratio)
    advise_rounds: int = 5


FULL = Settings(quick=False, floor_rounds=4, growth_sizes=(10, 100, 1000, 5000), growth_rounds=7,
                peer_sizes=(200, 2000, 5000), peer_rounds=3)
QUICK = Settings(quick=True, floor_rounds=2, growth_sizes=(10, 100, 500, 1000), growth_rounds=2,
                 peer_sizes=(10, 100), peer_rounds=1, audit_sizes=((500, 250), (1000, 500), (2000, 1000)),
                 terraform_files=500, terraform_rounds=1, advise_days=(2.0, 4.0, 8.0), advise_rounds=2)
#: Every section at the least size that runs it whole (`--tiny`): what tests/test_bench.py runs, so that a change
#: that breaks a benchmark case fails the suite instead of the next recording. Its figures mean nothing.
TINY = Settings(quick=True, floor_rounds=1, growth_sizes=(2, 4), growth_rounds=1, peer_sizes=(2,), peer_rounds=1,
                audit_sizes=((4, 2), (8, 4)), terraform_files=4, terraform_rounds=1, advise_days=(0.05, 0.1),
                advise_spark=False, advise_rounds=1)


# --------------------------------------------------------------------------------------------------------------------
# Measuring a child process
# --------------------------------------------------------------------------------------------------------------------

@dataclass
class Run:
    wall: float
    rss_mib: float
    rc: int


@dataclass
class Measured:
    runs: list[Run] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(r.wall for r in self.runs)

    @property
    def rss_mib(self) -> float:
        return statistics.median(r.rss_mib for r in self.runs)

    @property
    def best(self) -> float:
        return min(r.wall for r in self.runs)

    @property
    def spread(self) -> str:
        walls = [r.wall for r in self.runs]
        return f"{min(walls):.2f}-{max(walls):.2f}" if len(walls) > 1 else "-"


class CommandFailed(RuntimeError):
    pass


#: GNU time (Debian package ``time``): measures a child's peak RSS from a fresh, small process. ``ru_maxrss`` of a
#: child forked by this process is not the child's own figure: Linux carries the forking process's high-water RSS
#: into the exec'd child (the old address space's mark is kept at exec), so a child of a large bench process
#: reported that process's peak (the bare interpreter's "33 MiB" was 8.4 MiB). time(1) is a process of about 2 MiB.
GNU_TIME = shutil.which("time", path="/usr/bin:/bin")


#: The children's environment: Python's default of caching bytecode (under .venv/pycache, as `make` runs it), also
#: where this machine's environment sets PYTHONDONTWRITEBYTECODE. The floor reads the provider's bytecode that pip
#: compiled at install; without a cache, every measured run would compile the project's own modules again, which
#: is not what a user's second run pays.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(REPO / ".venv" / "pycache")


def run_child(cmd: Sequence[str], *, stdout: Path | None = None, env: dict[str, str] | None = None,
              ok: Sequence[int] = (0,), cwd: Path = REPO) -> Run:
    """Run ``cmd`` once; its wall time, its own peak RSS (measured by GNU time from a fresh process, so that this
    process's size never leaks into the figure) and its exit code."""
    with tempfile.TemporaryFile() as err, open(stdout or os.devnull, "wb") as out, \
            tempfile.NamedTemporaryFile(prefix="rss-", suffix=".txt") as rss_file:
        launcher = [GNU_TIME, "--quiet", "-f", "%M", "-o", rss_file.name] if GNU_TIME else []
        start = time.perf_counter()
        proc = subprocess.Popen([*launcher, *map(str, cmd)], stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                cwd=cwd, env={**CHILD_ENV, **(env or {})})
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = rc = os.waitstatus_to_exitcode(status)
        if rc not in ok:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-2000:]
            raise CommandFailed(f"{' '.join(map(str, cmd))} exited {rc}:\n{tail}")
        figure = Path(rss_file.name).read_text().strip().splitlines()[-1:] if GNU_TIME else []
        rss_kib = int(figure[0]) if figure and figure[0].isdigit() else usage.ru_maxrss  # both KiB on Linux
    return Run(wall=wall, rss_mib=rss_kib / 1024, rc=rc)


def measure(cmd: Sequence[str], runs: int, **kwargs: Any) -> Measured:
    m = Measured()
    for _ in range(runs):
        m.runs.append(run_child(cmd, **kwargs))
    return m


def interleaved(commands: dict[str, tuple[Sequence[str], dict[str, Any]]], rounds: int,
                what: str = "", repeats: Mapping[str, int] | None = None) -> dict[str, Measured]:
    """Run every command once per round, in turn (``repeats``: a label's command that many times in a row in each
    round); ``commands`` maps a label to ``(cmd, run_child kwargs)``."""
    out = {label: Measured() for label in commands}
    for r in range(rounds):
        log(f"{what}round {r + 1}/{rounds}: {sum((repeats or {}).get(label, 1) for label in commands)} processes")
        for label, (cmd, kwargs) in commands.items():
            for _ in range((repeats or {}).get(label, 1)):
                out[label].runs.append(run_child(cmd, **kwargs))
    return out


def best_time(fn: Callable[[], Any], runs: int, budget: float = 0.5, cap: int = 500) -> tuple[float, float, int, Any]:
    """Time ``fn()`` in this process at least ``runs`` times and until ``budget`` seconds are spent (at most ``cap``
    runs): the fastest and the median run, the number of runs, and the last result. The fastest run is the
    figure to compare: on a shared machine noise only ever adds time."""
    times: list[float] = []
    result = None
    while len(times) < runs or (sum(times) < budget and len(times) < cap):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), len(times), result


# --------------------------------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------------------------------

def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """A Markdown table, padded so it also reads well on a terminal. ``align``: one of l/r per column."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    align = align or "l" + "r" * (len(headers) - 1)

    def fmt(row: list[str]) -> str:
        cells_out = (c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(row, widths, align, strict=False))
        return "| " + " | ".join(cells_out) + " |"

    dashes = (("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2)) for w, a in zip(widths, align, strict=False))
    rule = "|" + "|".join(dashes) + "|"
    return "\n".join([fmt(cells[0]), rule] + [fmt(r) for r in cells[1:]])


def dur(x: float | None) -> str:
    """A duration in the unit that suits it: µs, ms or s."""
    if x is None:
        return "n/a"
    if abs(x) < 1e-3:
        return f"{x * 1e6:.1f} µs"
    if abs(x) < 1:
        return f"{x * 1e3:.1f} ms"
    return f"{x:.2f} s"


secs = ms = us = dur


def mib(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0f} MiB"


class Report:
    """Collects sections: printed as they are made, written together at the end."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.notes: list[str] = []

    def add(self, text: str) -> None:
        print(text + "\n", flush=True)
        self.parts.append(text)

    def note(self, text: str) -> None:
        """Something surprising or a caveat, also gathered at the end."""
        self.notes.append(text)


def N(n: int) -> str:
    return f"{n:,}"


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------------------------
# Machine
# --------------------------------------------------------------------------------------------------------------------

def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {"cpu": cpu, "cores": f"{os.cpu_count()} logical ({affinity} usable)", "memory": mem,
            "python": f"{platform.python_version()} ({platform.python_implementation()}, {sys.executable})",
            "os": platform.platform(), "commit": commit}


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for name in ("pulumi", "pulumi-databricks", "pulumi-policy", "pydantic"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


# --------------------------------------------------------------------------------------------------------------------
# 1. Floor and phases
# --------------------------------------------------------------------------------------------------------------------

def section_floor(s: Settings, rep: Report) -> dict[str, Any]:
    log("floor: warming up")
    run_child([PY, "-c", "import pulumi_databricks"])
    run_child([PY, "-m", "stackplan", "preview", "--stack", STACKS[0]], ok=(0, 1))
    commands: dict[str, tuple[Sequence[str], dict[str, Any]]] = {
        "bare": ([PY, "-c", "pass"], {}),
        "floor": ([PY, "-c", "import pulumi_databricks"], {}),
        "no_exit": ([PY, "-c", "import os, pulumi_databricks; os._exit(0)"], {}),
    }
    for stack in STACKS:
        commands[stack] = ([PY, "-m", "stackplan", "preview", "--stack", stack], {"ok": (0, 1)})
    # issue 12: every shipped stack in one process (one provider import), against 1.5x the floor
    commands["all"] = ([PY, "-m", "stackplan", "preview", "--all", "--json"], {"ok": (0, 1)})
    commands["all_check"] = ([PY, "-m", "stackplan", "check", "--all", "--format", "sarif"], {"ok": (0, 1)})
    # issue 23: ten stack files (copies of the shipped ones) checked in one process, SARIF, against 1.4x the floor
    ten = Path(tempfile.mkdtemp(prefix="dbx-bench-ten-"))
    ten_files = []
    for i in range(TEN_STACKS):
        stack = STACKS[i % len(STACKS)]
        copy = ten / f"Pulumi.{stack}-{i}.yaml"
        copy.write_text((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"), encoding="utf-8")
        ten_files += ["--stack", str(copy)]
    commands["ten_check"] = ([PY, "-m", "stackplan", "check", *ten_files, "--format", "sarif"], {"ok": (0, 1)})
    m = interleaved(commands, s.floor_rounds, "floor: ")
    shutil.rmtree(ten, ignore_errors=True)
    floor = m["floor"]
    labels = {"bare": "`python -c pass` (bare interpreter)",
              "floor": "`python -c 'import pulumi_databricks'` (**the floor**)",
              "no_exit": "`python -c 'import os, pulumi_databricks; os._exit(0)'` (the floor without interpreter "
                         "teardown)"}
    labels.update({stack: f"`python -m stackplan preview --stack {stack}`" for stack in STACKS})
    labels["all"] = f"`python -m stackplan preview --all --json` ({len(STACKS)} stacks, one process)"
    labels["all_check"] = f"`python -m stackplan check --all --format sarif` ({len(STACKS)} stacks)"
    labels["ten_check"] = (f"`python -m stackplan check --stack F1 ... --stack F{TEN_STACKS} --format sarif` "
                           f"({TEN_STACKS} stack files, copies of the shipped ones)")
    rows = [[labels[k], secs(v.wall), v.spread, mib(v.rss_mib), f"{v.wall / floor.wall:.2f}x"] for k, v in m.items()]
    rep.add("## 1. Floor and preview processes\n\n"
            f"Whole processes, {s.floor_rounds} rounds (each round runs every process once, in this order) after a "
            "warm-up; `wall` is the median, `range` min-max of the runs; `vs floor` = median / the floor's "
            "median.\n\n"
            + table(["process", "wall (median)", "range (s)", "peak RSS", "vs floor"], rows, align="lrrrr"))
    previews = {stack: m[stack] for stack in STACKS}
    no_exit, bare = m["no_exit"], m["bare"]

    phase_rows, import_rows, pricing_errors = [], [], set()
    for stack in STACKS:
        log(f"phases: bench/phases.py {stack}")
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
            out_path = Path(tmp.name)
        try:
            outer = run_child([PY, str(BENCH / "phases.py"), stack], stdout=out_path)
            data = json.loads(out_path.read_text())
        finally:
            out_path.unlink(missing_ok=True)
        p = data["phases"]
        if data.get("pricing_error"):
            pricing_errors.add(data["pricing_error"])
        startup = outer.wall - data["in_process_total"]
        phase_rows.append([stack, str(data["resources"]), ms(p["import"]), ms(p["program"]), ms(p["policies"]),
                           "not available" if p["pricing"] is None else ms(p["pricing"]), ms(p["render"]),
                           ms(startup), secs(outer.wall)])
        import_rows.append([stack] + [ms(data["imports"][k]) for k in
                                      ("stackspec", "dbx_ai_infra.engine.engine", "policies", "pricing",
                                       "pulumi_databricks", "dbx_ai_infra.reports.render")])
    text = ("### Per phase, one in-process run per stack\n\n"
            "`bench/phases.py STACK` in a fresh process times each phase with `time.perf_counter`: imports, "
            "program (load_stack + run_program under Pulumi mocks), policies (evaluate_plan), pricing "
            "(price_plan(plan, load_prices())), render (plan_table). `start + exit` = the process's outside "
            "wall time minus its inside total: interpreter start-up (about the bare interpreter's time) plus "
            "interpreter teardown at exit.\n\n"
            + table(["stack", "resources", "import", "program", "policies", "pricing", "render", "start + exit",
                     "process"], phase_rows)
            + "\n\nImports, each timed on its own in this order (a module's figure excludes what an earlier one "
              "already loaded, e.g. `policies` and `pricing` come in with `stackspec`):\n\n"
            + table(["stack", "stackspec", "dbx_ai_infra.engine.engine", "policies", "pricing", "pulumi_databricks",
                     "dbx_ai_infra.reports.render"], import_rows))
    if pricing_errors:
        text += "\n\nPricing not available: " + "; ".join(sorted(pricing_errors))
        rep.note("pricing was not available: " + "; ".join(sorted(pricing_errors)))
    rep.add(text)
    ratios = {k: v.wall / floor.wall for k, v in previews.items()}
    teardown = floor.wall - no_exit.wall
    if teardown > 0.25:
        rep.note(f"interpreter teardown after `import pulumi_databricks` costs about {secs(teardown)} "
                 f"({teardown / floor.wall:.0%} of the floor): the floor with os._exit(0) is {secs(no_exit.wall)}. "
                 "`python -m stackplan` skips it (it flushes its output and calls os._exit), which is why a "
                 "preview process can take less than the floor; bench/phases.py still pays it (`start + exit`).")
    return {"floor": floor.wall, "bare": bare.wall, "no_exit": no_exit.wall, "preview_ratios": ratios,
            "all_ratio": m["all"].wall / floor.wall, "all_check_ratio": m["all_check"].wall / floor.wall,
            "ten_check_ratio": m["ten_check"].wall / floor.wall}


# --------------------------------------------------------------------------------------------------------------------
# 1b. Team rules in their own process (issue 54, item 1)
# --------------------------------------------------------------------------------------------------------------------

#: How many team rules the team section loads (issue 54: 8 over the prod stack).
TEAM_RULE_COUNT = 8
_TEAM_RULE = """
from dbx_ai_infra.dbxtypes.shape import ClusterShape
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, INSTANCE_POOL, JOB
from dbx_ai_infra.policies.rule import Rule


def check(view, config):
    tags = view.tags if isinstance(view, ClusterShape) else {{}}
    return [] if tags.get("{tag}") else ["no {tag} tag. Fix: add it."]


RULE = Rule(name="bench-team-{n}", description="a {tag} tag", enforcement="advisory",
            resource_types=(CLUSTER, JOB, INSTANCE_POOL), check=check, remediation="add it")
"""


def team_rules_dir(tmp: Path) -> Path:
    """``TEAM_RULE_COUNT`` rule modules, each judging every cluster, job and pool (a tag each asks for)."""
    folder = tmp / "team-rules"
    folder.mkdir(exist_ok=True)
    for n in range(TEAM_RULE_COUNT):
        (folder / f"rule_{n}.py").write_text(_TEAM_RULE.format(n=n, tag=f"team_tag_{n}"), encoding="utf-8")
    return folder


def section_team(s: Settings, rep: Report, tmp: Path) -> dict[str, Any]:
    """``check --stack prod`` with and without 8 team rules, whole processes, against the floor; and in one
    process, `evaluate_plan` of prod with the rules loaded (their process started once, the calls of every resource
    sent in one message)."""
    folder = team_rules_dir(tmp)
    log("team: warming up")
    check = [PY, "-m", "stackplan", "check", "--stack", "prod", "--format", "sarif"]
    run_child(check + ["--rules", str(folder)], ok=(0, 1))
    commands: dict[str, tuple[Sequence[str], dict[str, Any]]] = {
        "floor": ([PY, "-c", "import pulumi_databricks"], {}),
        "check": (check, {"ok": (0, 1)}),
        "team": ([*check, "--rules", str(folder)], {"ok": (0, 1)}),
    }
    m = interleaved(commands, s.floor_rounds, "team: ")
    floor = m["floor"].wall
    labels = {"floor": "`python -c 'import pulumi_databricks'` (**the floor**)",
              "check": "`python -m stackplan check --stack prod --format sarif`",
              "team": f"the same with `--rules DIR` ({TEAM_RULE_COUNT} team rules, in their own process)"}
    rows = [[labels[k], secs(v.wall), v.spread, mib(v.rss_mib), f"{v.wall / floor:.2f}x"] for k, v in m.items()]
    inside = _child_json(_TEAM_IN_PROCESS, str(folder))
    text = ("## 1b. Team rules in their own process\n\n"
            f"`--rules DIR` with {TEAM_RULE_COUNT} rules over the prod stack (each judges every cluster, job and "
            "pool): the rules are loaded and judged in a child process (issue 54), one per run, the calls of all "
            f"the resources in one message. Whole processes, {s.floor_rounds} rounds after a warm-up, as in 1.\n\n"
            + table(["process", "wall (median)", "range (s)", "peak RSS", "vs floor"], rows, align="lrrrr")
            + "\n\nIn one process (best of several runs): loading the rules (the child's start and its imports), "
              "and `evaluate_plan(prod)` without and with them.\n\n"
            + table(["step", "time"], [["load the team rules (start their process)", ms(inside["load"])],
                                       ["evaluate_plan(prod), built-in rules", ms(inside["built_in"])],
                                       [f"evaluate_plan(prod), + {TEAM_RULE_COUNT} team rules "
                                        f"({inside['calls']} calls, {inside['messages']} message)",
                                        ms(inside["with_team"])]], align="lr"))
    rep.add(text)
    return {"team_ratio": m["team"].wall / floor, "check_ratio": m["check"].wall / floor,
            "added": m["team"].wall - m["check"].wall}


_TEAM_IN_PROCESS = """
import json, sys, time
from dbx_ai_infra.engine.pipeline import build_plan
from dbx_ai_infra.policies.evaluate import evaluate_plan
from dbx_ai_infra.policies.registry import forget_team_rules, load_team_rules, use_team_rules
from dbx_ai_infra.policies.team_process import TeamProcess

plan = build_plan("prod", with_policies=False, with_cost=False)
def best(fn, runs=5):
    times = []
    for _ in range(runs):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    return min(times)
built_in = best(lambda: evaluate_plan(plan))
t = time.perf_counter(); use_team_rules(load_team_rules(sys.argv[1])); load = time.perf_counter() - t
sent = []
original = TeamProcess._send
def counting(self, op, body):
    sent.append(len(body))
    return original(self, op, body)
TeamProcess._send = counting
evaluate_plan(plan)
calls, messages = sum(sent), len(sent)
with_team = best(lambda: evaluate_plan(plan))
forget_team_rules()
print(json.dumps({"load": load, "built_in": built_in, "with_team": with_team, "calls": calls, "messages": messages}))
"""


# --------------------------------------------------------------------------------------------------------------------
# 2. Growth
# --------------------------------------------------------------------------------------------------------------------

def _violation_pairs(violations: Sequence[Any], rules: Sequence[str] | None = None) -> set[tuple[str, str]]:
    """(resource, policy) pairs of violations given as JSON dicts or typed `Violation` s."""
    as_dicts = [v if isinstance(v, dict) else v.to_json() for v in violations]
    return {(v["resource_name"], v["policy"]) for v in as_dicts if rules is None or v["policy"] in rules}


def section_growth(s: Settings, rep: Report, tmp: Path) -> dict[str, Any]:
    from dbx_ai_infra.policies.registry import evaluate_export, evaluate_plan, views_of
    from dbx_ai_infra.sources.exports import export_items

    evaluate_plan(workload.make_plan(workload.make_clusters(10)))  # warm: catalog load, regex compile
    prepared: dict[int, dict[str, Any]] = {}
    for n in s.growth_sizes:
        clusters = workload.make_clusters(n)
        path = workload.write_cluster_json(clusters, tmp / f"clusters-{n}.json")
        cmd = [PY, "-m", "stackplan", "audit", "--cluster-json", str(path), "--json"]
        out = tmp / f"check-{n}.json"
        log(f"growth: {n} clusters, warm-up run and verification")
        run_child(cmd, stdout=out, ok=(0, 1))
        plan = workload.make_plan(clusters)
        prepared[n] = {"cmd": cmd, "plan": plan, "api": {"clusters": [workload.public(c) for c in clusters]},
                       "path": str(path),
                       "expected": workload.expected_pairs(clusters),
                       # the planted rules; the advisory rules that judge the rest (interconnect, retiring nodes)
                       # also fire on compliant clusters and are not what the generator plants
                       "got": _violation_pairs(json.loads(out.read_text())["violations"], workload.PEER_RULES),
                       "got_plan": _violation_pairs(evaluate_plan(plan), workload.PEER_RULES)}
    procs = interleaved({str(n): (p["cmd"], {"ok": (0, 1)}) for n, p in prepared.items()}, s.growth_rounds,
                        "growth, check process: ")
    # in-process: per round and size, the fastest of the runs that fit in 0.1 s (at least one)
    inproc: dict[int, list[float]] = {n: [] for n in prepared}
    inproc_api: dict[int, list[float]] = {n: [] for n in prepared}
    # the part of evaluate_export that reads each cluster's shape, before any rule runs (the largest size)
    largest = s.growth_sizes[-1]
    items = list(export_items(prepared[largest]["api"], "bench"))
    shapes: list[float] = []
    for r in range(s.growth_rounds):
        log(f"growth, evaluate_plan and evaluate_export in-process: round {r + 1}/{s.growth_rounds}")
        for n, p in prepared.items():
            inproc[n].append(best_time(lambda p=p: evaluate_plan(p["plan"]), 1, budget=0.1)[0])
            inproc_api[n].append(best_time(lambda p=p: evaluate_export(export_items(p["api"], "bench")), 1,
                                           budget=0.1)[0])
        shapes.append(best_time(lambda: [views_of(i.resource_type, i.props, "api") for i in items], 1,
                                budget=0.1)[0])
    rows, results = [], {}
    base_n = s.growth_sizes[0]
    base = procs[str(base_n)].best
    for n, p in prepared.items():
        proc = procs[str(n)]
        t_plan, t_plan_median = min(inproc[n]), statistics.median(inproc[n])
        marginal = (proc.best - base) / (n - base_n) if n > base_n else None
        exact = p["got"] == p["expected"] and p["got_plan"] == p["expected"]
        json_mib = Path(p["path"]).stat().st_size / 2**20
        added = proc.rss_mib - procs[str(base_n)].rss_mib
        results[n] = {"wall": proc.best, "wall_median": proc.wall, "rss": proc.rss_mib, "inproc": t_plan,
                      "marginal": marginal, "exact": exact, "json_mib": json_mib,
                      "rss_over_json": added / json_mib if n > base_n else None}
        rows.append([f"{n:,}", f"{len(p['expected']):,}", "yes" if exact else "NO",
                     f"{secs(proc.best)} ({secs(proc.wall)})", us(proc.best / n),
                     "-" if marginal is None else us(marginal), mib(proc.rss_mib),
                     f"{json_mib:.1f} MiB" + ("" if n == base_n else f" ({added / json_mib:.1f}x)"),
                     f"{ms(t_plan)} ({ms(t_plan_median)})", us(t_plan / n), us(min(inproc_api[n]) / n)])
        if not exact:
            rep.note(f"growth at {n}: violations differ from the generated expectation "
                     f"(cli missing {len(p['expected'] - p['got'])}, extra {len(p['got'] - p['expected'])}; "
                     f"evaluate_plan missing {len(p['expected'] - p['got_plan'])}, "
                     f"extra {len(p['got_plan'] - p['expected'])})")
    big, prev = s.growth_sizes[-1], s.growth_sizes[-2]
    r_inproc = (results[big]["inproc"] / big) / (results[prev]["inproc"] / prev)
    # The process's marginal cost is a difference of two whole-process times; below ~150 ms that difference is
    # within the run-to-run noise of this VM and a ratio of two such differences means nothing.
    increment = results[prev]["wall"] - results[s.growth_sizes[0]]["wall"]
    r_marginal = (results[big]["marginal"] / results[prev]["marginal"]
                  if results[prev]["marginal"] and increment >= MIN_SIGNAL else None)
    rss_slope = (results[big]["rss"] - results[s.growth_sizes[0]]["rss"]) / (big - s.growth_sizes[0]) * 1000

    def verdict(r: float | None) -> str:
        if r is None:
            return "n/a"
        verdict = "linear" if 1 / LINEAR_WITHIN <= r <= LINEAR_WITHIN else "NOT linear"
        return f"{r:.2f} -> {verdict} (within {LINEAR_WITHIN}x)"

    rep.add("## 2. Growth: policy check of N generated clusters\n\n"
            "`python -m stackplan audit --cluster-json FILE --json` as a whole process, and `evaluate_plan` "
            "in-process over a plan holding the same clusters as `databricks:index/cluster:Cluster` resources in "
            f"camelCase. {s.growth_rounds} interleaved rounds after a warm-up; times are the fastest round "
            "(the median in brackets), because on this shared VM noise only ever adds time and the per-cluster "
            "and linearity figures divide small differences; in-process each round keeps the fastest of the runs "
            "that fit in 0.1 s. The last column is `evaluate_export` in-process on the items of the API JSON the "
            "process reads, for comparison with the process's marginal cost. The workload: "
            "training, inference, single-node dev and CPU clusters on AWS, Azure and GCP with gpucatalog node "
            f"types; {workload.VIOLATING_SHARE:.0%} of them break exactly one rule. `exact` = both found exactly the "
            "expected (cluster, rule) pairs of the planted rules and nothing else (advisory rules such as the "
            "interconnect one also judge compliant clusters and are left out of the comparison). "
            "`per cluster` = wall / N; `marginal` = (wall(N) - "
            f"wall({s.growth_sizes[0]})) / (N - {s.growth_sizes[0]}), the cost of one more cluster without the "
            f"fixed start-up; `RSS added / JSON` = (peak RSS(N) - peak RSS({s.growth_sizes[0]})) / the export's "
            "size.\n\n"
            + table(["clusters", "violations", "exact", "process wall", "per cluster", "marginal", "peak RSS",
                     "JSON (RSS added / JSON)", "evaluate_plan", "per cluster", "evaluate_export per cluster"],
                    rows, align="lrlrrrrrrrr")
            + f"\n\nLinearity, per-cluster time at {big:,} / at {prev:,} (1 = linear):\n\n"
            f"- evaluate_plan in-process: {verdict(r_inproc)}\n"
            f"- check process, marginal per cluster: "
            + (verdict(r_marginal) if r_marginal is not None else
               f"n/a: {N(prev)} clusters add only {secs(increment)} to the process, within the run-to-run noise "
               f"(the marginal at {N(big)} is {us(results[big]['marginal'])} per cluster)") + "\n"
            f"- peak RSS grows about {rss_slope:.1f} MiB per 1,000 clusters\n\n"
            f"Of `evaluate_export`'s {us(min(inproc_api[largest]) / largest)} per cluster at {N(largest)}, "
            f"reading each cluster's shape (`dbx_ai_infra.policies.registry.views_of`, before any rule runs) takes "
            f"{us(min(shapes) / largest)}; the rest, {us((min(inproc_api[largest]) - min(shapes)) / largest)}, is the "
            "rules and the loop that calls them and records their findings (the fastest round of each).")
    return {"results": results, "linear_inproc": r_inproc, "linear_marginal": r_marginal, "rss_per_1000": rss_slope,
            "big": big, "prev": prev}


# --------------------------------------------------------------------------------------------------------------------
# 2b. Workspace audit: clusters and jobs
# --------------------------------------------------------------------------------------------------------------------

def section_audit(s: Settings, rep: Report, tmp: Path) -> dict[str, Any]:
    """`audit --cluster-json` over a mixed export of clusters and jobs, growing to 10,000 clusters and 5,000 jobs."""
    from dbx_ai_infra.policies.registry import evaluate_export
    from dbx_ai_infra.sources.exports import export_items

    rows, results = [], {}
    warm = workload.write_workspace_export(50, 25, tmp / "export-warm.json")
    evaluate_export(export_items(json.loads(warm.read_text()), str(warm)))  # catalog load, regex compile
    for n_clusters, n_jobs in s.audit_sizes:
        path = workload.write_workspace_export(n_clusters, n_jobs, tmp / f"export-{n_clusters}.json")
        cmd = [PY, "-m", "stackplan", "audit", "--cluster-json", str(path), "--json"]
        log(f"audit: {n_clusters} clusters + {n_jobs} jobs")
        out = tmp / f"audit-{n_clusters}.json"
        proc = measure(cmd, max(1, s.growth_rounds // 2), stdout=out, ok=(0, 1))
        checked = json.loads(out.read_text())["checked"]
        doc = json.loads(path.read_text())
        inproc, _, _, found = best_time(lambda doc=doc, path=path: evaluate_export(export_items(doc, str(path))), 3,
                                        budget=0.1)
        objects = n_clusters + n_jobs
        results[objects] = {"wall": proc.best, "inproc": inproc, "rss": proc.rss_mib}
        rows.append([f"{n_clusters:,} + {n_jobs:,}", f"{checked['gpu_clusters']:,} + {checked['gpu_job_clusters']:,}",
                     f"{len(found):,}", secs(proc.best), mib(proc.rss_mib), ms(inproc), us(inproc / objects)])
    sizes = sorted(results)
    big, prev = sizes[-1], sizes[-2]
    ratio = (results[big]["inproc"] / big) / (results[prev]["inproc"] / prev)
    verdict = "linear" if 1 / LINEAR_WITHIN <= ratio <= LINEAR_WITHIN else "NOT linear"
    rep.add("## 2b. Workspace audit: clusters and jobs\n\n"
            "`python -m stackplan audit --cluster-json EXPORT --json` over one file holding `{\"clusters\": [...], "
            "\"jobs\": [...]}` (each job runs one generated cluster definition as its job cluster), and "
            "`evaluate_export(export_items(...))` in-process (the fastest of at least 3 runs, after a warm-up).\n\n"
            + table(["clusters + jobs", "GPU clusters + GPU job clusters", "findings", "process wall", "peak RSS",
                     "in-process", "per object"], rows, align="lrrrrrr")
            + f"\n\nLinearity, in-process time per object at {big:,} / at {prev:,} objects: {ratio:.2f} -> {verdict} "
              f"(within {LINEAR_WITHIN}x).")
    return {"results": results, "linear": ratio, "big": big}


# --------------------------------------------------------------------------------------------------------------------
# 2c. Advise: a month of per-minute GPU telemetry
# --------------------------------------------------------------------------------------------------------------------

ADVISE_NODES = 60  #: GPU nodes of the month (the training cluster: 1 driver + 59 workers of p4d.24xlarge, 8 GPUs)
#: Issue 53, item 3: the analysis within 3x one DuckDB scan of the same files, and under 400 MiB at its peak.
ADVISE_SCAN_GOAL = 3.0
ADVISE_RSS_GOAL_MIB = 400

_SCAN_CHILD = """
import duckdb, json, sys, time, resource
def cpu():  # user + system seconds of this process, DuckDB's threads included
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")  # its bar would print to stdout
out = {}
# every column of every export file, each file once, one light aggregate per column that must read its values
# (count alone is answered from the Parquet metadata): the least any analysis of the files must do
def light(name, kind):
    if kind == "BOOLEAN":
        return f"bool_or({name})"
    if kind.startswith(("DECIMAL", "DOUBLE", "FLOAT", "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT")):
        return f"sum({name})"
    return f"max({name})"
for path in sys.argv[1:]:
    described = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()
    aggregates = ", ".join(light(r[0], str(r[1])) for r in described)
    start, start_cpu = time.perf_counter(), cpu()
    row = con.execute(f"SELECT count(*), {aggregates} FROM read_parquet(?)", [path]).fetchone()
    out[path] = {"rows": row[0], "wall": time.perf_counter() - start, "cpu": cpu() - start_cpu}
print(json.dumps({"files": out, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_ANALYSIS_CHILD = """
import json, sys, time, resource
from dbx_ai_infra.dbxtypes.advise_thresholds import advise_settings
from dbx_ai_infra.engine.pipeline import build_plan
from dbx_ai_infra.advise.analysis import run_local
from dbx_ai_infra.advise.targets import target_rows, targets_of
plan = build_plan(sys.argv[1], with_policies=False, with_cost=True)
t = advise_settings({}, 1000.0)
rows = target_rows(targets_of(plan, 200), plan.stack)
import duckdb  # imported before the timer, as the scan imports it before its own (issue 53, item 3)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
start, start_cpu = time.perf_counter(), cpu()
a = run_local(sys.argv[2], rows, t)
wall, used = time.perf_counter() - start, cpu() - start_cpu
print(json.dumps({"wall": wall, "cpu": used, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "findings": {k: len(v) for k, v in a.rows.items() if v}}))
"""


_SPARK_CHILD = _ANALYSIS_CHILD.replace(
    "from dbx_ai_infra.advise.analysis import run_local", "from dbx_ai_infra.advise.analysis import run_spark\n"
    "from dbx_ai_infra.advise.engines import SparkOptions").replace(
    "a = run_local(sys.argv[2], rows, t)",
    "a = run_spark(sys.argv[2], rows, t, SparkOptions('local[2]'))")


def _child_json(code: str, *args: str) -> dict[str, Any]:
    """Run ``code`` in a child; the JSON object it prints last, with ``rss`` replaced by the child's own peak RSS as
    GNU time measures it (the child's getrusage would include this process's high-water mark)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        run = run_child([PY, "-c", code, *args], stdout=Path(out.name))
        data = dict(json.loads(Path(out.name).read_text().strip().splitlines()[-1]))
    if GNU_TIME:
        data["rss"] = run.rss_mib
    return data


def section_advise(s: Settings, rep: Report, tmp: Path) -> dict[str, Any]:
    """`advise` over Parquet exports: a month of 60 eight-GPU nodes (about 20 million gpu_timeline rows), against
    one DuckDB scan of the same files in the same run; and how the time grows with rows."""
    stack = tmp / "Pulumi.benchgpu.yaml"
    text = (REPO / "stacks" / "Pulumi.prod.yaml").read_text()
    stack.write_text(text.replace("    num_workers: 2\n", f"    num_workers: {ADVISE_NODES - 1}\n", 1))
    days_list = s.advise_days
    rows_out, results = [], {}
    for days in days_list:
        usage = tmp / f"advise-{days:g}"
        log(f"advise: generating {days:g} days of telemetry for {ADVISE_NODES} nodes")
        # in a child: this process stays small, so the children measured after it do not inherit its peak RSS
        # (Linux keeps the larger of the forked and the exec'd high-water marks in ru_maxrss)
        generated = run_child([PY, "-m", "stackplan", "sample-usage", "--stack", str(stack), "--out", str(usage),
                               "--days", f"{days:g}", "--file-format", "parquet", "--full-window",
                               "--only", "benchgpu-training", "--only", "benchgpu-inference",
                               *[a for p in _BENCH_PLANTS for a in ("--plant", p)]]).wall
        gpu_file = str(usage / "gpu_timeline.parquet")
        files = [gpu_file] + sorted(str(p) for p in usage.glob("*.parquet") if p.name != "gpu_timeline.parquet")
        scans, analyses = [], []
        for _ in range(s.advise_rounds):  # a round: the scan, then the analysis (see Settings.advise_rounds)
            scans.append(_child_json(_SCAN_CHILD, *files))
            analyses.append(_child_json(_ANALYSIS_CHILD, str(stack), str(usage)))
        scan_gpu = min(r["files"][gpu_file]["wall"] for r in scans)
        scan_all = min(sum(f["wall"] for f in r["files"].values()) for r in scans)
        scan_cpu = min(sum(f["cpu"] for f in r["files"].values()) for r in scans)
        scan = {"rows": scans[0]["files"][gpu_file]["rows"], "wall": scan_gpu}
        analysis = min(analyses, key=lambda r: r["wall"])
        proc = measure([PY, "-m", "stackplan", "advise", "--stack", str(stack), "--usage", str(usage),
                        "--sla-p99-ms", "1000", "--json"], 1, stdout=tmp / "advise-out.json")
        found = sorted(f["id"] for f in json.loads((tmp / "advise-out.json").read_text())["findings"])
        n = int(scan["rows"])
        results[n] = {"scan": scan["wall"], "scan_all": scan_all, "analysis": analysis["wall"],
                      "scan_cpu": scan_cpu, "analysis_cpu": analysis["cpu"],
                      "analysis_rss": analysis["rss"], "process": proc.best, "process_rss": proc.rss_mib,
                      "days": days, "found": found}
        rows_out.append([f"{days:g}", f"{n:,}", secs(generated), secs(scan["wall"]), secs(scan_all),
                         secs(analysis["wall"]), f"{analysis['wall'] / scan_all:.2f}x",
                         f"{analysis['wall'] / scan['wall']:.2f}x",
                         f"{analysis['cpu'] / scan_cpu:.2f}x ({analysis['cpu']:.2f} / {scan_cpu:.2f} s)",
                         mib(analysis["rss"]), secs(proc.best),
                         mib(proc.rss_mib)])
    sizes = sorted(results)
    big, small = sizes[-1], sizes[0]
    # the same analysis on Spark (--engine spark, a local session of 2 cores), at the largest size: once (the JVM
    # and its session start are part of it; the JVM's memory is its own process, not in the peak RSS shown)
    if s.advise_spark:
        log("advise: the largest size on Spark (local[2])")
        spark = _child_json(_SPARK_CHILD, str(stack), str(tmp / f"advise-{results[big]['days']:g}"))
        results[big]["spark"] = spark["wall"]
        same = spark["findings"] == analysis["findings"]
        on_spark = (f"Apache Spark 4.0 in a local session of 2 cores (`--engine spark`, Spark reading the same "
                    f"Parquet files, the JVM's start included) {secs(spark['wall'])}; the same findings: "
                    f"{'yes' if same else 'NO'}")
    else:
        on_spark = "Apache Spark not run (--tiny)"
    growth = (results[big]["analysis"] / big) / (results[small]["analysis"] / small)
    marginal = (results[big]["analysis"] - results[small]["analysis"]) / (big - small)
    r = results[big]
    rep.add("## 2c. Advise over a month of GPU telemetry\n\n"
            f"`python -m stackplan sample-usage` writes Parquet exports for {ADVISE_NODES} nodes of p4d.24xlarge "
            "(8 GPUs each, one "
            "row per GPU and minute) plus an inference cluster, with two planted problems. **scan**: one DuckDB query "
            f"per export file reading every column once, in a fresh process (the best of {s.advise_rounds}): of "
            "`gpu_timeline.parquet` "
            "alone, and of all the files the analysis reads (gpu_timeline, node_timeline, requests, usage, ...). "
            "**analysis**: "
            f"`run_local` (every SQL statement of the advise, views over the files, no copy), the best of "
            f"{s.advise_rounds}, with that process's peak RSS; each round runs the scan and then the analysis, so "
            "that a slow spell of the machine falls on both; DuckDB is imported before either timer starts. **CPU**: "
            "user + system seconds of "
            "the analysis against those of the scan of all files (DuckDB's threads included): steadier than wall "
            "times on a shared machine, where the processes wait for a core. **process**: the whole "
            "`python -m stackplan advise --json` (the Pulumi program under mocks, the analysis, and the cost model on "
            "each edited stack).\n\n"
            + table(["days", "gpu_timeline rows", "generate", "scan gpu_timeline", "scan all files", "analysis",
                     "analysis / scan all", "analysis / scan gpu_timeline", "analysis / scan all (CPU)",
                     "analysis peak RSS", "process", "process peak RSS"], rows_out, align="rrrrrrrrrrrr")
            + f"\n\nFindings at {big:,} rows: {', '.join(r['found'])}. Growth: the analysis takes "
              f"{marginal * 1e9:.0f} ns per added row between {small:,} and {big:,} rows, on top of a fixed part "
              f"(reading the small inputs, the other statements); time per row at {big:,} / at {small:,} rows: "
              f"{growth:.2f} (1.00 = proportional). The process adds a fixed cost that does not grow with rows: the "
              "Pulumi program under mocks and the cost model on each edited stack (one per priced proposal).\n\n"
              f"**Engines** at {big:,} rows: DuckDB (`--engine duckdb`, the analysis above) {secs(r['analysis'])}; "
              f"{on_spark}. "
              "On one machine DuckDB is the faster engine; Spark is for telemetry that outgrows one machine (a "
              "cluster, or Spark Connect), where the same SQL runs unchanged.")
    return {"results": results, "big": big, "growth": growth, "marginal": marginal}


# --------------------------------------------------------------------------------------------------------------------
# 3. Peer: checkov
# --------------------------------------------------------------------------------------------------------------------

def checkov_bin() -> Path:
    """bench/.venv-checkov/bin/checkov, created or refreshed from bench/requirements-checkov.txt when needed."""
    stamp = CHECKOV_VENV / ".installed"
    want = CHECKOV_REQUIREMENTS.read_text()
    exe = CHECKOV_VENV / "bin" / "checkov"
    if exe.exists() and stamp.exists() and stamp.read_text() == want:
        return exe
    log("peer: creating bench/.venv-checkov (checkov's pins conflict with pulumi's; this takes about a minute)")
    base = getattr(sys, "_base_executable", None) or shutil.which("python3") or "python3"
    if not CHECKOV_VENV.exists():
        subprocess.run([base, "-m", "venv", str(CHECKOV_VENV)], check=True)
    pip_log = CHECKOV_VENV / "pip-install.log"
    with open(pip_log, "wb") as fh:
        done = subprocess.run([str(CHECKOV_VENV / "bin" / "python"), "-m", "pip", "install", "--quiet",
                               "--disable-pip-version-check", "-r", str(CHECKOV_REQUIREMENTS)],
                              stdout=fh, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = pip_log.read_text(errors="replace").splitlines()[-5:]
        raise OSError(f"pip install -r {CHECKOV_REQUIREMENTS.relative_to(REPO)} failed: " + " / ".join(tail))
    stamp.write_text(want)
    return exe


def checkov_version(exe: Path) -> str:
    return subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout.strip()


def _checkov_pairs(path: Path, clusters: list[dict[str, Any]]) -> tuple[set[tuple[str, str]], dict[str, Any]]:
    data = json.loads(path.read_text() or "{}")
    reports = data if isinstance(data, list) else [data]
    by_tf = {workload.tf_name(i): c["cluster_name"] for i, c in enumerate(clusters)}
    rule_of = {v: k for k, v in workload.CHECKOV_IDS.items()}
    pairs, summary = set(), {"passed": 0, "failed": 0, "parsing_errors": 0, "resource_count": 0}
    for report in reports:
        for k in summary:
            summary[k] += int((report.get("summary") or {}).get(k, 0))
        for f in (report.get("results") or {}).get("failed_checks", []):
            resource = f.get("resource", "")
            name = resource.split(".", 1)[1] if "." in resource else resource
            pairs.add((by_tf.get(name, name), rule_of.get(f.get("check_id"), f.get("check_id"))))
    return pairs, summary


def _n_rules() -> int:
    from dbx_ai_infra.policies.registry import ALL_RULES

    return len(ALL_RULES)


N_RULES = _n_rules()


#: How many times ours runs in each round of the peer section, checkov once: a half-second process is far more
#: exposed than checkov's half-minute one to this shared VM's speed of the moment (ours read 0.43, 0.59 and 0.76 s in
#: the three rounds of one record, where checkov's spread was 16%), so its median is taken over more runs.
PEER_OURS_REPEATS = 3


def section_peer(s: Settings, rep: Report, tmp: Path) -> dict[str, Any]:
    try:
        exe = checkov_bin()
    except (OSError, subprocess.CalledProcessError) as exc:
        rep.add(f"## 3. Peer: checkov\n\ncheckov not available: {exc}")
        rep.note(f"checkov not available: {exc}")
        return {}
    version = checkov_version(exe)
    from dbx_ai_infra.policies.registry import ALL_RULES

    same_rules = tmp / "same-rules.json"
    same_rules.write_text(json.dumps({r.name: "disabled" for r in ALL_RULES if r.name not in workload.PEER_RULES}))
    nodes = tmp / "node-types.json"
    rows, findings, out = [], [], {}
    # warm-up: byte-compile checkov's venv and the checks, fill the file cache
    warm = workload.make_clusters(10)
    nodes.write_text(json.dumps(workload.node_type_table(warm)))
    ckv_cmd = lambda d: [str(exe), "-d", str(d), "--framework", "terraform", "--external-checks-dir",  # noqa: E731
                         str(CHECKOV_CHECKS), "--skip-download", "--compact", "--quiet", "-o", "json"]
    # checkov gives up a file whose HCL parse takes over HCL_PARSE_TIMEOUT_SEC (10 s by default, checkov's
    # env_vars_config) and reports it as a parsing error: on a loaded machine it skipped 7 of 10 files (375 of 1,250
    # violations found), a run that did less work than ours; 0 turns the timeout off, so checkov parses every file
    env = {"BENCH_NODE_TYPES": str(nodes), "LOG_LEVEL": "WARNING", "HCL_PARSE_TIMEOUT_SEC": "0"}
    run_child(ckv_cmd(workload.write_terraform(warm, tmp / "tf-warm")), env=env, ok=(0, 1))
    for n in s.peer_sizes:
        clusters = workload.make_clusters(n)
        expected = workload.expected_pairs(clusters)
        nodes.write_text(json.dumps(workload.node_type_table(clusters)))
        path = workload.write_cluster_json(clusters, tmp / f"peer-{n}.json")
        tf = workload.write_terraform(clusters, tmp / f"tf-{n}")
        tf_files = len(list(tf.glob("*.tf")))
        ours_cmd = [PY, "-m", "stackplan", "audit", "--cluster-json", str(path), "--json"]
        ours_out, same_out = tmp / f"ours-{n}.json", tmp / f"same-{n}.json"
        same_cmd = ours_cmd + ["--policy-config", str(same_rules)]
        run_child(ours_cmd, stdout=ours_out, ok=(0, 1))
        run_child(same_cmd, stdout=same_out, ok=(0, 1))
        ckv_out = tmp / f"checkov-{n}.json"
        m = interleaved({"ours": (ours_cmd, {"ok": (0, 1)}), "same": (same_cmd, {"ok": (0, 1)}),
                         "checkov": (ckv_cmd(tf), {"env": env, "ok": (0, 1), "stdout": ckv_out})},
                        s.peer_rounds, f"peer, {n} clusters ({tf_files - 1} .tf file(s) + main.tf): ",
                        repeats={"ours": PEER_OURS_REPEATS, "same": PEER_OURS_REPEATS})
        ours, same, ckv_runs = m["ours"], m["same"], m["checkov"]
        ours_pairs = _violation_pairs(json.loads(ours_out.read_text())["violations"], workload.PEER_RULES)
        all_ours = _violation_pairs(json.loads(ours_out.read_text())["violations"])
        same_pairs = _violation_pairs(json.loads(same_out.read_text())["violations"])
        ckv_pairs, summary = _checkov_pairs(ckv_out, clusters)
        fired = summary["failed"]
        honest = fired > 0 and ckv_pairs == expected and ours_pairs == expected and same_pairs == expected
        out[n] = {"ours": ours.wall, "same": same.wall, "checkov": ckv_runs.wall, "ours_rss": ours.rss_mib,
                  "checkov_rss": ckv_runs.rss_mib, "honest": honest, "fired": fired}
        for label, m in ((f"ours, all {N_RULES} rules", ours), ("ours, the same 8 rules", same),
                         ("checkov, 8 custom checks", ckv_runs)):
            rows.append([f"{n:,}", label, secs(m.wall), m.spread, mib(m.rss_mib), f"{m.wall / ckv_runs.wall:.2f}",
                         f"{m.rss_mib / ckv_runs.rss_mib:.2f}"])
        findings.append([f"{n:,}", f"{len(expected):,}", f"{len(ours_pairs & expected):,}",
                         f"{len(all_ours - expected):,}", f"{len(same_pairs & expected):,}",
                         f"{len(ckv_pairs & expected):,}", f"{len(ckv_pairs - expected):,}",
                         f"{summary['passed']:,} / {summary['failed']:,}", f"{summary['parsing_errors']}",
                         "yes" if honest else "NO"])
        if not honest:
            rep.note(f"peer at {n}: findings differ (expected {len(expected)}, checkov {len(ckv_pairs)}, "
                     f"ours {len(ours_pairs)}); the comparison is not like for like")
    rep.add("## 3. Peer: checkov on the same clusters as Terraform\n\n"
            f"The same generated clusters, written as Terraform `databricks_cluster` resources (HCL, 500 a file) and "
            f"scanned by checkov {version or '(version unknown)'} (own virtualenv `bench/.venv-checkov`) with the 8 "
            f"custom Python checks "
            "of `bench/checkov_checks/` (one per rule of ours: inference on-demand base, training fixed size, worker "
            "bounds, cloud attributes, runtime flavour, node type with pool, required tags, auto-termination):\n\n"
            "    checkov -d DIR --framework terraform --external-checks-dir bench/checkov_checks --skip-download "
            "--compact --quiet -o json\n\n"
            f"against `python -m stackplan audit --cluster-json FILE --json` (all {N_RULES} rules, and with a policy "
            f"config that disables the {N_RULES - len(set(workload.PEER_RULES))} rules checkov has no twin for). "
            "Whole processes, median of "
            f"{s.peer_rounds} interleaved round(s) after a warm-up, each of ours run {PEER_OURS_REPEATS} times a round "
            f"(the median of {s.peer_rounds * PEER_OURS_REPEATS} runs: a half-second process is more exposed to the "
            "machine's speed of the moment than checkov's); `x checkov` = ours / checkov (below 1: ours is "
            f"faster or "
            "smaller). The checks get node-type facts (cloud, GPU or CPU) from gpucatalog through a JSON file "
            "(`BENCH_NODE_TYPES`), so both sides decide with the same data. checkov runs with "
            "`HCL_PARSE_TIMEOUT_SEC=0`: by default it gives up a file whose parse takes over 10 s and reports a "
            "parsing error, which on a loaded machine skipped most of the files.\n\n"
            + table(["clusters", "engine", "wall (median)", "range (s)", "peak RSS", "wall x checkov",
                     "RSS x checkov"], rows, align="llrrrrr")
            + "\n\nDo the checks fire? (cluster, rule) pairs found against the pairs the generator planted; "
              "`extra` = findings nobody planted:\n\n"
            + table(["clusters", "planted", "ours found", "ours extra (all rules)", "ours, 8 rules, found",
                     "checkov found", "checkov extra", "checkov passed / failed", "parse errors", "like for like"],
                    findings))
    return {"sizes": out, "version": version}


# --------------------------------------------------------------------------------------------------------------------
# 4. Terraform code: check --terraform on many files, cold and with the parse cache
# --------------------------------------------------------------------------------------------------------------------

#: One file of the Terraform tree (issue 51, item 8): its variables, its locals and one cluster; every fourth one
#: without auto-termination, so that both runs have findings to compare.
TF_FILE = '''variable "workers_{i}" {{
  type    = number
  default = {workers}
}}

variable "env_{i}" {{
  type    = string
  default = "prod"
}}

locals {{
  name_{i} = "team-{i}-${{var.env_{i}}}"
  tags_{i} = {{
    workload    = "etl"
    cost_center = "cc-{i}"
  }}
}}

resource "databricks_cluster" "c{i}" {{
  cluster_name  = local.name_{i}
  spark_version = "15.4.x-scala2.12"
  node_type_id  = "i3.xlarge"
  num_workers   = var.workers_{i}
{autotermination}  custom_tags   = local.tags_{i}
  aws_attributes {{
    availability    = "SPOT_WITH_FALLBACK"
    first_on_demand = 1
  }}
}}
'''


def write_terraform_tree(directory: Path, n: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        termination = "" if i % 4 == 3 else "  autotermination_minutes = 30\n"
        (directory / f"c{i:05d}.tf").write_text(TF_FILE.format(i=i, workers=1 + i % 8, autotermination=termination))
    return directory


def section_terraform(s: Settings, rep: Report, tmp: Path) -> dict[str, Any]:
    """``check --terraform`` over a tree of N files: without the cache and on one core (how the reader ran before
    issue 51, item 8), cold (an empty cache: every file parsed, on all cores, and kept) and warm (the same tree
    again: every parse read from the cache), against the floor, interleaved by round."""
    n = s.terraform_files
    tree = write_terraform_tree(tmp / "terraform-tree", n)
    cmd = [PY, "-m", "stackplan", "check", "--terraform", str(tree), "--json"]
    caches = tmp / "terraform-caches"
    log(f"terraform: {n:,} files, warm-up")
    run_child([PY, "-c", "import pulumi_databricks"])
    labels = ("floor", "serial", "cold", "warm")
    m: dict[str, Measured] = {label: Measured() for label in labels}
    outputs: dict[str, Any] = {}
    for r in range(s.terraform_rounds):
        log(f"terraform: round {r + 1}/{s.terraform_rounds}")
        cache = caches / f"round-{r}"
        m["floor"].runs.append(run_child([PY, "-c", "import pulumi_databricks"]))
        for label, env in (("serial", {"STACKPLAN_NO_CACHE": "1", "STACKPLAN_PARSE_WORKERS": "1",
                                       "STACKPLAN_NO_FAST_HCL": "1"}),
                           ("cold", {"STACKPLAN_CACHE_DIR": str(cache)}),
                           ("warm", {"STACKPLAN_CACHE_DIR": str(cache)})):
            out = tmp / f"terraform-{label}.json"
            m[label].runs.append(run_child(cmd, stdout=out, env=env, ok=(0, 1)))
            outputs[label] = json.loads(out.read_text())
        shutil.rmtree(cache, ignore_errors=True)
    floor = m["floor"].wall
    same = outputs["cold"] == outputs["warm"] == outputs["serial"]
    clusters = outputs["cold"]["checked"]["clusters"]
    findings = len(outputs["cold"]["violations"])
    what = {"floor": "`python -c 'import pulumi_databricks'` (the floor)",
            "serial": "no cache, python-hcl2 alone in one process (as before issue 51, item 8)",
            "cold": "cold: an empty cache; plain files read by the fast reader, the rest by python-hcl2 on all "
                    "cores; kept",
            "warm": "warm: the same tree again, every parse from the cache"}
    rows = [[what[label], secs(m[label].wall), m[label].spread, mib(m[label].rss_mib), f"{m[label].wall / floor:.2f}x"]
            for label in labels]
    rep.add(f"## 4. Terraform code: `check --terraform` on {n:,} files\n\n"
            f"Each file holds two variables, two locals and one `databricks_cluster` (every fourth without "
            f"auto-termination); `python -m stackplan check --terraform DIR --json` as a whole process, "
            f"{s.terraform_rounds} round(s) after a warm-up (each round: the floor, then the three runs in this "
            f"order, with a new empty cache); `wall` is the median. The parse cache "
            f"(`dbx_ai_infra/sources/tfcache.py`) "
            f"is keyed by each file's bytes; plain HCL is read by `dbx_ai_infra/sources/hclfast.py`, the rest by "
            f"python-hcl2; `STACKPLAN_NO_CACHE=1 STACKPLAN_PARSE_WORKERS=1 STACKPLAN_NO_FAST_HCL=1` is the reader "
            f"as it was before issue 51, item 8.\n\n"
            + table(["run", "wall (median)", "range (s)", "peak RSS", "vs floor"], rows)
            + f"\n\n{clusters:,} clusters, {findings:,} findings; the same findings in all three runs: "
              f"{'yes' if same else '**NO**'}.")
    if not same:
        rep.note("terraform: the findings of the serial, cold and warm runs differ")
    return {"n": n, "floor": floor, "cold": m["cold"].wall / floor, "warm": m["warm"].wall / floor,
            "serial": m["serial"].wall / floor, "same": same}


# --------------------------------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------------------------------

HEADER = """# Benchmarks

Printed figures, not timed tests: nothing here fails a build. Reproduce with `make bench` (installs
`requirements-bench.txt`, then runs `.venv/bin/python bench/run.py`); `bench/run.py --quick` runs smaller sizes with
fewer repeats and `--only floor|growth|peer` one section (both write `bench/RESULTS.partial.md`). This file is
generated by `make bench-record` (`bench/run.py --record`); edit the script, not the file.

What the tables measure:

1. **Floor and preview processes.** The floor is a fresh Python process that only imports `pulumi_databricks`
   (the provider SDK the program needs). Each shipped stack's `python -m stackplan preview --stack S` is timed as a
   whole process and shown as a ratio to that floor. Then `bench/phases.py` splits one preview per stack into
   phases (imports, program run under Pulumi mocks, policy evaluation, pricing, rendering), in a fresh process.
2. **Growth.** 10 to 5,000 generated Clusters API clusters through `audit --cluster-json` (wall time and peak RSS of
   the process) and through `evaluate_plan` in-process (the same clusters as Pulumi `Cluster` resources), with the
   time per cluster and a linearity check.
   **2b** audits a mixed workspace export of up to 10,000 clusters and 5,000 jobs; **2c** runs `advise` over a
   month of GPU telemetry in Parquet (60 eight-GPU nodes, about 21 million `gpu_timeline` rows) against one DuckDB
   scan of the same files, and prints how the time grows with rows.
3. **Peer.** The same clusters as Terraform, scanned by checkov with 8 equivalent custom checks, against our
   `audit --cluster-json`; the findings of both are compared with what the generator planted, so the comparison
   only counts when both find the same violations.
4. **Terraform code.** `check --terraform` over a tree of 5,000 `.tf` files (each with its variables, locals and one
   cluster): as the reader ran before its parse cache (one process, no cache), cold (an empty cache: parsed on all
   cores, and kept) and warm (the same tree again), as ratios to the floor of the same rounds.

How: every process is a child of `bench/run.py`, timed with `time.perf_counter`; its peak RSS is `ru_maxrss` of
that child alone (`os.wait4`), so runs do not contaminate each other. checkov lives in `bench/.venv-checkov`
(created by `bench/run.py` on first use from `bench/requirements-checkov.txt`), because checkov 3.3.30 pins
`packaging<24` and pulumi 3.272.0 needs `packaging>=26`: they cannot share `.venv`.
"""


#: The sections, in the order a full run makes them: each measures, adds its part to the report and returns its
#: figures for the summary (under its name); a temporary directory is theirs to write in.
SECTIONS: dict[str, Callable[[Settings, Report, Path], dict[str, Any]]] = {
    "floor": lambda s, rep, _tmp: section_floor(s, rep), "team": section_team, "growth": section_growth,
    "audit": section_audit, "advise": section_advise, "peer": section_peer, "terraform": section_terraform,
}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    ap.add_argument("--tiny", action="store_true", help="every section at the least size (tests/test_bench.py)")
    ap.add_argument("--only", choices=tuple(SECTIONS), help="run one section")
    ap.add_argument("--out", type=Path, help="where to write the Markdown results (default bench/RESULTS.latest.md "
                                             "for a full run, else bench/RESULTS.partial.md)")
    ap.add_argument("--record", action="store_true",
                    help="a full run replaces the committed bench/RESULTS.md (make bench-record)")
    args = ap.parse_args(argv)
    s = TINY if args.tiny else QUICK if args.quick else FULL
    partial = s.quick or args.only is not None
    if args.record and partial:
        ap.error("--record takes a full run: drop --quick and --only")
    default = "RESULTS.partial.md" if partial else ("RESULTS.md" if args.record else "RESULTS.latest.md")
    out_path = args.out or (BENCH / default)
    sections = [args.only] if args.only else list(SECTIONS)

    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    info = machine()
    load_before = loadavg()
    command = " ".join([os.path.relpath(PY, REPO)] + [os.path.relpath(sys.argv[0], REPO)] + list(sys.argv[1:]))
    rep = Report()
    rep.add("## Machine and run\n\n" + table(["", ""], [
        ["date (UTC)", started.strftime("%Y-%m-%d %H:%M")],
        ["command", f"`{command}`" + (" (quick)" if s.quick else "")],
        ["CPU", info["cpu"]], ["cores", info["cores"]], ["memory", info["memory"]], ["Python", info["python"]],
        ["OS", info["os"]], ["commit", info["commit"]],
        ["packages", ", ".join(f"{k} {v}" for k, v in versions().items())],
    ], align="ll"))
    summary: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="dbx-bench-") as tmpdir:
        tmp = Path(tmpdir)
        for name in sections:
            summary[name] = SECTIONS[name](s, rep, tmp)
    elapsed = time.perf_counter() - t0
    rep.parts[0] += (f"\n\nLoad average (1, 5, 15 min) before the run: {load_before}; after: {loadavg()}. "
                     "The machine is shared: other work running at the same time shows up as a load above 0 and "
                     "as a wide `range`.")
    log(f"load average before: {load_before}; after: {loadavg()}")
    rep.add(headline(summary, elapsed, rep.notes))
    out_path.write_text(HEADER + "\n" + "\n\n".join(rep.parts) + "\n" + kept_history(out_path), encoding="utf-8")
    log(f"wrote {os.path.relpath(out_path, REPO)} ({elapsed:.0f} s)")
    return 0


def kept_history(path: Path) -> str:
    """The hand-written ``## History`` section of a results file (dated measurements, written by people), kept as it
    is when the file is recorded again; "" when it has none."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    at = text.find("\n## History\n")
    return text[at:] if at >= 0 else ""


#: Issue 53, item 5: `preview --stack prod` at 0.45x the floor (0.50x before); checking 5,000 exported clusters 50x
#: faster than checkov on the same 8 rules (issue 23's goals were 0.75x and 30x).
PREVIEW_GOAL = 0.45
CHECKOV_GOAL = 50.0


def _largest(part: dict[str, Any]) -> dict[str, Any]:
    """A size-sweep part's results at its largest size."""
    return part["results"][part["big"]]


def start_up_goals(summary: dict[str, Any]) -> list[list[str]]:
    """The start-up and speed goals (issues 23, 51 and 53) against this run's figures, where the sections that
    measure them ran."""
    rows: list[list[str]] = []

    def row(goal: str, measured: str, met: bool | None) -> None:
        rows.append([goal, measured, "not judged" if met is None else "yes" if met else "**NO**"])

    floor = summary.get("floor")
    if floor:
        prod = floor["preview_ratios"]["prod"]
        row(f"`preview --stack prod` <= {PREVIEW_GOAL:g}x the floor (issue 53)", f"{prod:.2f}x", prod <= PREVIEW_GOAL)
        row(f"`check` of {TEN_STACKS} stack files in one process, SARIF, <= 1.4x", f"{floor['ten_check_ratio']:.2f}x",
            floor["ten_check_ratio"] <= 1.4)
    growth = summary.get("growth")
    if growth and 5000 in growth["results"]:
        r = growth["results"][5000]
        if floor:
            ratio = r["wall"] / floor["floor"]
            row("`audit --cluster-json` of 5,000 clusters <= 0.4x", f"{ratio:.2f}x", ratio <= 0.4)
        row("60 us or less per extra cluster", us(r["marginal"]), r["marginal"] <= 60e-6)
        row("memory added over a 10-cluster run <= 3x the JSON size", f"{r['rss_over_json']:.1f}x",
            r["rss_over_json"] <= 3)
    terraform = summary.get("terraform")
    if terraform:
        n = f"{terraform['n']:,}"
        row(f"`check --terraform` of {n} files, cold (empty cache) <= 3x the floor", f"{terraform['cold']:.2f}x",
            terraform["cold"] <= 3)
        row(f"`check --terraform` of {n} files, unchanged second run <= 1.5x", f"{terraform['warm']:.2f}x",
            terraform["warm"] <= 1.5)
        row("the same findings cold, warm and without the cache", "yes" if terraform["same"] else "no",
            terraform["same"])
    advise = summary.get("advise")
    if advise:
        r = _largest(advise)
        ratio = r["analysis"] / r["scan_all"]
        row(f"`advise`'s analysis of {advise['big']:,} gpu_timeline rows <= {ADVISE_SCAN_GOAL:g}x one DuckDB scan of "
            "the files (issue 53)", f"{ratio:.2f}x (CPU time {r['analysis_cpu'] / r['scan_cpu']:.2f}x)",
            ratio <= ADVISE_SCAN_GOAL)
        row(f"its peak memory <= {ADVISE_RSS_GOAL_MIB} MiB (issue 53)", mib(r["analysis_rss"]),
            r["analysis_rss"] <= ADVISE_RSS_GOAL_MIB)
    peer = (summary.get("peer") or {}).get("sizes", {})
    if 5000 in peer:
        times = peer[5000]["checkov"] / peer[5000]["same"]
        # a ratio counts only when both found the planted violations and nothing else: a checkov that skipped files
        # (parse errors) or missed findings did less work than ours
        honest = peer[5000]["honest"]
        row(f"against checkov, the same 8 rules, 5,000 clusters: >= {CHECKOV_GOAL:g}x faster (issue 53)",
            f"{times:.1f}x" + ("" if honest else " (findings differ: not like for like)"),
            times >= CHECKOV_GOAL if honest else None)
    return rows


def _floor_headline(summary: dict[str, Any]) -> list[str]:
    f = summary["floor"]
    ratios = ", ".join(f"{k} {v:.2f}x" for k, v in f["preview_ratios"].items())
    verdict = "within" if max(f["all_ratio"], f["all_check_ratio"]) <= 1.5 else "OVER"
    return [f"- Floor (`import pulumi_databricks`): {secs(f['floor'])}; preview / floor: {ratios}.",
            f"- All {len(STACKS)} stacks in one process: `preview --all` {f['all_ratio']:.2f}x the floor, "
            f"`check --all --format sarif` {f['all_check_ratio']:.2f}x ({verdict} the 1.5x goal)."]


def _growth_headline(summary: dict[str, Any]) -> list[str]:
    g = summary["growth"]
    r = _largest(g)
    return [f"- Growth: {g['big']:,} clusters take {secs(r['wall'])} as a `check` process "
            f"({us(r['marginal'])} marginal per cluster, peak {mib(r['rss'])}) and {ms(r['inproc'])} "
            f"in-process ({us(r['inproc'] / g['big'])} per cluster); per-cluster ratio {g['big']:,}/"
            f"{g['prev']:,}: {g['linear_inproc']:.2f} in-process"
            + (f", {g['linear_marginal']:.2f} process marginal" if g["linear_marginal"] else "") + "."]


def _export_floor_headline(summary: dict[str, Any]) -> list[str]:
    g, floor = summary["growth"], summary["floor"]["floor"]
    if not any(r["wall"] < floor for r in g["results"].values()):
        return ["- `audit --cluster-json` is above the floor at every size."]
    n0 = min(g["results"])
    return [f"- `audit --cluster-json` does not import pulumi_databricks: its process at {n0:,} clusters takes "
            f"{secs(g['results'][n0]['wall'])}, {g['results'][n0]['wall'] / floor:.2f}x the floor, and "
            f"stays below the floor up to {max(n for n, r in g['results'].items() if r['wall'] < floor):,} "
            "clusters."]


def _audit_headline(summary: dict[str, Any]) -> list[str]:
    a = summary["audit"]
    r = _largest(a)
    linear = "linear" if 1 / LINEAR_WITHIN <= a["linear"] <= LINEAR_WITHIN else "NOT linear"
    return [f"- Workspace audit: {a['big']:,} clusters and jobs in {secs(r['wall'])} as a process "
            f"(peak {mib(r['rss'])}), {ms(r['inproc'])} in-process; per-object ratio at the two largest "
            f"sizes {a['linear']:.2f} ({linear})."]


def _advise_headline(summary: dict[str, Any]) -> list[str]:
    a = summary["advise"]
    r = _largest(a)
    within = "within" if r["analysis"] <= ADVISE_SCAN_GOAL * r["scan_all"] else "OVER"
    memory = "under" if r["analysis_rss"] <= ADVISE_RSS_GOAL_MIB else "OVER"
    return [f"- Advise: {a['big']:,} gpu_timeline rows (Parquet) analysed in {secs(r['analysis'])}, "
            f"{r['analysis'] / r['scan_all']:.2f}x one DuckDB scan of the export files "
            f"({secs(r['scan_all'])}; {within} the {ADVISE_SCAN_GOAL:g}x goal), "
            f"{r['analysis'] / r['scan']:.2f}x the scan of gpu_timeline alone ({secs(r['scan'])}), "
            f"{r['analysis_cpu'] / r['scan_cpu']:.2f}x the scan's CPU time, peak "
            f"{mib(r['analysis_rss'])} ({memory} the {ADVISE_RSS_GOAL_MIB} MiB goal); the whole `advise` "
            f"process {secs(r['process'])}, peak {mib(r['process_rss'])}; "
            f"{a['marginal'] * 1e9:.0f} ns per added row."]


def _peer_headline(summary: dict[str, Any]) -> list[str]:
    parts = [f"{n:,} clusters: ours {secs(p['ours'])} vs checkov {secs(p['checkov'])} "
             f"({p['ours'] / p['checkov']:.2f}x time, {p['ours_rss'] / p['checkov_rss']:.2f}x memory"
             f"{'' if p['honest'] else ', findings DIFFER'})" for n, p in summary["peer"]["sizes"].items()]
    return ["- Peer: " + "; ".join(parts) + "."]


def _terraform_headline(summary: dict[str, Any]) -> list[str]:
    t = summary["terraform"]
    return [f"- Terraform code: `check --terraform` of {t['n']:,} files {t['serial']:.2f}x the floor as "
            f"the reader ran before (python-hcl2 alone, one process, no cache), {t['cold']:.2f}x cold (the "
            f"fast reader, python-hcl2 for the rest, cached), {t['warm']:.2f}x warm; the same findings: "
            f"{'yes' if t['same'] else 'NO'}."]


#: The headline's sections, in order: the parts of the summary each reads, and its lines (a section is left out
#: when the run did not measure one of its parts).
HEADLINE_SECTIONS = ((("floor",), _floor_headline), (("growth",), _growth_headline),
                     (("floor", "growth"), _export_floor_headline), (("audit",), _audit_headline),
                     (("advise",), _advise_headline), (("peer",), _peer_headline),
                     (("terraform",), _terraform_headline))


def headline(summary: dict[str, Any], elapsed: float, notes: list[str]) -> str:
    lines = ["## Headline", "", *(line for parts, section in HEADLINE_SECTIONS
                                   if all(summary.get(part) for part in parts) for line in section(summary))]
    lines.append(f"- The whole benchmark run: {elapsed:.0f} s.")
    goals = start_up_goals(summary)
    if goals:
        lines += ["", "Goals (ratios to the floor, or to the peer, of the same run):", "",
                  table(["goal", "measured", "met"], goals, align="lrl")]
    if notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
