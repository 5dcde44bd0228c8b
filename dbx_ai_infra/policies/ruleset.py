"""The rule lists: every built-in resource rule in the order the pack lists them, the stack rules, the team's own
(``--rules DIR``, `dbx_ai_infra.policies.team.use_team_rules`), and every rule by name."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType

from dbx_ai_infra.policies import rules
from dbx_ai_infra.policies.rule import Rule


def registered() -> tuple[Rule, ...]:
    """Every built-in rule: the ``RULE`` of each module of `dbx_ai_infra.policies.rules` (a module whose name starts
    with ``_`` is a helper), in `Rule.order`. A rule registers itself by being a module there: a new rule is its
    module (and its tests), no list to extend."""
    found = []
    for module in pkgutil.iter_modules(rules.__path__):
        if module.name.startswith("_"):
            continue
        rule = getattr(importlib.import_module(f"{rules.__name__}.{module.name}"), "RULE", None)
        if not isinstance(rule, Rule):
            raise TypeError(f"{rules.__name__}.{module.name} defines no RULE (a dbx_ai_infra.policies.rule.Rule)")
        found.append(rule)
    return tuple(sorted(found, key=lambda rule: rule.order))


_REGISTERED = registered()
#: Every resource rule, mandatory ones first; the pack lists its policies in this order.
ALL_RULES: tuple[Rule, ...] = tuple(rule for rule in _REGISTERED if rule.scope in ("resource", "plan"))
#: Rules that judge a stack as a whole, not one resource: the stack rules (``scope`` ``"stack"``, `stack_rules`),
#: judged once per stack by `dbx_ai_infra.policies.evaluate.evaluate_stack` wherever stacks are judged, and the
#: many-stacks rule (``"stacks"``); their names, levels and exceptions work as any rule's.
STACK_RULES: tuple[Rule, ...] = tuple(rule for rule in _REGISTERED if rule.scope in ("stack", "stacks"))
#: A team's own resource rules, loaded from ``--rules DIR`` for this run (`use_team_rules`): judged like the built-in
#: ones, after them.
TEAM_RULES: list[Rule] = []
_BY_NAME: dict[str, Rule] = {r.name: r for r in (*ALL_RULES, *STACK_RULES)}
assert len(_BY_NAME) == len(ALL_RULES) + len(STACK_RULES), "duplicate rule names"
#: Rules that no longer exist, with why and what judges their case now. A policy config or an exception that still
#: names one is read (its setting has no effect, a `note:` says so), never refused: removing a rule must not break
#: the gate of a team that configured it.
RETIRED: Mapping[str, str] = MappingProxyType({
    "databricks-cluster-tag-autoscaled-gpu-compute": "retired in issue 51: an autoscaled all-purpose GPU cluster "
    "without a workload_type tag is now judged as inference from its shape (databricks-cluster-disallow-all-spot-"
    "inference and the other role rules)",
})
#: Every rule by name: the resource rules (`ALL_RULES`), the stack rules, then the team's.
RULES_BY_NAME: Mapping[str, Rule] = MappingProxyType(_BY_NAME)


def resource_rules() -> tuple[Rule, ...]:
    """The rules judged per resource, in order: the built-in ones, then the team's (`TEAM_RULES`)."""
    return (*ALL_RULES, *TEAM_RULES)


def stack_rules() -> tuple[Rule, ...]:
    """The rules judged once per stack (``scope`` ``"stack"``), in order."""
    return tuple(r for r in STACK_RULES if r.scope == "stack")
