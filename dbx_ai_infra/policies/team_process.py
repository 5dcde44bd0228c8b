"""The process a team's rules run in, seen from the process that reports (`dbx_ai_infra.policies.team`, ``--rules
DIR``).

`start` begins one process per rule directory (`dbx_ai_infra.policies.team_worker`), which loads the modules and says
what rules they define; the rules this side holds are those rules with a `RemoteCheck` for a check. The evaluators
(`dbx_ai_infra.policies.evaluate`) send the calls of many resources in one message (`TeamBatch`), so a run with team
rules pays one process start and a few round trips, not one per call (bench/RESULTS.md, "team rules"); a call outside a
batch (the CrossGuard pack, one resource at a time) is a batch of one.

Whatever a rule does there, this side sees it and names it: an answer that does not come within ``timeout`` seconds
(the process is killed), the end of the process (``posix._exit``, ``os.execv``, a signal), a write to file
descriptor 1; each is `TeamRuleFailure`, exit 2 naming the rule, its file and the resource. The process is started in
a session of its own (Ctrl-C reaches only this process, which leaves at once) and ends with this one (prctl's parent
death signal, and the end of its request stream).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError, Problem
from dbx_ai_infra.policies.rule import VIEW_KINDS, Rule, View
from dbx_ai_infra.policies.ruleset import _BY_NAME, TEAM_RULES
from dbx_ai_infra.policies.team import TeamRuleFailure
from dbx_ai_infra.policies.team_worker import write_frame

#: Seconds a rule may take over one resource (``--rule-timeout``).
DEFAULT_TIMEOUT = 10.0
#: Seconds the process may take to start and load a module (an import of pydantic on a busy machine).
START_TIMEOUT = 60.0
_PROCESSES: list[TeamProcess] = []


class _Timeout(Exception):
    pass


def _mapping_proxy(items: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(items)


def _subclassed(cls: type, value: Any, state: dict[str, Any]) -> Any:
    made = type(value).__new__(cls, value)
    for key, item in state.items():
        setattr(made, key, item)
    return made


class _Pickler(pickle.Pickler):
    """Requests, pickled: the views hold read-only mappings, and values of str's kind with attributes of their own
    (`dbx_ai_infra.dbxtypes.vocabulary.SelectedValue`, whose ``__new__`` takes other arguments), which pickle does not
    take as
    they are."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, MappingProxyType):
            return _mapping_proxy, (dict(obj),)
        kind = type(obj)
        if kind not in (str, int, float) and isinstance(obj, (str, int, float)) and hasattr(obj, "__dict__"):
            base = next(b for b in (str, int, float) if isinstance(obj, b))
            return _subclassed, (kind, base(obj), dict(vars(obj)))
        return NotImplemented


def _dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


class TeamProcess:
    """One directory's rules, running in their own process."""

    def __init__(self, directory: str, timeout: float) -> None:
        self.directory, self.timeout = directory, timeout
        self._stdout, self._stderr = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        requests_in, self._requests = os.pipe()
        self._answers, answers_out = os.pipe()
        code = "from dbx_ai_infra.policies.team_worker import main; main()"
        self._proc = subprocess.Popen(  # noqa: S603 - this interpreter, our worker module
            [sys.executable, "-P", "-c", code, directory, str(os.getpid()), str(requests_in), str(answers_out)],
            stdin=subprocess.DEVNULL, stdout=self._stdout, stderr=self._stderr,
            pass_fds=(requests_in, answers_out), start_new_session=True)
        os.close(requests_in)
        os.close(answers_out)
        self._buffer = bytearray()
        #: The failure that ended the process, naming the resource: what any later call gets (a caller that reads
        #: its input again after an `InputError` asks the same rules again).
        self.broken: TeamRuleFailure | None = None
        _PROCESSES.append(self)

    # -- the protocol -------------------------------------------------------------------------------------------

    def _send(self, op: str, body: Any) -> bool:
        """A request; False when the process is gone."""
        try:
            write_frame(self._requests, _dumps((op, body)))
        except OSError:
            return False
        return True

    def _answer(self, timeout: float) -> dict[str, Any] | None:
        """The next answer, None at the end of the stream (the process ended); `_Timeout` after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self._buffer) >= 4:
                size = int.from_bytes(self._buffer[:4], "big")
                if len(self._buffer) >= 4 + size:
                    payload = bytes(self._buffer[4:4 + size])
                    del self._buffer[:4 + size]
                    try:
                        answer = json.loads(payload)
                    except ValueError:
                        answer = None
                    return answer if isinstance(answer, dict) else {"fail": "wrote over the channel its process "
                                                                            "answers on"}
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Timeout
            if not select.select([self._answers], [], [], left)[0]:
                continue
            chunk = os.read(self._answers, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk

    def _show(self, output: Any, who: str) -> None:
        """What the rule wrote, on stderr, as its own."""
        if isinstance(output, str) and output:
            for line in output.rstrip("\n").splitlines():
                print(f"{who}: {line}", file=sys.stderr)

    def _ended(self) -> str:
        """How the process ended, in words (it is killed when it lives on after closing its end: os.execv)."""
        try:
            code = self._proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.stop()
            return "replaced the process it runs in (os.execv)"
        left = self._leftover()
        said = f"; its last words: {left!r}" if left else ""
        if code < 0:
            return f"ended the process it runs in (signal {signal.Signals(-code).name}){said}"
        return f"ended the process it runs in (exit code {code}: posix._exit, os.execv or a crash){said}"

    def _leftover(self) -> str:
        """The last line the process wrote on stderr before it ended."""
        self._stderr.seek(0)
        lines = self._stderr.read()[-4000:].decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:120] if lines else ""

    def stop(self) -> None:
        """End the process (its pipes closed; killed if it does not go)."""
        if self in _PROCESSES:
            _PROCESSES.remove(self)
        for fd in (self._requests, self._answers):
            try:
                os.close(fd)
            except OSError:
                pass
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._stdout.close()
        self._stderr.close()

    # -- what the rules do --------------------------------------------------------------------------------------

    def load(self) -> list[dict[str, Any]]:
        """The rules the modules define (their records), or `InputError` naming the module that failed."""
        where, fix = self.directory, "fix the module (it runs as Python: the rules are code you trust)."
        while True:
            try:
                answer = self._answer(max(self.timeout, START_TIMEOUT))
            except _Timeout:
                self.stop()
                raise InputError.single(where, "", f"does not load within {max(self.timeout, START_TIMEOUT):g} s "
                                                   "(it hangs).", fix) from None
            if answer is None:
                how = self._ended()
                self.stop()
                raise InputError.single(where, "", f"does not load: it {how}.", fix)
            self._show(answer.get("out"), where)
            if "loading" in answer:
                where = str(answer["loading"])
            elif "error" in answer:
                self.stop()
                error = answer["error"]
                raise InputError(str(error["source"]), [Problem(*p) for p in error["problems"]])
            else:
                return list(answer["rules"])

    def check(self, calls: list[tuple[str, str, View, Mapping[str, Any]]]) -> Iterator[list[str]]:
        """Each call's messages, in order: ``(rule, file, view, thresholds)``; `TeamRuleFailure` for the call that
        failed (the caller knows which: the one it was waiting for)."""
        alive = self._send("check", [(name, view, dict(thresholds)) for name, _, view, thresholds in calls])
        for name, where, _, _ in calls:
            try:
                answer = self._answer(self.timeout) if alive else None
            except _Timeout:
                self.stop()
                raise TeamRuleFailure(where, name, f"did not answer within {self.timeout:g} s (it hangs, or needs "
                                                   "more time: --rule-timeout)") from None
            if answer is None:
                how = self._ended()
                self.stop()
                raise TeamRuleFailure(where, name, f"{how}, which would end the gate")
            if "internal" in answer:  # not the rule's failure: the request did not reach it
                raise RuntimeError(f"the team rules' process could not read what to judge: {answer['internal']}")
            self._show(answer.get("out"), f"rule {name} ({where})")
            if "fail" in answer:
                raise TeamRuleFailure(where, name, str(answer["fail"]))
            messages = answer.get("ok")
            if not isinstance(messages, list) or not all(isinstance(m, str) for m in messages):
                raise TeamRuleFailure(where, name, "answered what is not a list of messages")
            yield messages

    def settings_problem(self, name: str, values: Mapping[str, Any]) -> str | None:
        """A policy config's values for the rule's typed settings, checked where its model lives."""
        if not self._send("settings", (name, dict(values))):
            return None
        try:
            answer = self._answer(self.timeout)
        except _Timeout:
            return None
        problem = (answer or {}).get("problem")
        return str(problem) if problem else None


@dataclass(frozen=True)
class RemoteCheck:
    """A team rule's check: a call into its process (`TeamBatch` sends many at once)."""

    process: TeamProcess
    name: str
    where: str

    def __call__(self, view: View, config: Mapping[str, Any]) -> list[str]:
        if self.process.broken is not None:
            raise self.process.broken
        return next(self.process.check([(self.name, self.where, view, config)]))


def _rule(process: TeamProcess, meta: Mapping[str, Any], where: str) -> Rule:
    settings_check = (lambda values: process.settings_problem(meta["name"], values)) if meta.get("typed") else None
    return Rule(name=meta["name"], description=meta["description"], enforcement=meta["enforcement"],
                resource_types=tuple(meta["resource_types"]), check=RemoteCheck(process, meta["name"], where),
                remediation=meta["remediation"], severity=meta["severity"],
                thresholds=MappingProxyType(dict(meta["thresholds"])),
                threshold_schema=MappingProxyType({k: MappingProxyType(v) for k, v in
                                                   meta["threshold_schema"].items()}),
                stack_fields=tuple(meta["stack_fields"]), sources=tuple(meta["sources"]), scope=meta["scope"],
                reads=tuple(meta.get("reads") or ()), settings_check=settings_check,
                takes=tuple(VIEW_KINDS[kind] for kind in meta.get("takes") or VIEW_KINDS))


def load_team_rules(directory: str, timeout: float | None = None) -> list[Rule]:
    """A team's rule modules (``--rules DIR``): every ``*.py`` in ``directory`` (sorted), each defining ``RULE``, a
    `dbx_ai_infra.policies.rule.Rule` written against the documented API. They are code the user trusts, but they run
    in a process of their own (`TeamProcess`): loading one runs it there. The rules returned are the team's, their
    checks calls into that process (``timeout``: the seconds a rule may take over one resource). A module that does not
    load, has no ``RULE``, or reuses a rule name is `InputError` naming the file and the fix."""
    if not Path(directory).is_dir():
        raise InputError.single(directory, "--rules", "is not a directory.", "pass the directory of rule modules.")
    process = TeamProcess(directory, DEFAULT_TIMEOUT if timeout is None else timeout)
    return [_rule(process, meta, str(meta["file"])) for meta in process.load()]


def forget_team_rules() -> None:
    """Judge the built-in rules only again (a process that loaded team rules and goes on: the tests); their
    processes end."""
    for process in list(_PROCESSES):
        process.stop()
    for rule in TEAM_RULES:
        _BY_NAME.pop(rule.name, None)
    TEAM_RULES.clear()


class TeamBatch:
    """Team-rule calls gathered over many resources and sent at once (`flush`, at the end or every ``size``
    calls): each call's messages go to ``target`` through ``make``, in the order the calls were added."""

    def __init__(self, size: int = 2000) -> None:
        self.size = size
        self._calls: list[tuple[RemoteCheck, View, Mapping[str, Any], str, Any]] = []

    def add(self, check: RemoteCheck, view: View, thresholds: Mapping[str, Any], resource: str, deliver: Any) -> None:
        """A call; ``deliver(messages)`` takes its messages once known."""
        self._calls.append((check, view, thresholds, resource, deliver))
        if len(self._calls) >= self.size:
            self.flush()

    def flush(self) -> None:
        calls, self._calls = self._calls, []
        by_process: dict[int, list[tuple[RemoteCheck, View, Mapping[str, Any], str, Any]]] = {}
        for call in calls:
            by_process.setdefault(id(call[0].process), []).append(call)
        answers: dict[int, list[str]] = {}
        for group in by_process.values():
            process = group[0][0].process
            if process.broken is not None:
                raise process.broken
            requests = [(c.name, c.where, view, thresholds) for c, view, thresholds, _, _ in group]
            done = 0
            try:
                for messages in process.check(requests):
                    answers[id(group[done])] = messages
                    done += 1
            except TeamRuleFailure as failed:  # the call it was waiting for: the resource it was judging
                process.broken = failed.on(group[done][3])
                raise process.broken from None
        for call in calls:  # in the order added: each resource's messages after its built-in rules', rule by rule
            call[4](answers[id(call)])
