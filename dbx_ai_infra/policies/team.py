"""A team's own rules (``--rules DIR``) are code the user trusts, but a broken one never passes a gate.

The rules run in a process of their own (`dbx_ai_infra.policies.team_process` starts it,
`dbx_ai_infra.policies.team_worker` is its code), so
that nothing a rule does can end, interrupt or write into the process that writes the report and the exit code.
There, each module is loaded, and each of its rule's checks runs, inside `running`: what it prints is its output,
shown on stderr as the rule's own (never in ``--json`` on stdout); ``sys.exit()``, ``exit()`` and ``os._exit()`` are
named as what they are (``os._exit`` is intercepted while a team rule runs, since no ``except`` could catch it); and
any failure (a ``BaseException`` included), a wrong signature, or a return that is not a list of strings (``None``
included) is `TeamRuleFailure`, which the evaluation turns into exit 2 naming the rule, its file and the resource.
What no ``except`` sees (``posix._exit``, ``os.execv``, a signal, a hang, a write to file descriptor 1) is seen by
the parent, with the same exit 2.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError, Problem, clip
from dbx_ai_infra.policies.rule import Rule, View
from dbx_ai_infra.policies.ruleset import _BY_NAME, ALL_RULES, STACK_RULES, TEAM_RULES

_REAL_EXIT = os._exit
#: How deep a rule is running now (a team rule's check, or a module loading).
_DEPTH = [0]


FIX = ("fix the rule: its check takes (view, config) and returns a list of messages, [] when the resource passes, "
       "and never exits (README: your own rules).")


class TeamRuleFailure(InputError):
    """A team rule that failed: ``where`` (its file), ``rule`` (its name, "" while loading), what went wrong, and the
    resource it was judging once the evaluation knows it (`on`). Invalid input: exit 2."""

    def __init__(self, where: str, rule: str, what: str, resource: str = "") -> None:
        self.where, self.rule, self.what, self.resource = where, rule, what, resource
        field = f"RULE {rule}" if rule else ""
        super().__init__(where, [Problem(field, f"{what}{f' (on {resource})' if resource else ''}.", FIX)])

    def on(self, resource: str) -> TeamRuleFailure:
        """The same failure, naming the resource the rule was judging."""
        return TeamRuleFailure(self.where, self.rule, self.what, resource)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.where, self.rule, self.what, self.resource))


class _Exited(BaseException):
    """``os._exit`` called by a team rule: raised in its place (a BaseException, so a rule's ``except Exception``
    cannot swallow it)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _intercepted_exit(code: int) -> None:
    if _DEPTH[0]:
        raise _Exited(code)
    _REAL_EXIT(code)


@contextlib.contextmanager
def running(where: str, rule: str) -> Iterator[None]:
    """Run team code: its prints to stderr, its exits and errors as `TeamRuleFailure`."""
    os._exit = _intercepted_exit  # type: ignore[assignment]  # restored below
    _DEPTH[0] += 1
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    except TeamRuleFailure:
        raise
    except _Exited as exited:
        raise TeamRuleFailure(where, rule, f"called os._exit({exited.code}), which would end the gate") from None
    except SystemExit as exited:
        raise TeamRuleFailure(where, rule, f"called sys.exit({exited.code!r}) (or exit()), which would end the "
                                           f"gate") from None
    except RecursionError:
        raise TeamRuleFailure(where, rule, "recursed without end") from None
    except BaseException as exc:  # noqa: BLE001 - any failure of the team's code is its own, named (its own
        # process: a KeyboardInterrupt here is one the rule raised, Ctrl-C goes to the process that reports)
        first = (str(exc).splitlines() or [""])[0]
        raise TeamRuleFailure(where, rule, f"raised {type(exc).__name__}: {clip(first)}") from None
    finally:
        _DEPTH[0] -= 1
        if not _DEPTH[0]:
            os._exit = _REAL_EXIT


def _messages(value: Any) -> list[str] | None:
    """A check's return as a list of strings; None when it is not one."""
    if isinstance(value, (list, tuple)) and all(isinstance(m, str) for m in value):
        return list(value)
    return None


def guarded(rule: Rule, where: str) -> Rule:
    """``rule`` with its check run inside `running`, its return held to a list of strings."""
    check = rule.check

    def guarded_check(view: View, config: Mapping[str, Any]) -> list[str]:
        with running(where, rule.name):
            returned = check(view, config)
        messages = _messages(returned)
        if messages is None:
            kind = "None" if returned is None else type(returned).__name__
            raise TeamRuleFailure(where, rule.name, f"returned {kind}, not a list of messages (strings); return [] "
                                                    f"when the resource passes")
        return messages

    return dataclasses.replace(rule, check=guarded_check)


def load(exec_module: Callable[[], None], where: str) -> None:
    """Run a team module's code (its import) inside `running`."""
    with running(where, ""):
        exec_module()


# --------------------------------------------------------------------------------------------------------------------
# Loading a team's rules (``--rules DIR``)
# --------------------------------------------------------------------------------------------------------------------

def load_in_process(directory: str, loading: Callable[[str], None] = lambda path: None,
                    loaded: Callable[[str], None] = lambda path: None) -> list[Rule]:
    """A team's rule modules loaded in this process (`dbx_ai_infra.policies.team_worker`, the rules' own process;
    elsewhere, `dbx_ai_infra.policies.team_process.load_team_rules`): every ``*.py`` in ``directory`` (sorted), each
    defining ``RULE``, a `dbx_ai_infra.policies.rule.Rule` written against the documented API. A module that does not
    load, has no ``RULE``, or reuses a rule name is `InputError` naming the file and the fix. ``loading`` and ``loaded``
    are called with each module's path before and after it runs."""
    root = Path(directory)
    if not root.is_dir():
        raise InputError.single(directory, "--rules", "is not a directory.", "pass the directory of rule modules.")
    rules: list[Rule] = []
    fix = ("define RULE = dbx_ai_infra.policies.rule.Rule(name=..., check=..., ...) in the module (README: your own "
           "rules).")
    for path in sorted(root.glob("*.py")):
        if path.name.startswith("_"):
            continue
        loading(str(path))
        rule = _load_module(path, fix)
        loaded(str(path))
        _check_team_rule(rule, str(path), rules)
        rules.append(guarded(rule, str(path)))
    if not rules:
        raise InputError.single(directory, "--rules", "holds no rule module (*.py defining RULE).", fix)
    return rules


def _check_team_rule(rule: Rule, path: str, loaded: list[Rule]) -> None:
    """A team's rule judges resources (a stack rule is built in: the pipeline, ``cost`` and the pack build its
    stack's view), under a name no other rule has."""
    if rule.scope not in ("resource", "plan"):
        raise InputError.single(path, "RULE.scope", f"is {rule.scope!r}: a team's rule judges resources.",
                                "give scope 'resource' (or 'plan') and resource_types.")
    built_in = {r.name for r in (*ALL_RULES, *STACK_RULES)}
    if rule.name in built_in or rule.name in {r.name for r in loaded}:
        raise InputError.single(path, "RULE.name", f"{rule.name!r} is a rule already.",
                                "give the rule a name of its own.")


def _load_module(path: Path, fix: str) -> Rule:
    """One team module run, and its ``RULE``."""
    spec = importlib.util.spec_from_file_location(f"stackplan_team_rules.{path.stem}", path)
    if spec is None or spec.loader is None:
        raise InputError.single(str(path), "", "is not a Python module.", fix)
    module = importlib.util.module_from_spec(spec)
    # listed while it runs, as an import lists it: a typed ``Thresholds`` model finds its module's names there
    sys.modules[spec.name] = module
    try:  # its prints to stderr, its exits caught (team.running)
        load(functools.partial(spec.loader.exec_module, module), str(path))
    except TeamRuleFailure as failed:
        sys.modules.pop(spec.name, None)
        what = failed.what.removeprefix("raised ")  # an exception by its name; an exit as what it called
        raise InputError.single(str(path), "", f"does not load: {what if what != failed.what else 'it ' + what}",
                                "fix the module (it runs as Python: the rules are code you trust).") from None
    rule = getattr(module, "RULE", None)
    if not isinstance(rule, Rule):
        raise InputError.single(str(path), "RULE", "is missing or not a dbx_ai_infra.policies.rule.Rule.", fix)
    return rule


def use_team_rules(rules: Iterable[Rule]) -> None:
    """Judge these rules too, in this process (names, levels, policy configs, reports and exceptions take them)."""
    for rule in rules:  # a rule loaded again (the same directory twice in one process) replaces its first load
        TEAM_RULES[:] = [r for r in TEAM_RULES if r.name != rule.name]
        TEAM_RULES.append(rule)
        _BY_NAME[rule.name] = rule
