"""``python -m stackplan advise``: the command (see the README's advise section)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

from dbx_ai_infra.advise.analysis import emitted_sql, run_databricks, run_local, run_spark
from dbx_ai_infra.advise.assess import Context, edited_stack_text, findings_of, price_edit
from dbx_ai_infra.advise.engines import SparkOptions
from dbx_ai_infra.advise.targets import endpoint_rows, endpoint_targets, target_rows, targets_of
from dbx_ai_infra.cli.commands import common
from dbx_ai_infra.dbxtypes.advise_thresholds import AdviseSettings, advise_settings
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.engine.exits import EXIT_OK
from dbx_ai_infra.engine.interrupts import scratch_dir
from dbx_ai_infra.engine.output import check_out, make_dir, out_dir, write_text
from dbx_ai_infra.engine.pipeline import Options, build, build_plan
from dbx_ai_infra.policies.registry import load_policy_config
from dbx_ai_infra.reports import formats
from dbx_ai_infra.reports.advise_report import advise_doc
from dbx_ai_infra.reports.reportdoc import AdviceReport


def cmd_advise(args: argparse.Namespace) -> int:
    policy_config = common.policy_config(args)
    if args.write_stack:
        check_out(args.write_stack, common.inputs(args), "--write-stack")  # never the stack itself: before any work
    settings = advise_settings(load_policy_config(policy_config).advise, _sla(args))
    built = build(args.stack, Options(policy_config, args.prices, policies=True, cost=True))
    for note in built.notes:
        print(f"note: {note}", file=sys.stderr)
    plan, spec = built.plan, built.loaded.spec
    targets = targets_of(plan, settings.low_bandwidth_gbps)
    if not targets:
        raise InputError.single(plan.stack_file or args.stack, "dbx-ai-infra:training|inference|dev",
                                "the stack has no cluster to advise on.", "add a training, inference or dev section.")
    rows = target_rows(targets, plan.stack)
    endpoints = endpoint_targets(plan)
    served = endpoint_rows(endpoints)
    if args.emit_sql:
        _emit_sql(args, plan, spec, rows, served, settings)
        if not args.usage and args.engine != "databricks":
            return EXIT_OK
    analysis = _analysis(args, rows, served, settings, plan, spec)
    findings = findings_of(analysis, targets, Context(plan, settings, spec), endpoints)
    _price_proposals(findings, plan, policy_config, args.prices)
    doc = advise_doc(plan, [f.to_json() for f in findings], analysis, settings.model_dump(),
                     settings.sla_p99_ms, args.usage)
    if args.write_stack:
        _write_stack(args, plan, findings, doc["notes"], policy_config)
    common.emit(args, formats.render(common.fmt(args), AdviceReport(doc)))
    return EXIT_OK


def _sla(args: argparse.Namespace) -> float | None:
    """``--sla-p99-ms`` (None: not given, the policy config's stands), in ms; a value not above 0 is exit 2."""
    sla = args.sla_p99_ms
    if sla is not None and not sla > 0:
        raise InputError.single("--sla-p99-ms", "--sla-p99-ms", f"must be a positive number of ms, got {sla:g}.",
                                "pass e.g. --sla-p99-ms 800.")
    return cast("float | None", sla)


def _telemetry_volume(spec: Any) -> str:
    """The path of the stack's telemetry Volume (``/Volumes/<catalog>/<schema>/<volume>``)."""
    schema, volume = spec.monitoring.volume.split(".", 1)
    return f"/Volumes/{spec.unity_catalog.catalog}/{schema}/{volume}"


def _emit_sql(args: argparse.Namespace, plan: Any, spec: Any, rows: list[dict[str, Any]],
              served: list[dict[str, Any]], settings: AdviseSettings) -> None:
    """``--emit-sql DIR``: the analysis as Databricks SQL files, one per statement."""
    out = out_dir(args.emit_sql, "--emit-sql")
    make_dir(out, "--emit-sql")
    for name, text in emitted_sql(stack=plan.stack, telemetry=_telemetry_volume(spec), days=args.days, targets=rows,
                                  settings=settings, endpoints=served).items():
        write_text(text, str(out / name), ())
        print(f"wrote {out / name}", file=sys.stderr)


def _price_proposals(findings: list[Any], plan: Any, policy_config: Any, prices: str | None) -> None:
    """Each finding's proposal priced by building the edited stack; an edit two findings propose is built once and
    its figures shared."""
    priced: dict[str, Any] = {}
    for finding in findings:
        if finding.proposal is None:
            continue
        key = json.dumps(finding.proposal.edit, sort_keys=True)
        if key not in priced:
            price_edit(plan, finding.proposal, policy_config=policy_config, prices=prices)
            priced[key] = finding.proposal
            continue
        same = priced[key]
        finding.proposal.monthly_before, finding.proposal.monthly_after = same.monthly_before, same.monthly_after
        finding.proposal.monthly_max_before = same.monthly_max_before
        finding.proposal.monthly_max_after = same.monthly_max_after
        finding.proposal.blocked_by = same.blocked_by


def _analysis(args: argparse.Namespace, rows: list[dict[str, Any]], served: list[dict[str, Any]],
              settings: AdviseSettings, plan: Any, spec: Any) -> Any:
    """The analysis on the engine ``--engine`` names (`dbx_ai_infra.advise.engines`)."""
    if args.engine == "spark":
        return run_spark(args.usage, rows, settings, SparkOptions(master=args.spark_master, remote=args.remote),
                         endpoints=served)
    if args.engine == "databricks":
        return run_databricks(rows, settings, stack=plan.stack, days=args.days, profile=args.profile,
                              telemetry=_telemetry_volume(spec), endpoints=served)
    return run_local(args.usage, rows, settings, endpoints=served)


def _write_stack(args: argparse.Namespace, plan: Any, findings: list[Any], notes: list[str],
                 policy_config: Any) -> None:
    """``--write-stack FILE``: the stack file with every proposal no mandatory policy refuses applied (the first of
    two that set one key wins: findings come most severe first), checked by building it, then written."""
    combined: dict[str, Any] = {}
    applied: list[str] = []
    for f in findings:
        p = f.proposal
        if p is None or p.blocked_by:
            continue
        clash = [k for k, v in p.edit.items() if k in combined and combined[k] != v]
        if clash:
            notes.append(f"--write-stack: {f.id} on {f.workload} not applied: it sets {', '.join(clash)} "
                         f"differently from an edit applied before it.")
            continue
        combined.update(p.edit)
        applied.append(f"{f.id} on {f.workload}")
    stack_file = Path(plan.stack_file)
    text = edited_stack_text(stack_file, combined)
    with scratch_dir("write-stack-") as tmp:
        trial = tmp / stack_file.name
        trial.write_text(text, encoding="utf-8")
        try:
            after = build_plan(str(trial), policy_config=policy_config, prices=args.prices)
        except InputError as exc:
            raise InputError.single(args.write_stack, "--write-stack", f"the proposals together make a stack that "
                                    f"is not valid ({exc}).", "apply them one by one (each proposal's yaml).") from None
    mandatory = sorted({v.policy for v in after.violations or [] if v.mandatory})
    if mandatory:
        raise InputError.single(args.write_stack, "--write-stack", f"the proposals together break "
                                f"{', '.join(mandatory)}.", "apply them one by one (each proposal's yaml).")
    write_text(text, args.write_stack, common.inputs(args))
    print(f"wrote {args.write_stack}: {len(applied)} edit(s) applied"
          + (f" ({'; '.join(applied)})" if applied else " (no proposal to apply: the stack as it is)"),
          file=sys.stderr)
