"""The parse of Terraform files, cached by content and spread over the machine's cores.

python-hcl2 is most of the time of ``check --terraform`` on a large tree (issue 51, item 8: 25.0 s of a 26.4 s run
over 5,000 files), and a repository's files rarely change between two runs. So each file's parse is kept in the
user's cache directory, keyed by the SHA-256 of its bytes, its syntax and the parser's version:

- where: ``$STACKPLAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/dbx-ai-infra``, else ``~/.cache/dbx-ai-infra``, under
  ``tfparse/<parser version>/``; ``STACKPLAN_NO_CACHE=1`` (or ``--no-cache``) reads and writes none;
- safe against runs at the same time: an entry is written to a temporary file of the same directory and moved into
  place with ``os.replace`` (atomic), so a reader sees a whole entry or none; two runs writing the same entry write
  the same bytes;
- an entry that cannot be read or is not what this version wrote is ignored and the file parsed again; a cache
  directory that cannot be written is no error (nothing is kept).

The files not in the cache are first given to a quick reader in this process (`dbx_ai_infra.sources.hclfast`: plain
HCL, python-hcl2's own tree about ten times faster); those it declines are parsed by python-hcl2, in worker
processes when there are at least `PARALLEL_FROM` of them and more than one core (``concurrent.futures``;
``STACKPLAN_PARSE_WORKERS=N`` sets how many, ``1`` none), each worker a chunk of files; fewer are parsed in this
process, where starting workers would cost more than it saves.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

from dbx_ai_infra import installed_version, write_whole
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.engine.crash import CACHE_DIR_ENV as CACHE_DIR_ENV  # the parse cache is where `cache_root` says
from dbx_ai_infra.engine.crash import NO_CACHE_ENV as NO_CACHE_ENV  # the switch of every cache
from dbx_ai_infra.engine.crash import cache_root, caching

#: How many processes parse (``1``: this one alone); by default one per usable core.
WORKERS_ENV = "STACKPLAN_PARSE_WORKERS"
#: The fewest files not in the cache that are parsed in worker processes.
PARALLEL_FROM = 64
#: This module's own format of an entry: bump it when the shape of a parse changes.
FORMAT = 1

#: One file to parse: its bytes (the key), its syntax (``hcl``, ``json``, ``json-values``), its text, its path.
Job = tuple[bytes, str, str, str]
Parser = Callable[[str, str, str], dict[str, Any]]
#: A parser that reads some files fast (text, syntax) and returns None for the others.
Quick = Callable[[str, str], "dict[str, Any] | None"]


@cache
def parser_version() -> str:
    """What makes a parse differ: python-hcl2's and lark's versions, this format, the fast reader's revision
    (`dbx_ai_infra.sources.hclfast`), the Python version."""
    parts = [f"{package}-{installed_version(package) or 'none'}" for package in ("python-hcl2", "lark")]
    from dbx_ai_infra.sources.hclfast import REVISION  # noqa: PLC0415

    return "-".join([*parts, f"f{FORMAT}", f"r{REVISION}", f"py{sys.version_info[0]}.{sys.version_info[1]}"])


def cache_dir() -> Path | None:
    """Where entries are kept, or None when the cache is off."""
    if not caching():
        return None
    return cache_root() / "tfparse" / parser_version()


def _key(data: bytes, syntax: str) -> str:
    return hashlib.sha256(syntax.encode() + b"\0" + data).hexdigest()


def _entry(root: Path, key: str) -> Path:
    return root / key[:2] / f"{key}.json"


def load(root: Path, key: str) -> dict[str, Any] | None:
    """An entry, or None when it is not there or not readable as one (it is parsed again)."""
    try:
        entry = json.loads(_entry(root, key).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("doc"), dict):
        return None
    return entry["doc"]


def store(root: Path, key: str, doc: dict[str, Any]) -> None:
    """Write an entry whole or not at all (a temporary file moved into place); a failure keeps nothing."""
    try:
        data = json.dumps({"key": key, "doc": doc}, separators=(",", ":")).encode()
    except (TypeError, ValueError):  # a parse that is not JSON: not kept
        return
    write_whole(_entry(root, key), data)


def _parse_chunk(parse: Parser, chunk: Sequence[tuple[str, str, str]]) -> list[Any]:
    """A worker's files: each parse, or the invalid input's source and problems (an `InputError` does not pickle)."""
    out: list[Any] = []
    for text, syntax, name in chunk:
        try:
            out.append(parse(text, syntax, name))
        except InputError as exc:
            out.append(("error", exc.source, exc.problems))
    return out


def _workers() -> int:
    given = os.environ.get(WORKERS_ENV, "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _parse_all(parse: Parser, todo: Sequence[tuple[str, str, str]]) -> list[Any]:
    workers = min(_workers(), max(1, len(todo) // (PARALLEL_FROM // 2)))
    if len(todo) < PARALLEL_FROM or workers < 2:
        return _parse_chunk(parse, todo)
    size = -(-len(todo) // (workers * 4))
    chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return [doc for done in pool.map(_parse_chunk, [parse] * len(chunks), chunks) for doc in done]
    except (OSError, RuntimeError):  # no processes here (a sandbox): one process parses them all
        return _parse_chunk(parse, todo)


def parse_all(jobs: Sequence[Job], parse: Parser, quick: Quick | None = None) -> list[dict[str, Any]]:
    """Each job's parse, in order: from the cache where its bytes were parsed before, else parsed and kept:
    by ``quick`` in this process where it reads the file (it returns None where it does not), the others by
    ``parse`` (in workers when there are many). The first file, in order, that is not valid raises its
    `InputError`."""
    root = cache_dir()
    keys = [_key(data, syntax) for data, syntax, _, _ in jobs] if root is not None else []
    docs: list[Any] = [load(root, k) for k in keys] if root is not None else [None] * len(jobs)
    todo = [i for i, doc in enumerate(docs) if doc is None]
    if quick is not None:
        for i in todo:
            docs[i] = quick(jobs[i][2], jobs[i][1])
            if root is not None and docs[i] is not None:
                store(root, keys[i], docs[i])
        todo = [i for i in todo if docs[i] is None]
    for i, doc in zip(todo, _parse_all(parse, [(jobs[i][2], jobs[i][1], jobs[i][3]) for i in todo]), strict=True):
        docs[i] = doc
        if root is not None and not (isinstance(doc, tuple) and doc[0] == "error"):
            store(root, keys[i], doc)
    for doc in docs:
        if isinstance(doc, tuple) and doc[0] == "error":
            raise InputError(doc[1], doc[2])
    return docs
