"""``preview`` and ``check --stack``: stacks through the pipeline, one report of them all (``cost``, which also reads
Terraform and the bases it compares with, is `dbx_ai_infra.cli.commands.cost`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dbx_ai_infra.cli.commands import common
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.stack_files import available_stacks
from dbx_ai_infra.engine.exits import EXIT_OK, EXIT_VIOLATIONS
from dbx_ai_infra.engine.multi import StackRun, metastore_violations, run_each, worst
from dbx_ai_infra.engine.pipeline import Options, build
from dbx_ai_infra.reports import formats
from dbx_ai_infra.reports.reportdoc import StacksReport


def stacks(args: argparse.Namespace) -> list[str]:
    """The stacks of this run: each ``--stack``, or every stack under ``stacks/`` with ``--all``."""
    if getattr(args, "all", False):
        names = available_stacks()
        if not names:
            raise InputError.single("stacks/", "", "holds no Pulumi.<stack>.yaml file.", "add one, or pass --stack.")
        return names
    return list(dict.fromkeys(args.stack or []))


def several(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "all", False)) or len(set(args.stack or [])) > 1


def plan_run(stack: str, args: argparse.Namespace, config: Any, *, cost: bool) -> StackRun:
    """One stack through the pipeline, as a run of a command: its notes on stderr, exit 1 on a mandatory finding."""
    built = build(stack, Options(config, getattr(args, "prices", None), policies=True, cost=cost,
                                 region=getattr(args, "region", None)))
    for note in built.notes:
        print(f"note: {note}", file=sys.stderr)
    plan = built.plan
    return StackRun(stack, plan.stack_file or stack, plan=plan,
                    exit=EXIT_VIOLATIONS if plan.has_mandatory else EXIT_OK)


def cmd_preview(args: argparse.Namespace) -> int:
    config = common.policy_config(args)
    runs = run_each(stacks(args), lambda s: plan_run(s, args, config, cost=True), what="preview",
                    keep_errors=several(args))
    metastore_violations(runs, config)  # two stacks that would create one catalog, schema or storage root
    report = StacksReport("preview", runs, several(args), config)
    common.emit(args, formats.render(common.fmt(args), report))
    return worst(runs)


def cmd_check(args: argparse.Namespace) -> int:
    """``check`` of stacks (a workspace export or a live read: `dbx_ai_infra.cli.commands.workspace`)."""
    config = common.policy_config(args)
    fmt = common.fmt(args)
    common.check_baseline_out(args)
    pages = fmt in ("markdown", "html")  # a page shows what the stack costs beside its findings
    runs = run_each(stacks(args), lambda s: plan_run(s, args, config, cost=pages), what="check",
                    keep_errors=several(args))
    metastore_violations(runs, config)  # two stacks that would create one catalog, schema or storage root
    plans = [(r, r.plan) for r in runs if r.plan is not None]
    # each finding's stack, by its resource's URN (a stack-level finding, a budget's, is on the stack's own URN)
    source_of = {urn: plan.stack for _, plan in plans for urn in [plan.stack_urn, *(r.urn for r in plan.resources)]}
    common.write_baseline(args, [v for _, plan in plans for v in plan.violations or []], source_of)
    if args.baseline:
        marked = common.with_baseline(args, [v for _, plan in plans for v in plan.violations or []], source_of)
        for run, plan in plans:
            mine = {v.urn for v in plan.violations or []}
            plan.violations = [v for v in marked if v.urn in mine]
            run.exit = EXIT_VIOLATIONS if plan.has_mandatory else EXIT_OK
    common.emit(args, formats.render(fmt, StacksReport("check", runs, several(args), config)))
    code = worst(runs)
    return EXIT_OK if args.soft_fail and code == EXIT_VIOLATIONS else code
