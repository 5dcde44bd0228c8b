"""``export-policies``: the stack's cluster-policy definitions as JSON files, one per policy."""

from __future__ import annotations

import argparse
import json
import sys

from dbx_ai_infra.cli.commands import common
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER_POLICY, INSTANCE_POOL
from dbx_ai_infra.engine.exits import EXIT_OK
from dbx_ai_infra.engine.output import make_dir, out_dir
from dbx_ai_infra.engine.pipeline import build_plan
from dbx_ai_infra.engine.tfexport import terraform_config


def cmd_export_policies(args: argparse.Namespace) -> int:
    plan = build_plan(args.stack, policy_config=common.policy_config(args), with_policies=False)
    policies = [r for r in plan.resources if r.type == CLUSTER_POLICY]
    if not policies:
        raise InputError.single(plan.stack_file or plan.stack, "dbx-ai-infra:cluster_policies.enabled",
                                "is false, so the stack makes no cluster policy.", "enable it to export definitions.")
    out = out_dir(args.out)
    make_dir(out)
    # Offline, a pool's id is the engine's stand-in: the file marks it instead, naming the pool.
    unknown_ids = {r.id: f"<id of instance pool {r.inputs.get('instancePoolName', r.name)}: known after pulumi up>"
                   for r in plan.resources if r.type == INSTANCE_POOL}
    for r in policies:
        definition = json.loads(r.inputs["definition"])
        marked = sorted(p for p, e in definition.items() if isinstance(e, dict) and e.get("value") in unknown_ids)
        for p in marked:
            definition[p] = {**definition[p], "value": unknown_ids[definition[p]["value"]]}
        path = out / f"{r.inputs['name']}.json"
        common.emit(args, json.dumps(definition, indent=2, sort_keys=True), str(path))
        print(f"wrote {path}", file=sys.stderr)
        if marked:
            print(f"note: {path} pins {', '.join(marked)} to the instance pool the stack creates; its id exists only "
                  "after `pulumi up` (`pulumi stack output <workload>_pool_id`): put it in place of the <id of ...> "
                  "marker before creating this policy by hand. `pulumi up` makes the policy with the id itself.",
                  file=sys.stderr)
    return EXIT_OK


def cmd_export_terraform(args: argparse.Namespace) -> int:
    """``export-terraform``: the plan as Terraform JSON configuration, ``DIR/main.tf.json`` (`engine.tfexport`)."""
    out = out_dir(args.out)  # before any work
    plan = build_plan(args.stack, policy_config=common.policy_config(args), with_policies=False)
    doc = terraform_config(plan)
    make_dir(out)
    path = out / "main.tf.json"
    common.emit(args, json.dumps(doc, indent=2) + "\n", str(path))
    count = sum(len(named) for named in doc["resource"].values())
    provider = doc["terraform"]["required_providers"]["databricks"]
    print(f"wrote {path}: {count} resources of stack {plan.stack} (Terraform provider {provider['source']} "
          f"{provider['version']}; credentials from the environment or a profile)", file=sys.stderr)
    return EXIT_OK
