"""A team's own rules (``--rules DIR``) are code the user trusts, but a broken one never passes a gate.

Each module is loaded, and each of its rule's checks runs, inside `running`: what it prints goes to stderr (never
into ``--json`` on stdout); ``sys.exit()``, ``exit()`` and ``os._exit()`` do not end the process (``os._exit`` is
intercepted while a team rule runs, since no ``except`` could catch it); and any failure, a wrong signature, or a
return that is not a list of strings (``None`` included) is `TeamRuleFailure`, which the evaluation turns into exit 2
naming the rule, its file and the resource.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from dbxtypes.errors import InputError, Problem, clip
from policies.rule import Rule, View

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
    except Exception as exc:  # noqa: BLE001 - any failure of the team's code is its own, named
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
