"""``python -m stackplan advise``: the command (see the README's advise section)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dbxtypes.errors import InputError


def cmd_advise(args: argparse.Namespace, *, emit: Any, policy_config: Any) -> int:
    from policies.registry import load_policy_config
    from stackplan.cli import EXIT_OK, build_plan

    from .advice import Context, findings_of, price_edit
    from .analysis import emitted_sql, run_local
    from .targets import target_rows, targets_of

    config = load_policy_config(policy_config)
    thresholds = config.advise_thresholds()
    sla = args.sla_p99_ms if args.sla_p99_ms is not None else thresholds.get("sla_p99_ms")
    if sla is not None and not sla > 0:
        raise InputError.single("--sla-p99-ms", "--sla-p99-ms", f"must be a positive number of ms, got {sla:g}.",
                                "pass e.g. --sla-p99-ms 800.")
    plan = build_plan(args.stack, policy_config=policy_config, prices=args.prices, with_cost=True)
    targets = targets_of(plan, float(thresholds["low_bandwidth_gbps"] or 0))
    if not targets:
        raise InputError.single(plan.stack_file or args.stack, "dbx-ai-infra:training|inference|dev",
                                "the stack has no cluster to advise on.", "add a training, inference or dev section.")
    rows = target_rows(targets, plan.stack)
    from stackspec import load_stack

    spec = load_stack(args.stack, limits=config.limits()).spec  # validated by build_plan above, with these limits
    if args.emit_sql:
        from stackplan.output import write_text

        schema, volume = spec.monitoring.volume.split(".", 1)
        telemetry = f"/Volumes/{spec.unity_catalog.catalog}/{schema}/{volume}"
        out = Path(args.emit_sql)
        if out.exists() and not out.is_dir():
            raise InputError.single(args.emit_sql, "--emit-sql", "exists and is not a directory.",
                                    "pass a directory.")
        out.mkdir(parents=True, exist_ok=True)
        for name, text in emitted_sql(stack=plan.stack, telemetry=telemetry, days=args.days, targets=rows,
                                      thresholds=thresholds, sla=sla).items():
            write_text(text, str(out / name), ())
            print(f"wrote {out / name}", file=sys.stderr)
        if not args.usage:
            return EXIT_OK
    analysis = run_local(args.usage, rows, thresholds, sla)
    findings = findings_of(analysis, targets, Context(plan, thresholds, sla, spec))
    priced: dict[str, Any] = {}
    for finding in findings:
        if finding.proposal is None:
            continue
        key = json.dumps(finding.proposal.edit, sort_keys=True)
        if key not in priced:
            price_edit(plan, finding.proposal, policy_config=policy_config, prices=args.prices)
            priced[key] = finding.proposal
        else:
            same = priced[key]
            finding.proposal.monthly_before, finding.proposal.monthly_after = same.monthly_before, same.monthly_after
            finding.proposal.blocked_by = same.blocked_by
    from .report import advise_doc, advise_table, render_report

    doc = advise_doc(plan, [f.to_json() for f in findings], analysis, thresholds, sla, args.usage)
    fmt = "json" if args.json else args.format
    if fmt == "json":
        emit(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    elif fmt in ("markdown", "html"):
        emit(render_report(doc, html=fmt == "html"))
    else:
        from stackplan.render import current_width

        emit(advise_table(doc, current_width()))
    return EXIT_OK
