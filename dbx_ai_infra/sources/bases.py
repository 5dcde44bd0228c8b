"""The base a cost diff (``cost --against BASE``) compares against: a saved plan JSON (priced now if it carries no
costs), a Terraform plan's JSON, or a stack name or file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.clouds import checked_region
from dbx_ai_infra.dbxtypes.plan import Plan
from dbx_ai_infra.engine.costing import price_plan, read_plan_file
from dbx_ai_infra.engine.pipeline import build_plan
from dbx_ai_infra.sources.hcl import is_terraform_code
from dbx_ai_infra.sources.terraform import is_terraform_plan_file, priced_terraform_plan


def base_plan(base: str, *, policy_config: Any, prices: str | None, cloud: str | None = None,
              region: str | None = None) -> Plan:
    """A cost diff's base: a saved plan JSON (priced now if it carries no costs), or a stack name or file. A Terraform
    plan without Databricks compute takes ``cloud`` (the head's). ``region`` (``--region``) prices a Terraform plan,
    a stack, or a saved plan that carries no costs, at that region."""
    if is_terraform_code(base) or Path(base).is_dir():
        # `cost --terraform NEW --against OLD`: Terraform code as written; a directory with no .tf yet (the base
        # branch of a repository's first pull request) is an empty module, $0, and everything in the head is new.
        # (A stack's directory of base plans is resolved to its STACK.json before it comes here.)
        return priced_terraform_plan(base, policy_config=policy_config, prices=prices, cloud=cloud, region=region,
                                     as_code=True, allow_empty=True)
    if base.endswith(".json"):
        if is_terraform_plan_file(base):  # `cost --terraform-plan NEW --against OLD`
            return priced_terraform_plan(base, policy_config=policy_config, prices=prices, cloud=cloud,
                                         region=region)
        plan = read_plan_file(base)
        if plan.cost is None:
            plan.region = checked_region(region, plan.cloud) or plan.region
            plan.cost = price_plan(plan, None, prices)
        return plan
    return build_plan(base, policy_config=policy_config, prices=prices, with_cost=True, region=region)


def empty_base(head: Plan, prices: str | None) -> Plan:
    """The base of a stack that has none yet (its first pull request: no ``STACK.json`` in the directory of base
    plans): the same stack with no resources, $0, so that everything in the head is new and a budget's increase
    limits judge all of it."""
    plan = Plan(stack=head.stack, project=head.project, cloud=head.cloud, region=head.region, resources=[],
                assumptions=head.assumptions)
    plan.cost = price_plan(plan, None, prices)
    return plan
