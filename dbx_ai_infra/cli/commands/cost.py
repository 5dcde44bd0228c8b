"""``cost`` of stacks, Terraform code or plans, or a workspace export, alone or against a base (``--against``): its
own module, so that ``preview`` and ``check`` of a stack do not import the Terraform reader and the bases it reads
(about 40 ms of their start: issue 53, item 5)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dbx_ai_infra.cli.commands import common
from dbx_ai_infra.cli.commands.stacks import plan_run, several, stacks
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.engine.exits import EXIT_OK, EXIT_VIOLATIONS
from dbx_ai_infra.engine.multi import StackRun, run_each, worst
from dbx_ai_infra.engine.pipeline import stack_violations
from dbx_ai_infra.policies.registry import stack_rules
from dbx_ai_infra.pricing import diff_costs
from dbx_ai_infra.reports import formats
from dbx_ai_infra.reports.reportdoc import StacksReport
from dbx_ai_infra.sources.bases import base_plan, empty_base
from dbx_ai_infra.sources.terraform import priced_terraform_plan


def _base_for(stack: str, args: argparse.Namespace) -> str | None:
    """The base a stack's cost is compared with (``stack``: its name): ``--against`` itself, or ``DIR/STACK.json``
    when it is a directory of base plans (a stack with no file there is new: None, and `cmd_cost` compares it with
    an empty base)."""
    if not args.against:
        return None
    against = Path(args.against)
    if against.is_dir():
        base = against / f"{stack}.json"
        return str(base) if base.is_file() else None
    if several(args):
        raise InputError.single(args.against, "--against", "is one base, but this run prices several stacks.",
                                "pass a directory of base plans, STACK.json each (`preview --json` on the base "
                                "branch writes them).")
    return str(args.against)


def _same_stack(base: Any, head: Any, where: str, args: argparse.Namespace) -> None:
    """A base found in a directory by the stack's name (``DIR/STACK.json``) is that stack's: one of another stack or
    cloud is refused (exit 2), never compared as if it were the same stack's."""
    if not Path(args.against).is_dir() or getattr(args, "terraform", None) or getattr(args, "terraform_plan", None):
        return  # a base named on its own (``--against dev``, a Terraform module) may be any stack: the diff says which
    if base.stack != head.stack or base.cloud != head.cloud:
        raise InputError.single(where, "stack", f"holds the plan of stack {base.stack} ({base.cloud}), not of "
                                f"{head.stack} ({head.cloud}), which a directory of base plans pairs it with by its "
                                f"name.", f"write {head.stack}'s base plan there (`preview --stack {head.stack} "
                                f"--json --out {where}` on the base branch).")


def _cost_unknown(run: StackRun) -> bool:
    """Whether a priced run leaves something unknown (``--fail-on-unknown``): its total incomplete, or with a base,
    its delta; a `note:` names what."""
    assert run.plan is not None and run.plan.cost is not None
    names = list(run.plan.cost.total.unpriced)
    if run.diff is not None:
        unpriced = run.diff["total"].get("unpriced") or {}
        names = [*unpriced.get("base", []), *unpriced.get("head", [])]
    if names:
        print(f"note: {run.source}: --fail-on-unknown: not priced: {', '.join(dict.fromkeys(names))}",
              file=sys.stderr)
    return bool(names)


def cmd_cost(args: argparse.Namespace) -> int:
    config = common.policy_config(args)
    export = getattr(args, "cluster_json", None)
    terraform = getattr(args, "terraform_plan", None) or getattr(args, "terraform", None) or export
    if export and args.against:
        raise InputError.single(args.against, "--against", "goes with --stack, --terraform or --terraform-plan, not "
                                "with --cluster-json (a workspace export is what runs, not a change).",
                                "drop --against, or price the change's Terraform plan or stacks.")

    def work(stack: str) -> StackRun:
        if terraform:  # a Terraform plan, Terraform code as written, or a workspace export, priced like a stack
            plan = priced_terraform_plan(stack, policy_config=config, prices=args.prices,
                                         region=getattr(args, "region", None), var_files=args.var_file,
                                         as_code=bool(getattr(args, "terraform", None)), export=bool(export))
            run = StackRun(plan.stack, stack, plan=plan)
            run.base = args.against
        else:
            run = plan_run(stack, args, config, cost=True)
        assert run.plan is not None
        new = False
        if not terraform:
            run.base = _base_for(run.plan.stack, args)
            new = run.base is None and bool(args.against)
        if new:  # no plan of it in the directory of base plans: a new stack, all of it the increase
            missing = Path(args.against) / f"{run.plan.stack}.json"
            if run.plan.budget:
                print(f"note: {missing} does not exist: stack {run.plan.stack} is new; its budget's increase limits "
                      f"judge all of it (an empty base, $0 a month).", file=sys.stderr)
            # the report shows it as new (no diff); the budget judges the change from nothing
            empty = diff_costs(empty_base(run.plan, args.prices), run.plan)
            run.plan.violations = [*(run.plan.violations or []), *stack_violations(run.plan, config, change=empty)[0]]
        elif run.base is not None:
            base = base_plan(run.base, policy_config=config, prices=args.prices, cloud=run.plan.cloud,
                             region=getattr(args, "region", None))
            _same_stack(base, run.plan, run.base, args)
            run.diff = diff_costs(base, run.plan)
            # the rules about cost judge the change: the budget's increase limits (a stack without a budget has none)
            run.plan.violations = [*(run.plan.violations or []), *stack_violations(run.plan, config,
                                                                                   change=run.diff)[0]]
        # cost fails only on the rules about cost (the stack's budget): its other findings are check's to fail on
        costs = {rule.name for rule in stack_rules() if rule.judges_cost}
        run.exit = EXIT_VIOLATIONS if any(v.mandatory and v.policy in costs for v in run.plan.violations or []) \
            else EXIT_OK
        if getattr(args, "fail_on_unknown", False) and _cost_unknown(run):  # a strict gate: what is not priced fails
            run.exit = EXIT_VIOLATIONS
        return run

    sources = [terraform] if terraform else stacks(args)
    runs = run_each(sources, work, what="cost", keep_errors=several(args))
    report = StacksReport("cost", runs, several(args), config, against=args.against)
    common.emit(args, formats.render(common.fmt(args), report))
    return worst(runs)
