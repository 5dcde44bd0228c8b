"""Phase timings of one preview, in a fresh process: ``python bench/phases.py STACK`` prints one JSON object.

The phases are what ``python -m stackplan preview`` does, in its order, each timed with ``time.perf_counter``:
imports (stackspec, the engine, the policies, pricing, the subset of pulumi_databricks the program uses, the
renderer; each import is timed on its own, so a module's share excludes what an earlier one already loaded), the
program run (load_stack + run_program under Pulumi mocks), policy evaluation, pricing and rendering the table.
bench/run.py also times the whole process from outside; the difference is interpreter start-up and exit.
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def main(stack: str) -> dict:
    out: dict = {"stack": stack, "imports": {}, "phases": {}}
    imports = out["imports"]

    t = time.perf_counter()
    from dbx_ai_infra.stackspec import load_stack
    imports["stackspec"] = time.perf_counter() - t

    t = time.perf_counter()
    from dbx_ai_infra.engine.engine import run_program
    imports["dbx_ai_infra.engine.engine"] = time.perf_counter() - t

    t = time.perf_counter()
    from dbx_ai_infra.policies.registry import evaluate_plan
    imports["policies"] = time.perf_counter() - t

    t = time.perf_counter()
    try:
        from dbx_ai_infra.pricing import load_prices, price_plan
    except Exception as exc:  # noqa: BLE001 - pricing may be absent or half-written
        load_prices = price_plan = None
        out["pricing_error"] = f"{type(exc).__name__}: {exc}"
    imports["pricing"] = time.perf_counter() - t

    t = time.perf_counter()
    from dbx_ai_infra import pulumi_private
    from dbx_ai_infra.dbxtypes.vocabulary import PROGRAM_RESOURCE_TYPES

    # what the engine imports of the provider SDK: the modules of the types the program creates (issue 23)
    pulumi_private.use_provider_subset("pulumi_databricks", PROGRAM_RESOURCE_TYPES)
    imports["pulumi_databricks"] = time.perf_counter() - t

    t = time.perf_counter()
    from dbx_ai_infra.reports.render import plan_table
    imports["dbx_ai_infra.reports.render"] = time.perf_counter() - t

    phases = out["phases"]
    phases["import"] = sum(imports.values())

    t = time.perf_counter()
    loaded = load_stack(stack)
    plan = run_program(loaded)
    plan.assumptions = loaded.spec.usage.model_dump()
    phases["program"] = time.perf_counter() - t

    t = time.perf_counter()
    plan.violations = evaluate_plan(plan)
    phases["policies"] = time.perf_counter() - t

    if price_plan is not None:
        t = time.perf_counter()
        try:
            plan.cost = price_plan(plan, load_prices())
            phases["pricing"] = time.perf_counter() - t
        except Exception as exc:  # noqa: BLE001
            out["pricing_error"] = f"{type(exc).__name__}: {exc}"
            phases["pricing"] = None
    else:
        phases["pricing"] = None

    t = time.perf_counter()
    text = plan_table(plan)
    phases["render"] = time.perf_counter() - t

    out["resources"] = len(plan.resources)
    out["violations"] = len(plan.violations)
    out["rendered_chars"] = len(text)
    out["in_process_total"] = time.perf_counter() - _T0
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python bench/phases.py STACK", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(main(sys.argv[1])))
