"""Writing results: to stdout, or to a file atomically (a temporary file renamed into place)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from dbxtypes.errors import InputError


def write_text(text: str, out: str | None) -> None:
    if out is None or out == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    path = Path(out)
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise InputError.single(out, "--out", f"directory {directory} does not exist.",
                                "create it or choose another --out.")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError.single(out, "--out", f"cannot write ({exc.strerror}).", "choose a writable --out.") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
