"""Audit baselines: adopt the rules on a workspace (or a stack) that already has findings, and fail only on new ones.

``check --write-baseline FILE`` records a fingerprint per finding of today; ``check --baseline FILE`` marks each
finding whose fingerprint is there as baselined (reported, fails nothing) and each other as new, and lists the
baselined findings that are gone as fixed. A fingerprint is the rule, the object's identity (a stack resource's
URN; in a workspace export the object's id, or its name where it has none) and the field the finding is about (a
job cluster's key, ``jobClusters[train].newCluster``): not the message (its figures change), the file or the order
the export lists objects in.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dbxtypes.errors import InputError
from dbxtypes.plan import Violation
from stackplan.inputs import read_json

VERSION = 1
#: A message that starts with the field it is about: ``jobClusters[train].newCluster: ...``.
_FIELD = re.compile(r"^([A-Za-z_][\w.\[\]-]*):\s")


def field_of(message: str) -> str:
    """The field a finding's message names first, or "" (the resource as a whole)."""
    found = _FIELD.match(message)
    return found.group(1) if found else ""


def fingerprint(v: Violation) -> str:
    return hashlib.sha256(f"{v.policy}\0{v.urn}\0{field_of(v.message)}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Entry:
    fingerprint: str
    policy: str
    resource: str
    field: str


def document(violations: Iterable[Violation]) -> str:
    """The baseline file of these findings (sorted: the same findings write the same file)."""
    entries = {fingerprint(v): {"fingerprint": fingerprint(v), "policy": v.policy, "resource": v.resource_name,
                                "field": field_of(v.message)} for v in violations}
    doc = {"version": VERSION, "written": datetime.now(UTC).date().isoformat(),
           "findings": [entries[k] for k in sorted(entries)]}
    return json.dumps(doc, indent=2, sort_keys=True)


def read(path: str) -> dict[str, Entry]:
    """A baseline file: fingerprint -> entry; `InputError` naming the file, the field and the fix."""
    doc = read_json(path, "baseline", fix_missing="write one with `check ... --write-baseline FILE`.")
    fix = "pass a file written by `check --write-baseline`."
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("findings"), list):
        raise InputError.single(path, "version", f"is not a baseline of version {VERSION}.", fix)
    out: dict[str, Entry] = {}
    for i, item in enumerate(doc["findings"]):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in
                                                 ("fingerprint", "policy", "resource", "field")):
            raise InputError.single(path, f"findings[{i}]", "needs fingerprint, policy, resource and field.", fix)
        out[item["fingerprint"]] = Entry(item["fingerprint"], item["policy"], item["resource"], item["field"])
    return out


def apply(violations: Sequence[Violation], baseline: dict[str, Entry]) -> tuple[list[Violation], list[Entry]]:
    """The findings marked ``baseline: unchanged`` (in the baseline) or ``new``, and the baseline's entries no
    finding matches any more (fixed)."""
    seen: set[str] = set()
    marked = []
    for v in violations:
        fp = fingerprint(v)
        seen.add(fp)
        marked.append(v.model_copy(update={"baseline": "unchanged" if fp in baseline else "new"}))
    return marked, [e for fp, e in baseline.items() if fp not in seen]


def fixed_lines(fixed: Sequence[Entry], path: str) -> list[str]:
    return [f"baseline {path}: fixed since: {e.policy} on {e.resource}" + (f" ({e.field})" if e.field else "")
            for e in fixed]


def summary(violations: Sequence[Violation], fixed: Sequence[Entry]) -> dict[str, Any]:
    return {"new": sum(v.baseline == "new" for v in violations),
            "unchanged": sum(v.baseline == "unchanged" for v in violations), "fixed": len(fixed)}
