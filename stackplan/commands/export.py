"""``export-policies``: the stack's cluster-policy definitions as JSON files, one per policy."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dbxtypes.errors import InputError
from dbxtypes.vocabulary import CLUSTER_POLICY
from stackplan.exits import EXIT_OK
from stackplan.pipeline import build_plan

from . import common


def cmd_export_policies(args: argparse.Namespace) -> int:
    plan = build_plan(args.stack, policy_config=common.policy_config(args), with_policies=False)
    policies = [r for r in plan.resources if r.type == CLUSTER_POLICY]
    if not policies:
        raise InputError.single(plan.stack_file or plan.stack, "dbx-ai-infra:cluster_policies.enabled",
                                "is false, so the stack makes no cluster policy.", "enable it to export definitions.")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError.single(args.out, "--out", "exists and is not a directory.", "pass a directory for --out.")
    out.mkdir(parents=True, exist_ok=True)
    for r in policies:
        definition = json.loads(r.inputs["definition"])
        path = out / f"{r.inputs['name']}.json"
        common.emit(args, json.dumps(definition, indent=2, sort_keys=True), str(path))
        print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK
