"""What a run makes of the data files we ship (the node catalog, the serving and runtime tables), kept between runs.

Reading the node catalog is parsing 40 KB of YAML, validating it with pydantic models (built for it at their first
use) and reading 76 KB of JSON: about 35 ms of every command that judges or prices a GPU node type, for a result that
changes only when the files or the code that reads them change. `kept` keeps that result (a pickle, beside the
bytecode in ``__pycache__``) under a key of the files' bytes and the reading code's source: any change to one of
them reads afresh, as does a cache that is missing, damaged or of another shape. As with bytecode, nothing is
written where Python writes no bytecode (``PYTHONDONTWRITEBYTECODE``, a read-only install); the run then reads the
files as it always did. A file a user gives (``--catalog FILE``) is never kept: only the packaged files are.
"""

from __future__ import annotations

import os
import pickle
import sys
import zlib
from collections.abc import Callable, Sequence
from typing import TypeVar

from dbx_ai_infra import write_whole

T = TypeVar("T")

#: The first bytes of a kept file; a file of another format is read afresh.
_MAGIC = b"dbx-kept-1\n"


def kept_path(name: str, directory: str) -> str:
    """Where `kept` keeps ``name`` of the files in ``directory``: its ``__pycache__`` (under ``sys.pycache_prefix``
    when one is set, as bytecode is), tagged with the interpreter as bytecode is."""
    folder = os.path.join(os.path.abspath(directory), "__pycache__")
    if sys.pycache_prefix:
        folder = os.path.join(sys.pycache_prefix, os.path.abspath(directory).lstrip(os.sep), "__pycache__")
    return os.path.join(folder, f"{name}.{sys.implementation.cache_tag}.kept")


def _key(files: Sequence[str]) -> bytes:
    parts = []
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        parts.append(b"%d:%d:%d;" % (len(path), len(data), zlib.crc32(data)))
    return b"".join(parts)


def kept(name: str, files: Sequence[str], build: Callable[[], T]) -> T:
    """``build()``, kept as ``name`` beside ``files[0]`` for the next run while every one of ``files`` (the data
    files it reads and the modules that read them) is byte for byte the same. An error of ``build`` is raised and
    nothing is kept; a file of ``files`` that cannot be read is left to ``build`` to report."""
    try:
        key = _key(files)
    except OSError:
        return build()
    path = kept_path(name, os.path.dirname(files[0]))
    header = _MAGIC + b"%d;" % len(key) + key
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if data.startswith(header):
            return pickle.loads(data[len(header):])  # noqa: S301 - written by this module, beside our bytecode
    except Exception:  # noqa: BLE001 - missing, damaged or of an older shape: read afresh
        pass
    value = build()
    if not sys.dont_write_bytecode:
        try:
            write_whole(path, header + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        except (pickle.PicklingError, TypeError, AttributeError):  # a value that does not pickle: not kept
            pass
    return value
