"""What a run that cannot finish says. Standard output that cannot take the output (`stdout_problem`: exit 2). An
internal error (exit 3): one line on stderr, and its traceback in a file that line names, never on the
terminal. The file goes under the user's cache directory (`cache_root`, ``crashes/``), else the temporary directory.
``STACKPLAN_DEBUG=1`` lets the exception through instead (its traceback on stderr)."""

from __future__ import annotations

import datetime as dt
import os
import platform
import sys
import tempfile
import traceback
from pathlib import Path

#: Where the cache directory is when set (the Terraform parse cache, crash reports).
CACHE_DIR_ENV = "STACKPLAN_CACHE_DIR"


#: Set to anything but 0: the caches (Terraform parses, compiled SQL templates) are neither read nor written.
NO_CACHE_ENV = "STACKPLAN_NO_CACHE"


def caching() -> bool:
    """Whether the caches under `cache_root` are on (`NO_CACHE_ENV` unset or 0)."""
    return os.environ.get(NO_CACHE_ENV, "") in ("", "0")


def cache_root() -> Path:
    """The project's cache directory: ``$STACKPLAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/dbx-ai-infra``, else
    ``~/.cache/dbx-ai-infra`` (the XDG Base Directory specification: a relative ``XDG_CACHE_HOME`` is ignored)."""
    given = os.environ.get(CACHE_DIR_ENV)
    if given:
        return Path(given)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache") / "dbx-ai-infra"


def _report(exc: BaseException) -> str:
    return "".join([f"command: {' '.join(sys.argv)}\n", f"python: {sys.version.split()[0]} on {platform.platform()}\n",
                    f"time: {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}\n\n",
                    *traceback.format_exception(exc)])


def write_traceback(exc: BaseException) -> str:
    """Write ``exc``'s traceback to a new file; its path, or why no file could be written (the disk is full)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    name = f"stackplan-crash-{stamp}-{os.getpid()}.txt"
    why = ""
    for directory in (cache_root() / "crashes", Path(tempfile.gettempdir())):
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / name
            with open(path, "x", encoding="utf-8") as handle:
                handle.write(_report(exc))
            return f"the traceback is in {path}"
        except OSError as error:
            why = error.strerror or type(error).__name__
            try:
                (directory / name).unlink(missing_ok=True)  # a file cut short by a full disk is no report
            except OSError:
                pass
    return f"its traceback could not be written ({why})"


def internal_error_line(exc: BaseException) -> str:
    """The one line an internal error prints (its traceback written first, `write_traceback`)."""
    where = write_traceback(exc)
    return (f"error: internal error, not a policy result: unexpected {type(exc).__name__}: {exc}. {where}; "
            f"please include it in a bug report (STACKPLAN_DEBUG=1 shows it here).")


def stdout_problem(exc: OSError) -> tuple[str, str]:
    """What is wrong with standard output that cannot take the output, and the fix: its reader closed it (EPIPE,
    ``| head -1``), or the disk or device behind it is full (``> /dev/full``). (Here, not in
    `dbx_ai_infra.engine.output`: the
    entry point says it without importing the input errors' pydantic.)"""
    if isinstance(exc, BrokenPipeError):
        return ("was closed before the output was written whole (its reader stopped reading, as `| head` does).",
                "read the whole output, or write it to a file with --out FILE.")
    return (f"cannot be written ({exc.strerror or type(exc).__name__}): the output is incomplete.",
            "free space where standard output goes, or write the output elsewhere with --out FILE.")
