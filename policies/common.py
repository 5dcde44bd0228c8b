"""Normalisation at the edge, and the small helpers the rules share.

Every rule reads one shape only: the snake_case Databricks Clusters API shape produced by `normalize_cluster`.
Pulumi hands policies camelCase inputs (``numWorkers``, ``awsAttributes.firstOnDemand``) with numbers as floats;
exported Clusters API JSON is already snake_case. Both end up identical here.

Missing values and defaults (``source`` says where the properties came from):

* ``num_workers`` absent means 0 on both sources (provider and API default).
* ``autotermination_minutes`` absent means 60 for Pulumi inputs (the provider's default is applied at create time)
  but 0, "never terminates", for Clusters API JSON (the API omits the field, or returns 0, when auto-termination is
  off).
* ``first_on_demand`` absent means 1 (the API default: the driver on on-demand, every worker on the availability type).
* a cloud attributes block without ``availability`` (or no block at all) means spot with fallback, the documented
  AWS default (``SPOT_WITH_FALLBACK``); the rules apply that conservative reading on every cloud.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Iterable

from gpucatalog.clouds import ATTRIBUTES_BLOCK, ON_DEMAND, SPOT_WITH_FALLBACK, SPOT_WITHOUT_FALLBACK  # noqa: F401
from policies.rule import CLUSTER, JOB, ClusterView, Source

# --------------------------------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------------------------------

#: Map-valued attributes: their keys are user data (tag names, Spark properties, env var names), never converted.
MAP_VALUED_KEYS = frozenset({
    "custom_tags", "default_tags", "spark_conf", "spark_env_vars", "tags",
    "base_parameters", "named_parameters", "notebook_params", "python_named_params", "job_parameters",
})

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def camel_to_snake(key: str) -> str:
    """``numWorkers`` -> ``num_workers``; snake_case keys pass through unchanged."""
    return _CAMEL_BOUNDARY.sub("_", key).lower() if any(c.isupper() for c in key) else key


def _plain_number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _normalize(value: Any, *, convert_keys: bool) -> Any:
    """Plain dicts and lists (Pulumi's proxies included), snake_case keys unless inside a map-valued attribute."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for raw_key in value:
            key = camel_to_snake(raw_key) if convert_keys and isinstance(raw_key, str) else raw_key
            out[key] = _normalize(value[raw_key], convert_keys=convert_keys and key not in MAP_VALUED_KEYS)
        return out
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [_normalize(item, convert_keys=convert_keys) for item in value]
    return _plain_number(value)


def normalize_props(props: Mapping[str, Any] | None) -> dict[str, Any]:
    """Any resource's properties (camelCase or snake_case) in snake_case; map-valued attributes keep their keys."""
    if props is None:
        return {}
    if not isinstance(props, Mapping):
        raise TypeError(f"expected a mapping of properties, got {type(props).__name__}")
    return _normalize(props, convert_keys=True)


def normalize_cluster(props: Mapping[str, Any] | None) -> dict[str, Any]:
    """A cluster's properties, Pulumi camelCase inputs or Clusters API JSON, in the Clusters API (snake_case) shape.

    ``numWorkers`` -> ``num_workers``, ``awsAttributes.firstOnDemand`` -> ``aws_attributes.first_on_demand``,
    ``libraries[].pypi.package`` stays where it is. Keys inside ``custom_tags``, ``spark_conf`` and ``spark_env_vars``
    are left alone. Whole floats (``2.0``) become ints. Nothing is defaulted here: absent stays absent.
    """
    return normalize_props(props)


# --------------------------------------------------------------------------------------------------------------------
# Numbers and small readers
# --------------------------------------------------------------------------------------------------------------------

def as_number(value: Any) -> float | int | None:
    """An int or float from a number or a numeric string; ``None`` for anything else (booleans included)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return _plain_number(value)
    if isinstance(value, str):
        try:
            return _plain_number(float(value.strip()))
        except ValueError:
            return None
    return None


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) else []


def is_set(value: Any) -> bool:
    """True for a value that is present: not ``None`` and not an empty string."""
    return value is not None and value != ""


def has_autoscale(cluster: Mapping[str, Any]) -> bool:
    return isinstance(cluster.get("autoscale"), Mapping)


def num_workers(cluster: Mapping[str, Any]) -> int | float:
    """``num_workers``, 0 when absent (provider and API default)."""
    n = as_number(cluster.get("num_workers"))
    return 0 if n is None else n


def min_workers(cluster: Mapping[str, Any]) -> int | float:
    """The guaranteed worker count: ``autoscale.min_workers`` (0 when absent) or ``num_workers``."""
    if has_autoscale(cluster):
        n = as_number(as_mapping(cluster.get("autoscale")).get("min_workers"))
        return 0 if n is None else n
    return num_workers(cluster)


def spark_conf(cluster: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(cluster.get("spark_conf"))


def spark_env_vars(cluster: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(cluster.get("spark_env_vars"))


def custom_tags(cluster: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(cluster.get("custom_tags"))


SINGLE_NODE_PROFILE = "singleNode"


def has_single_node_profile(cluster: Mapping[str, Any]) -> bool:
    return spark_conf(cluster).get("spark.databricks.cluster.profile") == SINGLE_NODE_PROFILE


def is_single_node(cluster: Mapping[str, Any]) -> bool:
    """Single node by shape: ``is_single_node`` true, or 0 workers (absent = 0) and no autoscale."""
    if cluster.get("is_single_node") is True:
        return True
    return not has_autoscale(cluster) and num_workers(cluster) == 0


def node_type_ids(cluster: Mapping[str, Any]) -> list[str]:
    """The cluster's own node types (worker first, then driver), without duplicates; empty for pool-backed ones."""
    out: list[str] = []
    for key in ("node_type_id", "driver_node_type_id"):
        value = cluster.get(key)
        if isinstance(value, str) and value and value not in out:
            out.append(value)
    return out


# --------------------------------------------------------------------------------------------------------------------
# Clouds and availability
# --------------------------------------------------------------------------------------------------------------------

CLOUD_BLOCKS = ATTRIBUTES_BLOCK
# SPOT_WITHOUT_FALLBACK (spot/preemptible with no on-demand fallback), ON_DEMAND and SPOT_WITH_FALLBACK come from
# gpucatalog.clouds, the one per-cloud vocabulary the components and the guardrails use too.
#: What the rules assume when a block (or its ``availability``) is absent: spot with fallback, the AWS default.
DEFAULT_AVAILABILITY = SPOT_WITH_FALLBACK
DEFAULT_FIRST_ON_DEMAND = 1


def cloud_blocks(props: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The cloud attribute blocks present (not ``None``), keyed by cloud, in aws/azure/gcp order."""
    return {cloud: as_mapping(props.get(key)) for cloud, key in CLOUD_BLOCKS.items() if props.get(key) is not None}


def declared_availability(block: Mapping[str, Any], cloud: str) -> str | None:
    """A block's availability as written (``gcp_availability`` on GCP pools), or ``None``."""
    value = block.get("availability")
    if not is_set(value) and cloud == "gcp":
        value = block.get("gcp_availability")
    return str(value) if is_set(value) else None


def availability(block: Mapping[str, Any], cloud: str) -> str:
    """A block's availability, defaulted to spot with fallback (`DEFAULT_AVAILABILITY`)."""
    return declared_availability(block, cloud) or DEFAULT_AVAILABILITY[cloud]


def first_on_demand(block: Mapping[str, Any]) -> int | float:
    n = as_number(block.get("first_on_demand"))
    return DEFAULT_FIRST_ON_DEMAND if n is None else n


@functools.lru_cache(maxsize=1)
def catalog():
    """The GPU node-type catalog (loaded once)."""
    from gpucatalog import load_catalog  # local import keeps `import policies.common` light

    return load_catalog()


def cloud_of_cluster(cluster: Mapping[str, Any]) -> str | None:
    """The cloud of the first node type the catalog knows, or ``None``."""
    for node_type in node_type_ids(cluster):
        cloud = catalog().cloud_of(node_type)
        if cloud:
            return cloud
    return None


def effective_blocks(cluster: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The blocks whose availability applies: those present, or else the default (empty) block of the node type's
    cloud (AWS when the catalog cannot tell)."""
    blocks = cloud_blocks(cluster)
    if blocks:
        return blocks
    return {cloud_of_cluster(cluster) or "aws": {}}


# --------------------------------------------------------------------------------------------------------------------
# Roles
# --------------------------------------------------------------------------------------------------------------------

ROLES = ("training", "inference", "interactive")


def _tag_role(tags: Mapping[str, Any], key: str) -> str | None:
    value = tags.get(key)
    if isinstance(value, str) and value.strip().lower() in ROLES:
        return value.strip().lower()
    return None


def tag_role(tags: Mapping[str, Any]) -> str | None:
    """The role named by tag ``workload_type``, else by tag ``workload`` when it is a role word; else ``None``."""
    return _tag_role(tags, "workload_type") or _tag_role(tags, "workload")


def classify(cluster: Mapping[str, Any], cluster_type: str, *, tags: Mapping[str, Any] | None = None) -> str:
    """The cluster's workload role: ``training``, ``inference``, ``interactive`` or ``unknown``.

    First match wins:

    1. custom tag ``workload_type`` with value ``training``, ``inference`` or ``interactive`` (case-insensitive);
    2. custom tag ``workload`` when its value is one of those three words;
    3. shape: ``autoscale`` set -> ``inference``;
    4. single node (``num_workers`` 0 with the ``singleNode`` Spark profile, or ``is_single_node`` true)
       -> ``interactive``;
    5. a job cluster (inside a Job, or ``cluster_source`` ``JOB`` in API JSON) -> ``training``;
    6. otherwise ``unknown``; role-specific rules then stay silent.

    ``tags`` overrides the cluster's ``custom_tags`` (the registry passes a job cluster's tags merged with the job's
    ``tags``, which Databricks propagates to job clusters).
    """
    role = tag_role(custom_tags(cluster) if tags is None else tags)
    if role:
        return role
    if has_autoscale(cluster):
        return "inference"
    if cluster.get("is_single_node") is True or (num_workers(cluster) == 0 and has_single_node_profile(cluster)):
        return "interactive"
    if cluster_type == "job":
        return "training"
    return "unknown"


def _merged_tags(cluster: Mapping[str, Any], job: Mapping[str, Any] | None) -> dict[str, Any]:
    tags: dict[str, Any] = dict(as_mapping(job.get("tags"))) if job else {}
    tags.update(custom_tags(cluster))
    return tags


def effective_tags(view: ClusterView) -> dict[str, Any]:
    """Custom tags a cluster ends up with: the job's ``tags`` (for job clusters) overlaid by the cluster's own."""
    return _merged_tags(view.cluster, view.job)


# --------------------------------------------------------------------------------------------------------------------
# Clusters inside resources
# --------------------------------------------------------------------------------------------------------------------

def _make_view(label: str, cluster: dict[str, Any], cluster_type: str, source: Source, resource_type: str,
               job: Mapping[str, Any] | None = None, tasks: Iterable[Mapping[str, Any]] = ()) -> ClusterView:
    return ClusterView(label=label, cluster=cluster, cluster_type=cluster_type,  # type: ignore[arg-type]
                       role=classify(cluster, cluster_type, tags=_merged_tags(cluster, job)), source=source,
                       resource_type=resource_type, job=job, tasks=tuple(tasks))


def job_cluster_views(job: Mapping[str, Any], source: Source = "pulumi") -> list[ClusterView]:
    """Cluster views for a normalised Job: ``jobClusters[].newCluster``, ``tasks[].newCluster`` and the legacy
    job-level ``newCluster``. Each view carries the tasks that run on that cluster."""
    api = source == "api"
    tasks = [as_mapping(t) for t in as_list(job.get("tasks"))]
    views: list[ClusterView] = []
    for i, jc in enumerate(as_list(job.get("job_clusters"))):
        jc = as_mapping(jc)
        if not isinstance(jc.get("new_cluster"), Mapping):
            continue
        key = jc.get("job_cluster_key")
        key_label = key if is_set(key) else str(i)
        label = f"job_clusters[{key_label}].new_cluster" if api else f"jobClusters[{key_label}].newCluster"
        on_it = [t for t in tasks if is_set(key) and t.get("job_cluster_key") == key]
        views.append(_make_view(label, dict(jc["new_cluster"]), "job", source, JOB, job, on_it))
    for i, task in enumerate(tasks):
        if not isinstance(task.get("new_cluster"), Mapping):
            continue
        key = task.get("task_key")
        key_label = key if is_set(key) else str(i)
        label = f"tasks[{key_label}].new_cluster" if api else f"tasks[{key_label}].newCluster"
        views.append(_make_view(label, dict(task["new_cluster"]), "job", source, JOB, job, [task]))
    if isinstance(job.get("new_cluster"), Mapping):
        label = "new_cluster" if api else "newCluster"
        views.append(_make_view(label, dict(job["new_cluster"]), "job", source, JOB, job, [job]))
    return views


def clusters_of_resource(resource_type: str, props: Mapping[str, Any] | None,
                         source: Source = "pulumi") -> list[ClusterView]:
    """The cluster definitions inside a resource, normalised and classified.

    A ``databricks:index/cluster:Cluster`` gives one all-purpose view labelled ``""`` (a job cluster when API JSON
    says ``cluster_source: JOB``); a ``databricks:index/job:Job`` gives one job view per job cluster and per task
    cluster; any other type gives none.
    """
    if resource_type == CLUSTER:
        cluster = normalize_cluster(props)
        cluster_type = "job" if str(cluster.get("cluster_source", "")).upper() == "JOB" else "all-purpose"
        return [_make_view("", cluster, cluster_type, source, CLUSTER)]
    if resource_type == JOB:
        return job_cluster_views(normalize_props(props), source)
    return []


# --------------------------------------------------------------------------------------------------------------------
# Libraries
# --------------------------------------------------------------------------------------------------------------------

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_EXTRAS = r"(?:\[\s*" + _NAME + r"(?:\s*,\s*" + _NAME + r")*\s*\])?"
_VERSION = r"(?:\d+!)?\d+(?:\.\d+)*(?:[._-]?(?:a|b|rc|alpha|beta|pre|preview|c)[._-]?\d*)?" \
           r"(?:[._-]?(?:post|rev|r)[._-]?\d*)?(?:[._-]?dev[._-]?\d*)?(?:\+[A-Za-z0-9.]+)?"
_MARKER = r"(?:\s*;.*)?"
_PINNED = re.compile(r"^\s*" + _NAME + r"\s*" + _EXTRAS + r"\s*===?\s*" + _VERSION + _MARKER + r"\s*$")
_URL = re.compile(r"^(?:" + _NAME + r"\s*" + _EXTRAS + r"\s*@\s*)?(?P<url>[A-Za-z][A-Za-z0-9+.-]*://\S+)\s*$")
_ARCHIVE_WITH_VERSION = re.compile(r"-\d+(?:\.\d+)*[^/]*\.(?:whl|tar\.gz|zip|tar\.bz2)$")
_VCS_REF = re.compile(r"@(?:[0-9a-f]{40}|v?\d+(?:\.\d+)+[A-Za-z0-9.+-]*)(?:#.*)?$")


def is_pinned_pip(spec: Any) -> bool:
    """True when a pip requirement names one exact version.

    ``torch==2.3.1``, ``transformers[torch]==4.41.2`` and ``pkg==1.2; python_version>='3.10'`` are pinned.
    ``torch``, ``torch>=2``, ``torch==2.*``, ``torch~=2.3`` and ``torch==2.3,<3`` are not. A URL counts as pinned only
    when it carries a version: an archive file named ``<name>-<version>...whl|tar.gz|zip``, or a VCS URL ending in
    ``@<40-hex commit>`` or ``@v1.2.3``.
    """
    if not isinstance(spec, str) or not spec.strip():
        return False
    if _PINNED.match(spec):
        return True
    url = _URL.match(spec.strip())
    if url:
        target = url.group("url")
        if "+" in target.split("://", 1)[0]:  # git+https://..., hg+ssh://...
            return bool(_VCS_REF.search(target))
        return bool(_ARCHIVE_WITH_VERSION.search(target.split("#", 1)[0].split("?", 1)[0]))
    return False


_REQUIREMENT_NAME = re.compile(r"^\s*(" + _NAME + r"\s*" + _EXTRAS + r")")


def pip_name(spec: Any) -> str | None:
    """The project name (with extras) a pip requirement starts with; ``None`` for URLs and non-strings."""
    if not isinstance(spec, str) or "://" in spec:
        return None
    match = _REQUIREMENT_NAME.match(spec)
    return match.group(1).replace(" ", "") if match else None


def pypi_packages(libraries: Any) -> list[str]:
    """``libraries[].pypi.package`` values, in order (missing packages skipped)."""
    out = []
    for lib in as_list(libraries):
        package = as_mapping(as_mapping(lib).get("pypi")).get("package")
        if is_set(package):
            out.append(str(package))
    return out


# --------------------------------------------------------------------------------------------------------------------
# Secrets
# --------------------------------------------------------------------------------------------------------------------

#: Whole words of a key (split on ``_ . -`` and camelCase) that mark it as holding a secret.
_SECRET_WORDS = frozenset({"TOKEN", "PASSWORD", "PASSWD", "SECRET", "APIKEY", "CREDENTIAL", "CREDENTIALS", "PAT",
                           "PASSPHRASE", "SAS"})
#: Adjacent word pairs that mark a secret.
_SECRET_PAIRS = frozenset({("API", "KEY"), ("ACCESS", "KEY"), ("PRIVATE", "KEY"), ("ACCOUNT", "KEY"),
                           ("SECRET", "KEY"), ("AUTH", "KEY"), ("CLIENT", "KEY"), ("SIGNING", "KEY")})
_SECRET_REFERENCE = re.compile(r"\{\{\s*secrets/[^/{}\s]+/[^/{}\s]+\s*\}\}")
_DATABRICKS_PAT = re.compile(r"\bdapi[0-9a-f]{32}(?:-\d+)?\b")
_AWS_ACCESS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")
_PRIVATE_KEY_BLOCK = re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")
_HARMLESS_VALUES = frozenset({"", "true", "false", "0", "1", "yes", "no", "none", "null"})


def _key_words(key: str) -> list[str]:
    spaced = _CAMEL_BOUNDARY.sub("_", key)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.upper()) if w]


def looks_like_secret_key(key: Any) -> bool:
    """A key naming a credential: ``HF_TOKEN``, ``DB_PASSWORD``, ``WANDB_API_KEY``, ``fs.s3a.secret.key``,
    ``fs.azure.account.key.<account>...``. Whole words only, so ``TOKENIZERS_PARALLELISM`` is not one."""
    if not isinstance(key, str):
        return False
    words = _key_words(key)
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(words, words[1:]))


def is_secret_reference(value: Any) -> bool:
    """True when the value takes its secret from a Databricks secret scope (``{{secrets/<scope>/<key>}}``)."""
    return isinstance(value, str) and bool(_SECRET_REFERENCE.search(value))


def looks_like_secret_value(value: Any) -> str | None:
    """The kind of credential a value looks like ("a Databricks personal access token", ...), or ``None``."""
    if not isinstance(value, str):
        return None
    if _DATABRICKS_PAT.search(value):
        return "a Databricks personal access token"
    if _AWS_ACCESS_KEY_ID.search(value):
        return "an AWS access key id"
    if _PRIVATE_KEY_BLOCK.search(value):
        return "a private key"
    return None


def looks_like_secret(key: Any, value: Any) -> str | None:
    """Why ``key=value`` holds a plain-text secret, or ``None`` when it does not.

    A secret-looking key with a literal value is one, unless the value is a ``{{secrets/scope/key}}`` reference, a
    boolean or 0/1 switch, or an absolute path (``/Volumes/.../token.json`` points to a file, it is not the secret).
    A value that looks like a Databricks PAT, an AWS access key id or a PEM private key is one whatever its key.
    The reason never contains the value.
    """
    if value is None or is_secret_reference(value):
        return None
    kind = looks_like_secret_value(value)
    if kind:
        return f"its value looks like {kind}"
    text = str(value).strip()
    if looks_like_secret_key(key) and text.lower() not in _HARMLESS_VALUES and not text.startswith("/"):
        return "its name marks a credential and its value is a literal"
    return None
