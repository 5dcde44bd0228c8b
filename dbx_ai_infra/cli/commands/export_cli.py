"""The declarations of ``export-policies`` and ``export-terraform`` (the work is in `dbx_ai_infra.cli.commands.export`).
Their ``--out`` is a directory they create and check themselves (``checks_out`` False)."""

from __future__ import annotations

import argparse

from dbx_ai_infra.cli.commands.args import Command, lazy, stack_arg


def _policies_arguments(p: argparse.ArgumentParser) -> None:
    stack_arg(p, "dev")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for <policy-name>.json files")
    p.add_argument("--policy-config", metavar="FILE",
                   help="policy config JSON: its mandatory thresholds bound the definitions as they bound the stack "
                        "(max_autotermination_minutes caps the idle time a policy allows)")


EXPORT_POLICIES = Command(
    "export-policies", "write the stack's cluster-policy definitions as JSON files",
    "  python -m stackplan export-policies --stack prod --out policies-out/\n",
    _policies_arguments, lazy("dbx_ai_infra.cli.commands.export", "cmd_export_policies"), checks_out=False)


def _terraform_arguments(p: argparse.ArgumentParser) -> None:
    stack_arg(p, "prod")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for main.tf.json (created)")
    p.add_argument("--policy-config", metavar="FILE",
                   help="policy config JSON: its mandatory thresholds bound the stack as for preview")


EXPORT_TERRAFORM = Command(
    "export-terraform", "write the stack's plan as Terraform JSON configuration (DIR/main.tf.json)",
    "  python -m stackplan export-terraform --stack prod --out terraform/prod/\n"
    "  cd terraform/prod && terraform init && terraform plan   # credentials from DATABRICKS_HOST/... or a profile\n",
    _terraform_arguments, lazy("dbx_ai_infra.cli.commands.export", "cmd_export_terraform"), checks_out=False)
