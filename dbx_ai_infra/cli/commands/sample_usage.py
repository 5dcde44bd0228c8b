"""``sample-usage``: telemetry exports for a stack, with problems planted, to try ``advise`` without a workspace."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from dbx_ai_infra.advise.findings import PLANTS
from dbx_ai_infra.advise.telemetry import PLANT_ROLE, plant_targets, write_exports
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.engine.exits import EXIT_OK
from dbx_ai_infra.engine.interrupts import PARTIAL
from dbx_ai_infra.engine.output import make_dir, out_dir, write_stdout
from dbx_ai_infra.engine.pipeline import build_plan


def cmd_sample_usage(args: argparse.Namespace) -> int:
    unknown = [p for p in args.plant if p not in PLANTS]
    if unknown:
        raise InputError.single("--plant", "--plant", f"{', '.join(unknown)} is not a finding that can be planted.",
                                f"pass one of {', '.join(PLANTS)}.")
    if not args.days > 0:
        raise InputError.single("--days", "--days", f"must be above 0, got {args.days:g}.", "pass e.g. --days 7.")
    out = out_dir(args.out)
    plan = build_plan(args.stack, with_policies=False, with_cost=True)
    _, _, where = plant_targets(plan, args.plant, args.only)
    missing = [p for p in dict.fromkeys(args.plant) if p not in where]
    if missing:  # before anything is written: asked to plant, it would plant nothing there
        roles = {p: PLANT_ROLE[p] for p in missing}
        raise InputError.single(plan.stack_file or plan.stack, "--plant", "; ".join(
            f"{p} plants on {'a serving endpoint it applies to' if role == 'serving' else f'a {role} workload'}, "
            f"and stack {plan.stack}{' (--only)' if args.only else ''} has none" for p, role in roles.items()) + ".",
            "plant it on a stack that has such a workload, or leave it out.")
    make_dir(out.parent if str(out.parent) else Path("."))
    # written into a directory beside OUT, then moved into place: an interrupted run leaves nothing (the directory
    # is removed with the run's other partial outputs, `dbx_ai_infra.engine.interrupts.PARTIAL`)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent if str(out.parent) else "."))
    PARTIAL.add(str(staging))
    try:
        info = write_exports(staging, plan, plant=args.plant, days=args.days, fmt=args.file_format,
                             full_window=args.full_window, only=args.only)
        _into_place(staging, out)
    finally:
        PARTIAL.discard(str(staging))
        shutil.rmtree(staging, ignore_errors=True)
    write_stdout(json.dumps(info, indent=2) + "\n")
    print(f"wrote the exports of stack {plan.stack} to {out}: try `python -m stackplan advise --stack "
          f"{args.stack} --usage {out}`", file=sys.stderr)
    return EXIT_OK


def _into_place(staging: Path, out: Path) -> None:
    """The exports written in ``staging`` moved to ``out`` (which does not exist: the command line refuses an
    existing one) in one rename."""
    try:
        os.replace(staging, out)
    except OSError as exc:
        raise InputError.single(str(out), "--out", f"cannot be written ({exc.strerror or type(exc).__name__}).",
                                "pass a path you can write for --out.") from None
