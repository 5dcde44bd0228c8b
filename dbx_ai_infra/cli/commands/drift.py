"""``drift --stack STACK --workspace|--cluster-json`` (alias ``check --stack STACK --workspace|--cluster-json``):
where the workspace differs from the stack. Its own module: the stack goes through the pipeline, which an audit of
the workspace alone never loads."""

from __future__ import annotations

import argparse

from dbx_ai_infra.cli.commands import common
from dbx_ai_infra.cli.commands.workspace import read_live
from dbx_ai_infra.engine.exits import EXIT_OK
from dbx_ai_infra.engine.pipeline import build_plan
from dbx_ai_infra.reports import formats
from dbx_ai_infra.reports.reportdoc import DriftReport
from dbx_ai_infra.sources.audit import read_export
from dbx_ai_infra.sources.drift import drift


def cmd_drift(args: argparse.Namespace) -> int:
    """``drift --stack STACK --workspace|--cluster-json`` (and its alias ``check --stack STACK --workspace|
    --cluster-json``, where a Terraform plan is read like an export): where the workspace differs from the stack."""
    config = common.policy_config(args)
    export = getattr(args, "terraform_plan", None) or args.cluster_json
    against, items = read_live(args) if args.workspace else (export, read_export(export))
    plan = build_plan(args.stack[0], policy_config=config, with_policies=False)
    found = drift(plan, items)
    plan.violations = found
    report = DriftReport(plan, against, found, {i.urn: i.source for i in items}, config)
    common.emit(args, formats.render(common.fmt(args), report))
    return EXIT_OK
