"""Audit baselines: adopt the rules on a workspace (or a stack) that already has findings, and fail only on new ones.

``check --write-baseline FILE`` records a fingerprint per finding of today; ``check --baseline FILE`` marks each
finding whose fingerprint is there as baselined (reported, fails nothing) and each other as new, and lists the
baselined findings that are gone as fixed. A fingerprint is what is wrong, not the text that says it: the rule, the
object's identity (a stack resource's URN; in a workspace export the object's id, or its name where it has none), the
field the finding is about (a job cluster's key, ``jobClusters[train].newCluster``) and the finding's statement with
its figures, dates and fix taken out (`what_is_wrong`). So a price or a date that moves keeps a finding baselined,
and a second, worse finding of the same rule on the same object (a cluster that went all-spot) is new. Each baseline
says what it was written for (a stack's name, or a workspace export): a finding of another source is never read as
baselined, and a baselined finding of another source is never reported as fixed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Violation
from dbx_ai_infra.engine.inputs import read_json

#: Version 2: fingerprints hold what is wrong (version 1 held the rule, object and field only, so two findings of one
#: rule on one object were one, and a worse one hid behind a baselined one).
VERSION = 2
#: A message that starts with the field it is about: ``jobClusters[train].newCluster: ...``.
_FIELD = re.compile(r"^([A-Za-z_][\w.\[\]-]*):\s")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?")
_FIGURE = re.compile(r"[$]?-?\d[\d,]*(\.\d+)?%?")
#: The source of a workspace export or a live read (its path may change from one export to the next).
WORKSPACE = "workspace"


def field_of(message: str) -> str:
    """The field a finding's message names first, or "" (the resource as a whole)."""
    found = _FIELD.match(message)
    return found.group(1) if found else ""


def what_is_wrong(message: str) -> str:
    """A finding's statement without what moves from run to run: its fix, its dates and its figures (prices, counts,
    sizes), in lower case with the spaces folded."""
    statement = message.split(" Fix:", 1)[0]
    return " ".join(_FIGURE.sub("#", _DATE.sub("<date>", statement)).lower().split())


def fingerprint(v: Violation) -> str:
    return hashlib.sha256(f"{v.policy}\0{v.urn}\0{field_of(v.message)}\0{what_is_wrong(v.message)}".encode()
                          ).hexdigest()[:32]


@dataclass(frozen=True)
class Entry:
    fingerprint: str
    policy: str
    resource: str
    field: str
    #: What the finding's source was: a stack's name, or `WORKSPACE`.
    source: str


@dataclass(frozen=True)
class Baseline:
    entries: dict[str, Entry]
    #: What it was written for: stack names, or `WORKSPACE`.
    sources: tuple[str, ...]


def document(violations: Iterable[Violation], source_of: dict[str, str]) -> tuple[str, int]:
    """The baseline file of these findings (sorted: the same findings write the same file) and how many it holds;
    ``source_of`` maps a finding's URN to its source (a stack's name; absent: `WORKSPACE`)."""
    entries = {fingerprint(v): {"fingerprint": fingerprint(v), "policy": v.policy, "resource": v.resource_name,
                                "field": field_of(v.message), "source": source_of.get(v.urn, WORKSPACE)}
               for v in violations}
    sources = sorted(set(source_of.values()) or {WORKSPACE})
    doc = {"version": VERSION, "written": datetime.now(UTC).date().isoformat(), "sources": sources,
           "findings": [entries[k] for k in sorted(entries)]}
    return json.dumps(doc, indent=2, sort_keys=True), len(entries)


def read(path: str) -> Baseline:
    """A baseline file; `InputError` naming the file, the field and the fix (a version 1 file included: its
    fingerprints cannot tell two findings of one rule on one object apart, so it is refused, never misread)."""
    doc = read_json(path, "baseline", fix_missing="write one with `check ... --write-baseline FILE`.")
    fix = "pass a file written by `check --write-baseline`."
    if isinstance(doc, dict) and doc.get("version") == 1:
        raise InputError.single(path, "version", "is a baseline of version 1, whose fingerprints left out what each "
                                "finding says (two findings of one rule on one object were one).",
                                "write it again with `check ... --write-baseline FILE` (version 2).")
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("findings"), list) or \
            not isinstance(doc.get("sources"), list):
        raise InputError.single(path, "version", f"is not a baseline of version {VERSION}.", fix)
    out: dict[str, Entry] = {}
    for i, item in enumerate(doc["findings"]):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in
                                                 ("fingerprint", "policy", "resource", "field", "source")):
            raise InputError.single(path, f"findings[{i}]", "needs fingerprint, policy, resource, field and source.",
                                    fix)
        out[item["fingerprint"]] = Entry(item["fingerprint"], item["policy"], item["resource"], item["field"],
                                         item["source"])
    return Baseline(out, tuple(str(s) for s in doc["sources"]))


def apply(violations: Sequence[Violation], baseline: Baseline, sources: Sequence[str]
          ) -> tuple[list[Violation], list[Entry]]:
    """The findings marked ``baseline: unchanged`` (in the baseline) or ``new``, and the baseline's entries of this
    run's ``sources`` that no finding matches any more (fixed)."""
    seen: set[str] = set()
    marked = []
    for v in violations:
        fp = fingerprint(v)
        seen.add(fp)
        marked.append(v.model_copy(update={"baseline": "unchanged" if fp in baseline.entries else "new"}))
    return marked, [e for fp, e in baseline.entries.items() if fp not in seen and e.source in sources]


def foreign(baseline: Baseline, sources: Sequence[str], path: str) -> list[str]:
    """What to say when the baseline was written for other sources than this run's."""
    others = [s for s in sources if s not in baseline.sources]
    if not others:
        return []
    wrote = ", ".join(baseline.sources)
    return [f"baseline {path} was written for {wrote}, not for {', '.join(others)}: every finding of "
            f"{', '.join(others)} is new (write its own baseline with --write-baseline)"]


def fixed_lines(fixed: Sequence[Entry], path: str) -> list[str]:
    return [f"baseline {path}: fixed since: {e.policy} on {e.resource}" + (f" ({e.field})" if e.field else "")
            for e in fixed]


def summary(violations: Sequence[Violation], fixed: Sequence[Entry]) -> dict[str, Any]:
    return {"new": sum(v.baseline == "new" for v in violations),
            "unchanged": sum(v.baseline == "unchanged" for v in violations), "fixed": len(fixed)}
