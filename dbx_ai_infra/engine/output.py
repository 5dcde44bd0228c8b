"""Writing results: to stdout, to a character device or FIFO directly, or to a regular file atomically.

A regular file is written to a temporary file beside it and renamed into place, so a reader never sees half a
report and an interrupted run leaves the old file as it was. The new file gets the mode the user's umask gives a
new file, or the mode of the file it replaces. Anything else is refused as invalid input (exit 2): an atomic rename
over ``/dev/null`` as root would replace the device node with a regular file.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.engine.crash import stdout_problem
from dbx_ai_infra.engine.interrupts import PARTIAL


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _inside(path: Path, directory: Path) -> bool:
    """Whether ``path`` (which may not exist yet) lies under ``directory``, links resolved."""
    try:
        return path.resolve().is_relative_to(directory.resolve())
    except (OSError, RuntimeError):  # a link loop: the other checks say what is wrong
        return False


def out_dir(directory: str, flag: str = "--out") -> Path:
    """A directory the run writes files into (created by the caller when it writes, with `make_dir`): `InputError`
    when the path is empty, a dangling symbolic link, or exists and is not a directory, before any work."""
    if directory.strip() == "":
        raise InputError.single("", flag, "is empty.", f"pass a directory for {flag}.")
    path = Path(directory)
    if path.is_symlink() and not path.exists():
        raise InputError.single(directory, flag, "is a symbolic link to nothing.",
                                f"pass a directory for {flag}, or make the link point at one.")
    if path.exists() and not path.is_dir():
        raise InputError.single(directory, flag, "exists and is not a directory.", f"pass a directory for {flag}.")
    return path


def make_dir(path: Path, flag: str = "--out") -> None:
    """Create an output directory (and its parents); `InputError` naming it when the system refuses."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError.single(str(path), flag, f"cannot be created ({exc.strerror or type(exc).__name__}).",
                                f"pass a directory you can write for {flag}.") from None


#: The flags that name something a command writes.
OUTPUT_FLAGS = ("out", "write_stack", "write_baseline", "emit_sql")


def same_outputs(args: object) -> str | None:
    """Why two of a run's outputs are one path (``advise --write-stack x.yaml --out x.yaml`` would write the report
    over the edited stack), or None. Checked before any work."""
    given = [(f"--{flag.replace('_', '-')}", str(value)) for flag in OUTPUT_FLAGS
             if (value := getattr(args, flag, None)) not in (None, "", "-")]
    seen: dict[str, str] = {}
    for flag, value in given:
        key = os.path.normpath(os.path.abspath(value))
        if key in seen:
            return (f"{seen[key]} and {flag} name the same path ({value}): one output would replace the other. Fix: "
                    f"give each its own path.")
        seen[key] = flag
    return None


def check_out(out: str, inputs: Iterable[str | None] = (), flag: str = "--out",
              reads: Mapping[str, tuple[str, ...]] | None = None) -> None:
    """Refuse an ``--out`` that would damage something before any work is done: an input file of the run, a path
    inside a directory of inputs that its reader would read (``reads``: a directory's name endings, ``.tf``; a
    directory not listed there is read whole), a directory, a socket or block device, a directory that does not
    exist, an empty path."""
    if out == "":
        raise InputError.single("", flag, "is empty.", "pass a file path, or - for standard output.")
    if out == "-":
        return
    path = Path(out)
    for given in inputs:
        if given:
            _not_an_input(out, given, flag, (reads or {}).get(given))
    if path.exists() or path.is_symlink():
        _writable_kind(out, flag)
    else:
        directory = path.parent if str(path.parent) else Path(".")
        if not directory.is_dir():
            raise InputError.single(out, flag, f"directory {directory} does not exist.",
                                    f"create it or choose another {flag}.")


def _not_an_input(out: str, given: str, flag: str, endings: tuple[str, ...] | None) -> None:
    """Refuse ``out`` when it is the input ``given``, or inside the directory ``given`` where its reader would read
    it (``endings``: the name endings it reads there; None: everything)."""
    path = Path(out)
    if Path(given).exists() and path.exists() and os.path.samefile(given, path):
        raise InputError.single(out, flag, f"is an input of this run ({given}); writing there would replace it.",
                                f"choose another {flag}.")
    if Path(given).is_dir() and _inside(path, Path(given)) and \
            (endings is None or path.name.lower().endswith(endings)):
        # the report would be read as one of the inputs next time
        read = f"its {', '.join(endings)} files" if endings is not None else "everything in it"
        raise InputError.single(out, flag, f"is inside {given}, a directory this run reads ({read}); the next "
                                f"run would read the report as one of its inputs.",
                                "write the report outside that directory, or under a name it does not read.")


def _writable_kind(out: str, flag: str) -> None:
    """Refuse an existing ``out`` that is not a regular file, a character device or a FIFO (or cannot be read)."""
    path = Path(out)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise InputError.single(out, flag, f"cannot be read ({exc.strerror}).", f"choose another {flag}.") from None
    if stat.S_ISDIR(mode):
        raise InputError.single(out, flag, "is a directory.", "pass a file path inside it.")
    if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        raise InputError.single(out, flag, "is neither a regular file, a character device nor a FIFO.",
                                "choose a regular file.")


def stdout_error(exc: OSError) -> InputError:
    """Standard output that cannot take the report (exit 2, never 1 and never a traceback; `stdout_problem`)."""
    return InputError.single("standard output", "", *stdout_problem(exc))


def write_stdout(data: str) -> None:
    """``data`` to standard output, flushed: a failure is `stdout_error` here, not at the process' end."""
    try:
        sys.stdout.write(data)
        sys.stdout.flush()
    except OSError as exc:
        raise stdout_error(exc) from None


def write_text(text: str, out: str | None, inputs: Iterable[str | None] = (),
               reads: Mapping[str, tuple[str, ...]] | None = None) -> None:
    """``text`` (with a final newline) to stdout (``None`` or ``-``), a device or FIFO, or a file atomically
    (``inputs`` and ``reads``: as `check_out` takes them)."""
    data = text if text.endswith("\n") else text + "\n"
    if out is None or out == "-":
        write_stdout(data)
        return
    check_out(out, inputs, reads=reads)
    path = Path(out)
    if path.exists():
        mode = path.stat().st_mode
        if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):  # /dev/null, /dev/stdout, a pipe: write, never replace
            try:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(data)
            except OSError as exc:
                raise InputError.single(out, "--out", f"cannot write ({exc.strerror}).",
                                        "choose a writable --out.") from None
            return
        new_mode = stat.S_IMODE(mode)
    else:
        new_mode = 0o666 & ~_umask()
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError.single(out, "--out", f"cannot write in {directory} ({exc.strerror}).",
                                "choose a writable --out.") from None
    PARTIAL.add(tmp)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
        os.chmod(tmp, new_mode)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError.single(out, "--out", f"cannot write ({exc.strerror}).", "choose a writable --out.") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        PARTIAL.discard(tmp)
