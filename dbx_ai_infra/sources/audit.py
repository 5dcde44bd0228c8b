"""`check --cluster-json` and `check --workspace`: a workspace export judged by the policies, in one pass.

An export file is read one element at a time (`dbx_ai_infra.sources.exports.ExportStream`), so that only its text, the
element being judged and the findings are in memory; a whole-document parse takes about four times the file's size in
objects (issue 23: 7x the JSON in peak memory at 5,000 clusters). Two facts need the whole export before the first
cluster is judged: which clusters jobs run on, and which cluster policies the export holds. When the text mentions
either (``existing_cluster_id``, ``definition``), a first pass reads them, and the second judges. A document the
stream does not read (`dbx_ai_infra.sources.exports.NotStreamable`) or finds invalid is read whole, as before, which
also gives the exact message for an invalid one: the findings are the same either way.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Violation
from dbx_ai_infra.dbxtypes.shape import shapes_of_resource
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, ENDPOINT_TYPES, INSTANCE_POOL, JOB, TOKEN
from dbx_ai_infra.guardrails import DefinitionError, evaluate_shape, parse_definition
from dbx_ai_infra.policies.items import CLUSTER_POLICY_EXPORT, TERRAFORM_URN, clusters_of, job_runs_on
from dbx_ai_infra.policies.registry import audit_export
from dbx_ai_infra.sources.exports import NotStreamable, read_export_file, stream_export_file

#: The finding of a cluster that breaks the cluster policy it names (the policy is in the export too).
OWN_POLICY = "cluster-policy-violated"


@dataclass
class ExportAudit:
    """What `check` reports of an export: findings, counts, and where each item came from (for SARIF and JUnit)."""

    violations: list[Violation]
    counts: dict[str, int]
    #: urn -> the file of the item, and urn -> its label inside the file (where it has one), when asked for.
    files: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    #: the cluster objects, when asked for (``--cluster-policy``).
    clusters: list[Mapping[str, Any]] = field(default_factory=list)
    #: every item's name as findings show it (what ``--exceptions`` may name).
    names: set[str] = field(default_factory=set)
    #: urn -> the line of the item in its file, where the input has lines (Terraform code as written).
    lines: dict[str, int] = field(default_factory=dict)
    #: What the report cannot show (objects listed twice, read once).
    notes: list[str] = field(default_factory=list)


#: The field that identifies an object of each kind in a workspace (the API's id: one object, wherever it is listed).
_ID_FIELDS = {CLUSTER: "cluster_id", INSTANCE_POOL: "instance_pool_id", CLUSTER_POLICY_EXPORT: "policy_id",
              TOKEN: "token_id"}


def _digest(props: Any) -> str:
    return hashlib.sha256(json.dumps(props, sort_keys=True, default=str).encode()).hexdigest()


class _Once:
    """An export's objects, each once: the same object (its API id) listed twice, in two files or two pages, is one
    object, read once and said in a note; two different records under one id are two snapshots of one object, of
    which the export cannot say which is current: `InputError` naming both places."""

    def __init__(self, streams: list[Any] | None = None) -> None:
        #: (kind, id) -> (file, label, where: the item itself, or (stream, position) of a streamed one)
        self.seen: dict[tuple[str, str], tuple[str, str, Any]] = {}
        self.dropped: list[str] = []
        self.streams = streams or []
        self._digests: dict[int, dict[int, str]] = {}  # stream -> position -> digest, made on a repeat only

    def new(self, item: Any, where: tuple[int, int] | None = None) -> bool:
        """Whether ``item`` is the first of its object (``where``: its stream and position, when streamed). Its
        settings are compared with the first's only when its id repeats: a digest of every object of a 5,000-cluster
        export was 10% of its audit (issue 53, item 5)."""
        key = self._key(item)
        if key is None:
            return True
        here = (str(item.source), str(item.label), item if where is None else where)
        first = self.seen.setdefault(key, here)
        if first is here:
            return True
        where_first = f"{first[0]}{f' ({first[1]})' if first[1] else ''}"
        if self._digest_of(first[2]) != _digest(item.props):
            raise InputError.single(here[0], here[1] or key[1], f"lists {key[1]} again, with other settings than "
                                    f"{where_first}: two records of one object, and the export cannot say "
                                    "which is current.", "export the workspace once, or remove the stale copy.")
        self.dropped.append(f"{key[1]} ({where_first} and {here[0]}{f' ({here[1]})' if here[1] else ''})")
        return False

    def _digest_of(self, first: Any) -> str:
        """The digest of a first occurrence: of the item held, or of a streamed one, read again (its stream read
        once more, whole, on its first repeat: a fresh reader over the same text, so the reading under way goes
        on undisturbed)."""
        if not isinstance(first, tuple):
            return _digest(first.props)
        stream, position = first
        if stream not in self._digests:
            again = type(self.streams[stream])(self.streams[stream].text, self.streams[stream].source)
            self._digests[stream] = {i: _digest(item.props) for i, item in enumerate(again)}
        return self._digests[stream][position]

    @staticmethod
    def _key(item: Any) -> tuple[str, str] | None:
        if str(item.urn).startswith(TERRAFORM_URN):  # a plan states each address once (Terraform refuses twice)
            return None
        if item.resource_type in ENDPOINT_TYPES:  # an endpoint's name is its id in a workspace (GPU or PT alike)
            return ("serving_endpoint", f"name {item.name}")
        if item.resource_type == JOB:  # a job's settings hold no id: its urn does when the object had one
            return (JOB, item.urn) if item.urn != f"job:{item.name}" else None
        field_name = _ID_FIELDS.get(item.resource_type)
        value = item.props.get(field_name) if field_name else None
        return (item.resource_type, f"{field_name} {value}") if isinstance(value, (str, int)) and value else None

    def note(self) -> list[str]:
        if not self.dropped:
            return []
        return [f"{len(self.dropped)} object(s) listed twice in the export, read once: {', '.join(self.dropped[:5])}"
                f"{' ...' if len(self.dropped) > 5 else ''}."]


def export_files(path: str) -> list[Path]:
    """The files of ``--cluster-json``: one file, or the ``*.json`` files of a directory and of its sub-directories
    (an export is often split by object kind), read as one input, in path order."""
    where = Path(path)
    files = sorted(p for p in where.rglob("*.json") if p.is_file()) if where.is_dir() else [where]
    if where.is_dir() and not files:
        raise InputError.single(path, "--cluster-json", "is a directory with no *.json file.",
                                "export clusters, jobs or pools into it (databricks clusters list -o json > "
                                "clusters.json).")
    return files


def read_export(path: str, once: _Once | None = None) -> list[Any]:
    """A workspace export read whole: its items as `dbx_ai_infra.policies.items.ExportItem`, each object once
    (`_Once`)."""
    once = once or _Once()
    items: list[Any] = []
    for file in export_files(path):
        items += [item for item in read_export_file(file) if once.new(item)]
    return items


class _Policies:
    """The cluster policies of an export, by id, and the finding of a cluster that breaks the one it names.
    Databricks checks a policy when a cluster is created or edited, so such a cluster predates a change of its
    policy: advisory."""

    def __init__(self) -> None:
        self.by_id: dict[str, tuple[str, Any]] = {}

    def add(self, item: Any) -> None:
        if item.resource_type != CLUSTER_POLICY_EXPORT or not item.props.get("policy_id"):
            return
        try:
            self.by_id[str(item.props["policy_id"])] = (item.name, parse_definition(item.props.get("definition")
                                                                                    or {}))
        except DefinitionError as exc:
            print(f"note: {item.source}: cluster policy {item.name} is not readable, so its clusters are not "
                  f"checked against it: {exc}", file=sys.stderr)

    def finding(self, item: Any) -> Violation | None:
        policy = self.by_id.get(str(item.props.get("policy_id"))) if item.resource_type == CLUSTER else None
        if policy is None:
            return None
        # the export shows the cluster as it is: a fixed attribute it lacks was never applied (final)
        outcome = evaluate_shape(policy[1], shapes_of_resource(CLUSTER, item.props, source="api")[0], final=True)
        if outcome.allowed:
            return None
        broken = "; ".join(v.message for v in outcome.violations)
        return Violation(policy=OWN_POLICY, enforcement="advisory", urn=item.urn, resource_name=item.name,
                         message=f"breaks its cluster policy {policy[0]}: {broken}. Fix: edit the cluster to fit the "
                                 f"policy (the workspace will ask at its next edit), or change the policy.")


def own_policy_violations(items: list[Any]) -> list[Violation]:
    """Clusters of an export that break the cluster policy they name (``policy_id``), when that policy is in the
    export too (``policies/list``; its ``definition`` a JSON string or an object)."""
    policies = _Policies()
    for item in items:
        policies.add(item)
    return [v for v in (policies.finding(item) for item in items) if v is not None]


def audit_items(items: list[Any], config: Any, *, places: bool = False, clusters: bool = False) -> ExportAudit:
    """An export already in memory (``--workspace``, or a file the stream does not read)."""
    violations, counts = audit_export(items, config)
    return ExportAudit(violations + own_policy_violations(items), counts,
                       {i.urn: i.source for i in items} if places else {},
                       {i.urn: i.label for i in items if i.label} if places else {},
                       clusters_of(items) if clusters else [], {i.name for i in items})


def audit_export_path(path: str, config: Any, *, places: bool = False, clusters: bool = False) -> ExportAudit:
    """``--cluster-json PATH`` judged, each file streamed where its shape allows (see the module's docstring)."""
    files = export_files(path)
    try:
        streams = [stream_export_file(f) for f in files]
        if any('"resource_changes"' in s.text for s in streams):
            # a Terraform plan is read whole: it states its Permissions, which the access rules judge each cluster
            # and job with (a plan is one object, and small beside an export)
            raise NotStreamable("a Terraform plan")
        once = _Once(streams)
        audit = _audit_streams(streams, config, places=places, clusters=clusters, once=once)
    except (NotStreamable, InputError):
        once = _Once()
        audit = audit_items(read_export(path, once), config, places=places, clusters=clusters)
    audit.notes += once.note()
    return audit


def _audit_streams(streams: list[Any], config: Any, *, places: bool, clusters: bool, once: _Once) -> ExportAudit:
    used_by: dict[str, str] = {}
    policies = _Policies()
    if any('"existing_cluster_id"' in s.text or '"definition"' in s.text for s in streams):
        for item in _each(streams):  # the first pass: what jobs run on, and the export's cluster policies
            for cluster_id, task in job_runs_on([item]).items():
                used_by.setdefault(cluster_id, task)
            policies.add(item)
    audit = ExportAudit([], {})
    own: list[Violation] = []
    located: list[tuple[int, int, str, str, str]] = []  # (stream, position, urn, file, label)
    offsets = _Offsets(streams)

    def on_item(position: int, item: Any, shapes: list[Any]) -> None:
        audit.names.add(item.name)
        finding = policies.finding(item) if policies.by_id else None
        if finding is not None:
            own.append(finding)
        if places:
            stream, local = offsets.locate(position)
            located.append((stream, local, item.urn, item.source, item.label))
        if clusters and item.resource_type == CLUSTER:
            audit.clusters.append(item.props)

    audit.violations, audit.counts = audit_export(_each(streams, offsets, once), config, used_by=used_by,
                                                  on_item=on_item)
    audit.violations += own
    for stream, local, urn, file, label in located:  # labels final now that each file's documents are counted
        audit.files[urn] = file
        final = streams[stream].label(local, label)
        if final:
            audit.labels[urn] = final
    return audit


class _Offsets:
    """Which stream, and which position inside it, an item of the concatenated streams came from."""

    def __init__(self, streams: list[Any]) -> None:
        self.starts: list[int] = [sys.maxsize] * len(streams)  # set as each stream is reached

    def locate(self, position: int) -> tuple[int, int]:
        stream = max(i for i, start in enumerate(self.starts) if start <= position)
        return stream, position - self.starts[stream]


def _each(streams: list[Any], offsets: _Offsets | None = None, once: _Once | None = None) -> Iterable[Any]:
    count = 0
    for i, stream in enumerate(streams):
        if offsets is not None:
            offsets.starts[i] = count
        for position, item in enumerate(stream):
            if once is not None and not once.new(item, (i, position)):
                continue
            count += 1
            yield item
