"""The process a team's rules (``--rules DIR``) run in: started by `dbx_ai_infra.policies.team_process`, never by hand.

It loads the team's modules (`dbx_ai_infra.policies.team.load_in_process`), says what rules they define, then judges
batches of calls. What a rule writes, to ``sys.stdout`` or to file descriptors 1 and 2, lands in a file its parent gave
it as both, and goes back with the call's answer (the parent shows it as the rule's own); what a rule does to this
process (``posix._exit``, ``os.execv``, a signal, a hang) ends only this process, which the parent reads as the rule's
failure. The protocol (`dbx_ai_infra.policies.team_process`): frames of a 4-byte big-endian length and a payload;
requests are pickled by the parent (which this process trusts), answers are JSON (which the parent trusts no further
than JSON).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import pickle
import signal
import struct
import sys
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from dbx_ai_infra.dbxtypes.errors import InputError, Problem
from dbx_ai_infra.policies.team import TeamRuleFailure, load_in_process

_HEADER = struct.Struct(">I")
#: prctl(2)'s PR_SET_PDEATHSIG: the kernel sends this process SIGKILL when its parent ends (Linux).
_PR_SET_PDEATHSIG = 1


def read_frame(fd: int) -> bytes | None:
    """One frame from ``fd`` (blocking), or None at the end of the stream."""
    head = _read_exactly(fd, _HEADER.size)
    if head is None:
        return None
    return _read_exactly(fd, _HEADER.unpack(head)[0])


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def write_frame(fd: int, payload: bytes) -> None:
    """One frame to ``fd``."""
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data):]


def _die_with_parent(parent: int) -> None:
    """End with the parent, however it ends (an interrupted run leaves at once with ``os._exit``)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent:  # it ended before prctl took effect
        os._exit(0)


def _captured(fd: int = 2) -> str:
    """What was written to file descriptor ``fd`` since the last look (each is a file the parent gave: 2 the rule's
    output, shown as its own; 1 what it wrote around Python's streams, a failure); the file emptied."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    size = os.lseek(fd, 0, os.SEEK_CUR)
    if size <= 0:
        return ""
    data = os.pread(fd, size, 0)
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    return data.decode("utf-8", "replace")


def wrote_to_stdout(raw: str) -> str:
    """What a rule that wrote to file descriptor 1 did, in words."""
    return (f"wrote to standard output (file descriptor 1), where the report goes: {raw[:60]!r}; write to "
            f"sys.stderr or print() instead")


def _meta(rule: Any) -> dict[str, Any]:
    """What the parent needs of a rule to list, configure and report it (the check stays here)."""
    return {"name": rule.name, "description": rule.description, "enforcement": rule.enforcement,
            "resource_types": list(rule.resource_types), "remediation": rule.remediation, "severity": rule.severity,
            "thresholds": dict(rule.thresholds), "threshold_schema": {k: dict(v) for k, v in
                                                                       rule.threshold_schema.items()},
            "stack_fields": list(rule.stack_fields), "sources": list(rule.sources), "scope": rule.scope,
            "typed": rule.settings is not None, "reads": list(getattr(rule, "reads", ())),
            "takes": [kind.__name__ for kind in getattr(rule, "takes", ())]}


def _settings_problem(rule: Any, values: Mapping[str, Any]) -> str | None:
    """A policy config's values for a rule's typed settings checked against its `Thresholds` model here, where the
    model lives: the first error's message, or None."""
    if rule.settings is None:
        return None
    try:
        rule.settings.model_validate(dict(values))
    except ValidationError as exc:
        return str(exc.errors()[0]["msg"])
    return None


def _judge(calls: list[tuple[str, Any, Mapping[str, Any]]], rules: Mapping[str, Any], out: int) -> None:
    """Each call's answer as it is made (the parent learns which call a dead process was in); stops at a failure."""
    for name, view, thresholds in calls:
        try:
            rule = rules[name]
            messages = rule.check(view, rule.configured(thresholds))
        except TeamRuleFailure as failed:
            write_frame(out, json.dumps({"fail": failed.what, "out": _captured()}).encode())
            return
        raw = _captured(1)
        if raw:
            write_frame(out, json.dumps({"fail": wrote_to_stdout(raw), "out": _captured()}).encode())
            return
        write_frame(out, json.dumps({"ok": messages, "out": _captured()}).encode())


def _serve(requests: int, out: int, rules: Mapping[str, Any]) -> None:
    while (data := read_frame(requests)) is not None:
        try:
            op, body = pickle.loads(data)  # noqa: S301 - from the parent, which started this process
        except Exception as exc:  # noqa: BLE001 - ours, not the rule's: said as such
            write_frame(out, json.dumps({"internal": f"{type(exc).__name__}: {exc}"}).encode())
            continue
        if op == "check":
            _judge(body, rules, out)
        elif op == "settings":
            name, values = body
            write_frame(out, json.dumps({"problem": _settings_problem(rules[name], values)}).encode())


def main() -> None:
    """``python -c ... DIR PARENT_PID REQUEST_FD ANSWER_FD``: load, answer, and end when the parent closes."""
    directory, parent, requests, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent answers Ctrl-C; this process ends with it
    for fd in (requests, out):  # an os.execv by a rule closes the protocol: the parent sees the end of it
        os.set_inheritable(fd, False)
    sys.stdout = sys.stderr  # print() is the rule's output; file descriptor 1 is watched (`wrote_to_stdout`)
    def loading(path: str) -> None:
        write_frame(out, json.dumps({"loading": path, "out": _captured()}).encode())

    files: list[str] = []

    def loaded(path: str) -> None:
        files.append(path)
        raw = _captured(1)
        if raw:
            raise InputError(path, [Problem("", f"does not load: it {wrote_to_stdout(raw)}.",
                                            "fix the module (it runs as Python: the rules are code you trust).")])

    try:
        rules = load_in_process(directory, loading, loaded)
    except InputError as exc:
        problems = [[p.field, p.message, p.fix] for p in exc.problems]
        write_frame(out, json.dumps({"error": {"source": exc.source, "problems": problems},
                                     "out": _captured()}).encode())
        return
    write_frame(out, json.dumps({"rules": [{**_meta(r), "file": f} for r, f in zip(rules, files, strict=True)],
                                 "out": _captured()}).encode())
    _serve(requests, out, {r.name: r for r in rules})
