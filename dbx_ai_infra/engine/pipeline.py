"""The one pipeline: a stack (a name or a file) and options -> the finished, typed `Plan`.

YAML -> spec (validated once, with the policy config's limits) -> the Pulumi program under mocks -> resources ->
sizing, violations (stack exceptions applied), cost and advice. Every caller goes through here: the CLI's commands,
`advise` (the plan, and each priced proposal), the telemetry generator and the benchmarks. Nothing here parses
arguments or prints; notes (an exception that expires soon, ...) come back in `Built.notes`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dbx_ai_infra.dbxtypes.clouds import checked_region
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Plan, SizingLine, Violation
from dbx_ai_infra.engine.exceptions import apply_exceptions
from dbx_ai_infra.policies.registry import (
    RULES_BY_NAME,
    PolicyConfig,
    evaluate_plan,
    evaluate_stack,
    load_policy_config,
    merged_policy_config,
)
from dbx_ai_infra.policies.rule import ServedModel, StackView
from dbx_ai_infra.stackspec import LoadedStack, load_stack


@dataclass(frozen=True)
class Options:
    """What a build adds to the plan of resources."""

    #: A policy config (`dbx_ai_infra.policies.registry.PolicyConfig`, or its JSON as Pulumi takes it); None: the
    #: defaults.
    policy_config: Any = None
    #: A ``--prices`` file of price overrides.
    prices: str | None = None
    #: Evaluate the policy pack (and apply the stack's exceptions).
    policies: bool = True
    #: Price the plan (and add the cheaper-GPU and serving advice).
    cost: bool = False
    #: ``--region``: the workspace's region, over the stack's ``dbx-ai-infra:region`` (None: the stack's).
    region: str | None = None


@dataclass
class Built:
    """One stack through the pipeline: the loaded stack (its validated spec) and its plan."""

    loaded: LoadedStack
    plan: Plan
    #: What the user should hear on stderr (exceptions about to expire, exceptions that match nothing).
    notes: list[str] = field(default_factory=list)


def load(stack: str, policy_config: Any = None) -> LoadedStack:
    """Read and validate a stack once, bounded by the mandatory thresholds of its policy config: ``policy_config``
    with the stack's own ``dbx-ai-infra:policy`` section over it (read first: its thresholds bound the spec)."""
    def policy_of(section: Any, source: str) -> PolicyConfig:
        if section is None:
            return load_policy_config(policy_config)
        if not isinstance(section, dict):
            raise InputError.single(source, "dbx-ai-infra:policy", "is not a mapping of policy names.",
                                    "write policy: {<policy-name>: advisory | mandatory | disabled | {...}}.")
        return load_policy_config(merged_policy_config(policy_config, section, f"{source}: dbx-ai-infra:policy"))

    return load_stack(stack, policy_of=policy_of)


def build(stack: str | LoadedStack, options: Options = Options()) -> Built:
    """Run a stack through the pipeline (``stack``: a name, a file, or a stack `load` already read)."""
    from dbx_ai_infra.engine.heap import settled

    with settled():
        from dbx_ai_infra.engine.engine import run_program

    loaded = stack if isinstance(stack, LoadedStack) else load(stack, options.policy_config)
    if loaded.policy_config is not None:  # the stack's own policy section, over --policy-config
        options = dataclasses.replace(options, policy_config=loaded.policy_config)

    region = checked_region(options.region, loaded.spec.cloud) or loaded.spec.region  # before the program runs
    if region is not None:  # a name the price data knows (a typo is exit 2 naming the nearest)
        from dbx_ai_infra.pricing.regions import check_region

        check_region(region, cloud=loaded.spec.cloud, where="--region" if options.region else str(loaded.path),
                     field="" if options.region else "config.dbx-ai-infra:region")
    plan = run_program(loaded)
    plan.region = region
    plan.assumptions = loaded.spec.usage_assumptions()
    plan.sizing = [SizingLine.model_validate(w.sizing()) for w in loaded.resolved.workloads.values()]
    plan.sizing += [SizingLine.model_validate(e.sizing()) for e in loaded.resolved.endpoints.values()]
    plan.sizing += [SizingLine.model_validate(s.sizing()) for s in loaded.resolved.serverless.values()]
    notes: list[str] = []
    budget = loaded.spec.budget.model_dump(exclude_none=True) if loaded.spec.budget is not None else None
    if budget:
        plan.budget = budget
    if options.cost or (options.policies and budget):  # a budget is judged on the priced stack
        from dbx_ai_infra.engine.costing import price_book
        from dbx_ai_infra.pricing import (  # the cost seam
            cheaper_gpu_advice,
            job_compute_advice,
            serverless_gpu_comparison,
            serving_comparison,
        )
        from dbx_ai_infra.pricing import price_plan as cost_of

        book = price_book(loaded, options.prices, plan.region)
        plan.cost = cost_of(plan, book)
        plan.advice = (cheaper_gpu_advice(plan, book) + serving_comparison(plan, book) + job_compute_advice(plan, book)
                       + serverless_gpu_comparison(plan, book))
    if options.policies:
        stack_found, stack_notes = stack_violations(plan, options.policy_config, loaded)
        plan.violations, notes = apply_exceptions(
            evaluate_plan(plan, options.policy_config) + stack_found,
            loaded.spec.exceptions, rules=list(RULES_BY_NAME),
            resources=[plan.stack, *(r.name for r in plan.resources)], today=datetime.now(UTC).date(),
            source=plan.stack_file or loaded.name)
        notes += stack_notes
    if loaded.policy_config is not None:  # retired rules the stack's own policy section names
        notes += loaded.policy_config.notes(f"{plan.stack_file or loaded.name}: dbx-ai-infra:policy")
    return Built(loaded, plan, [*loaded.resolved.warnings, *notes])


def served_models(loaded: LoadedStack) -> tuple[ServedModel, ...]:
    """What the stack's serving endpoints serve, and whether the stack declares the version registered."""
    serving = loaded.spec.serving
    if serving is None:
        return ()
    return tuple(ServedModel(name, *e.served_entity, e.model_registered) for name, e in serving.endpoints.items())


def stack_violations(plan: Plan, policy_config: Any, loaded: LoadedStack | None = None,
                     change: Mapping[str, Any] | None = None) -> tuple[list[Violation], list[str]]:
    """The stack rules' findings on a (priced) plan and their notes (`dbx_ai_infra.policies.evaluate.evaluate_stack`):
    with ``loaded``, what its stack file declares of its endpoints; with ``change`` (a cost diff from a base,
    `pricing.diff_costs`), the change, judged by the rules about cost (the budget's increase limits)."""
    served = served_models(loaded) if loaded is not None else ()
    return evaluate_stack(StackView(plan, served, change), policy_config)


def build_plan(stack: str, *, policy_config: Any = None, with_policies: bool = True,
               prices: str | None = None, with_cost: bool = False, region: str | None = None) -> Plan:
    """`build`'s plan alone (its notes dropped): for callers that only read the plan."""
    return build(stack, Options(policy_config, prices, with_policies, with_cost, region)).plan

