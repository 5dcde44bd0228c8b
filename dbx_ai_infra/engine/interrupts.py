"""Ctrl-C and SIGTERM: at any moment, one line on stderr, no partial output, exit 130.

Outside the Pulumi runtime a signal raises KeyboardInterrupt, which the CLI turns into that line and exit code after
the code it interrupts has unwound. Inside it, an exception cannot be trusted to arrive: Pulumi's runtime catches
BaseException in places (``pulumi.runtime.resource._get_source_position_for_frame`` swallows it, so the run went on
and exited 0), and an RPC task it interrupts never completes, so ``wait_for_rpcs`` waits for it for ever (a run hung
29 minutes in ``select``); DuckDB turns it into its own "Query interrupted" error. So while a command runs
(`exit_on_signal`, around each command in ``dbx_ai_infra.cli.cli``), a signal ends the process from the handler itself:
child processes asked to end (`end_children`), partial outputs and scratch directories removed (`PARTIAL`,
`scratch_dir`), the line written (`line_to`), ``os._exit``.

This module is imported before anything heavy (``stackplan.__main__``) and imports only the exit codes, so a signal
during start-up finds its handler installed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from dbx_ai_infra.engine.exits import EXIT_INTERRUPTED

#: What an interrupted run prints, its only line on stderr.
MESSAGE = "interrupted: nothing was written."

#: Temporary files being written and scratch directories in use, removed when a run is interrupted
#: (`dbx_ai_infra.engine.output` adds and discards its files; `scratch_dir` its directories).
PARTIAL: set[str] = set()
_hard = False


def cleanup_partial_outputs() -> None:
    """Remove the temporary files of writes still under way, and the scratch directories."""
    for tmp in list(PARTIAL):
        if os.path.isdir(tmp) and not os.path.islink(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                Path(tmp).unlink(missing_ok=True)
        PARTIAL.discard(tmp)


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A temporary directory, removed afterwards, and also when the run is interrupted inside."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        PARTIAL.add(tmp)
        try:
            yield Path(tmp)
        finally:
            PARTIAL.discard(tmp)


#: Where the interrupted line goes: file descriptor 2, or the copy of it kept while 2 points elsewhere
#: (`line_to`: a JVM's log as the Spark session starts).
_LINE_FD = [2]


@contextlib.contextmanager
def line_to(fd: int) -> Iterator[None]:
    """Inside, an interrupted run writes its line to ``fd`` (the user's stderr, kept apart while file descriptor 2
    points at a log a child process inherits)."""
    previous, _LINE_FD[0] = _LINE_FD[0], fd
    try:
        yield
    finally:
        _LINE_FD[0] = previous


def end_children() -> None:
    """Ask each child process of this one to end (SIGTERM): the JVM ``advise --engine spark`` starts ignores SIGINT
    (pyspark starts it so) and ends at its stdin's end only once its gateway is up; interrupted while it started, it
    lived on for good (its gateway thread waiting for a connection that never came). Linux lists children in
    /proc; elsewhere none are found and a child ends at its stdin's end."""
    me = os.getpid()
    try:
        entries = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:  # "pid (comm) state ppid ...", comm may hold ") "
                parent = stat.read().rsplit(b")", 1)[-1].split()[1]
            if int(parent) == me:
                os.kill(int(entry), signal.SIGTERM)
        except (OSError, IndexError, ValueError):
            continue


def exit_now() -> None:
    """End the process at once as an interrupted run (callable from a signal handler: no import, no buffered I/O);
    the processes it started are asked to end (`end_children`)."""
    end_children()
    cleanup_partial_outputs()
    with contextlib.suppress(OSError):
        os.write(_LINE_FD[0], f"{MESSAGE}\n".encode())
    os._exit(EXIT_INTERRUPTED)


#: Set once a signal has come: a library that turns the interrupt into its own error (py4j, when the JVM's side of
#: a call breaks) is read as the interrupt it is (`signalled`).
_SIGNALLED = [False]


def signalled() -> bool:
    """True once SIGINT or SIGTERM has come in this process."""
    return _SIGNALLED[0]


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _SIGNALLED[0] = True
    if _hard:
        exit_now()
    raise KeyboardInterrupt  # SIGTERM ends the run like Ctrl-C


def install() -> None:
    """Handle SIGINT and SIGTERM (a SIGINT the parent ignores, as in a background job, stays ignored)."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


@contextlib.contextmanager
def exit_on_signal() -> Iterator[None]:
    """While inside, a signal ends the process from its handler (`exit_now`) instead of raising."""
    global _hard
    previous, _hard = _hard, True
    try:
        yield
    finally:
        _hard = previous
