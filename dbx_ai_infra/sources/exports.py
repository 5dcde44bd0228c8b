"""What a workspace export holds, in the shapes Databricks returns them: one reader for all of them.

Recognised (each from the REST API reference, and what ``databricks <group> <list|get> -o json`` prints):

- a cluster (``clusters/get``), a list of clusters, or ``{"clusters": [...]}`` (``clusters/list``); a cluster with
  neither id nor name (a ``new_cluster`` template: an MLflow project's backend config, a runs/submit cluster) is a
  job cluster, which ends with its run;
- a job (``jobs/get``: ``{"job_id", "settings": {...}}``), a list of jobs, or ``{"jobs": [...]}`` (``jobs/list``
  with ``expand_tasks``), in the Jobs API 2.1 shape (``tasks``, ``job_clusters``) or 2.0 (a job-level
  ``new_cluster`` or ``existing_cluster_id`` with its task); bare job settings (a jobs/create payload), a one-off
  run (runs/submit: ``tasks``, or ``new_cluster`` with its ``libraries`` and task), a serverless job (tasks with an
  ``environment_key``, no cluster); its job clusters and task clusters are checked;
- the jobs and clusters of a rendered Asset Bundle (``databricks bundle validate -o json``: ``resources.jobs``,
  ``resources.clusters``) and of a dbx deployment file (``{"environments": {ENV: {"workflows": [...]}}}``, or the
  older ``{ENV: {"jobs": [...]}}``);
- an instance pool (``instance-pools/get``) or ``{"instance_pools": [...]}``;
- a Model Serving endpoint (``serving-endpoints/get``: a ``ServingEndpointDetailed``) or ``{"endpoints": [...]}``
  (``serving-endpoints/list``, summaries without compute), GPU, CPU or on provisioned throughput
  (`dbx_ai_infra.sources.endpoint_export` says how each is read);
- a cluster policy (``policies/get``) or ``{"policies": [...]}`` (a cluster naming one is checked against it), or a
  bare policy definition (``{"spark_version": {"type": "fixed", ...}, ...}``: read as a policy, never as a cluster;
  ``--cluster-policy`` checks the export's clusters against it);
- any list or mix of these, and several JSON documents one after another (paged exports concatenated);
- a Terraform plan (``terraform show -json PLANFILE``, format_version 1.x): the ``change.after`` of each
  ``databricks_cluster``, ``databricks_job``, ``databricks_instance_pool`` and ``databricks_cluster_policy`` it
  creates or updates, in the API's shape (blocks unwrapped, ``library``/``task``/``job_cluster`` as the API's lists,
  a value known only after apply set but unknown), named by its address.

Anything else is invalid input naming the item and its keys.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator, Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.documents import json_decoder, parse_json_stream, read_text
from dbx_ai_infra.dbxtypes.errors import InputError, clip
from dbx_ai_infra.dbxtypes.terraform_docs import documented_defaults
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLUSTER,
    ENDPOINT_TYPES,
    INSTANCE_POOL,
    JOB,
    MODEL_SERVING_ENDPOINT,
    OBO_TOKEN,
    PERMISSIONS,
    PROVISIONED_THROUGHPUT_ENDPOINT,
    TOKEN,
    UNKNOWN_VALUE,
    SelectedValue,
    json_text_may_hold_unknown,
)
from dbx_ai_infra.policies.items import CLUSTER_POLICY_EXPORT, TERRAFORM_URN, ExportItem
from dbx_ai_infra.sources.endpoint_export import ENDPOINTS_KEY, endpoint_kind, endpoint_props, is_endpoint
from dbx_ai_infra.sources.numbers import check_numbers
from dbx_ai_infra.sources.tf_references import config_address, configured_references, configured_selections, resolve

CLUSTER_KEYS = frozenset({"cluster_id", "cluster_name", "spark_version", "node_type_id", "driver_node_type_id",
                          "num_workers", "autoscale", "instance_pool_id"})
#: List responses, by key, and the type of their items.
CONTAINERS: Mapping[str, str] = {"clusters": CLUSTER, "jobs": JOB, "instance_pools": INSTANCE_POOL,
                                  "policies": CLUSTER_POLICY_EXPORT, "token_infos": TOKEN,
                                  ENDPOINTS_KEY: MODEL_SERVING_ENDPOINT}
#: Keys of a list response that are not items (paging).
PAGING = frozenset({"has_more", "next_page_token", "prev_page_token"})
FIX = ("pass what the Databricks API or CLI returns: a cluster, a job (jobs/get), an instance pool, a cluster "
       "policy, a serving endpoint, their lists ({\"clusters\": [...]}, {\"jobs\": [...]}, ...), or a mix of these.")


#: The limit types of a cluster-policy definition (Cluster policy definitions reference, "Policy definitions").
POLICY_LIMIT_TYPES = frozenset({"fixed", "forbidden", "allowlist", "blocklist", "regex", "range", "unlimited"})
#: A Jobs API 2.0 task at the job level (and a runs/submit run's), besides its cluster.
TASK_KEYS = frozenset({"notebook_task", "spark_jar_task", "spark_python_task", "spark_submit_task",
                       "python_wheel_task", "pipeline_task", "sql_task", "dbt_task", "run_job_task"})


def is_policy_definition(item: Mapping[str, Any]) -> bool:
    """A bare cluster-policy definition: every value a limit (``{"type": "fixed", "value": ...}``)."""
    return bool(item) and all(isinstance(v, Mapping) and v.get("type") in POLICY_LIMIT_TYPES for v in item.values())


def _is_job_settings(item: Mapping[str, Any]) -> bool:
    """Job settings without the jobs/get envelope: a jobs/create payload, a runs/submit run, a 2.0 job."""
    if isinstance(item.get("tasks"), list) or isinstance(item.get("job_clusters"), list):
        return True
    if isinstance(item.get("new_cluster"), Mapping) or "existing_cluster_id" in item:
        return True
    return bool(TASK_KEYS & set(item))


def _kind(item: Mapping[str, Any]) -> str | None:
    if "token_id" in item and "expiry_time" in item:  # token/list, token-management/tokens: a TokenInfo
        return TOKEN
    if is_endpoint(item):  # serving-endpoints get (or a list's summary): a name and a config of served entities
        return MODEL_SERVING_ENDPOINT
    if isinstance(item.get("settings"), Mapping):
        return JOB
    if "instance_pool_name" in item:
        return INSTANCE_POOL
    if "definition" in item and "spark_version" not in item:
        return CLUSTER_POLICY_EXPORT
    if is_policy_definition(item):
        return CLUSTER_POLICY_EXPORT
    if _is_job_settings(item):
        return JOB
    if CLUSTER_KEYS & set(item):
        return CLUSTER
    return None


def _endpoint_item(obj: Mapping[str, Any], label: str, index: int, source: str) -> ExportItem:
    """A serving endpoint, GPU, CPU or provisioned throughput by its first served entity, named by its name."""
    props = endpoint_props(obj)
    kind = endpoint_kind(props)
    check_numbers(kind, props, label, source)
    name = str(obj.get("name") or f"endpoint[{index}]")
    return ExportItem(kind, props, label, name, f"serving-endpoint:{name}", source)


def _item(kind: str, obj: Mapping[str, Any], label: str, index: int, source: str, known: bool = False) -> ExportItem:
    """One object of an export as the item of its kind. ``known``: the object was decoded from a text that holds no
    unknown value (`ExportStream`); the item says so (`ExportItem.known`), except a serving endpoint, whose reader
    marks what a list response leaves out as unknown (`dbx_ai_infra.sources.endpoint_export`)."""
    if kind in ENDPOINT_TYPES:
        return _endpoint_item(obj, label, index, source)
    check_numbers(kind, obj["settings"] if kind == JOB and isinstance(obj.get("settings"), Mapping) else obj, label,
                  source)
    if kind == JOB:
        settings = obj["settings"] if isinstance(obj.get("settings"), Mapping) else obj
        job_id = obj.get("job_id")
        name = str(settings.get("name") or settings.get("run_name") or job_id or f"job[{index}]")
        return ExportItem(JOB, settings, label, name, f"job:{job_id or name}", source, known=known)
    if kind == INSTANCE_POOL:
        name = str(obj.get("instance_pool_name") or obj.get("instance_pool_id") or f"pool[{index}]")
        return ExportItem(INSTANCE_POOL, obj, label, name, f"instance-pool:{obj.get('instance_pool_id') or name}",
                          source, known=known)
    if kind == TOKEN:
        name = str(obj.get("comment") or obj.get("token_id") or f"token[{index}]")
        return ExportItem(TOKEN, obj, label, name, f"token:{obj.get('token_id') or index}", source, known=known)
    if kind == CLUSTER_POLICY_EXPORT:
        if is_policy_definition(obj):  # a bare definition: the policy object it would be the definition of
            obj = {"definition": obj}
        name = str(obj.get("name") or obj.get("policy_id") or f"policy[{index}]")
        return ExportItem(kind, obj, label, name, f"cluster-policy:{obj.get('policy_id') or name}", source, known=known)
    cluster_id, cluster_name = obj.get("cluster_id"), obj.get("cluster_name")
    if not cluster_id and not cluster_name and "cluster_source" not in obj:
        # a new_cluster template (no id, no name: a job's or a run's cluster, an MLflow backend config): it exists
        # for one run, as a job cluster, and is judged as one
        return ExportItem(CLUSTER, {**obj, "cluster_source": "JOB"}, label, f"cluster[{index}]", f"cluster:{index}",
                          source, known=known)
    name = str(cluster_name or cluster_id or f"cluster[{index}]")
    return ExportItem(CLUSTER, obj, label, name, f"cluster:{cluster_id or cluster_name or index}", source, known=known)


def _nested(doc: Mapping[str, Any], source: str, label: str) -> list[ExportItem] | None:
    """The jobs and clusters of a rendered Asset Bundle or of a dbx deployment file; None for another document."""
    resources = doc.get("resources")
    if isinstance(resources, Mapping) and ("bundle" in doc or {"jobs", "clusters"} & set(resources)):
        return _bundle_items(resources, source, label)
    return _dbx_items(doc, source, label)


def _bundle_items(resources: Mapping[str, Any], source: str, label: str) -> list[ExportItem]:
    """The jobs and clusters under a rendered Asset Bundle's ``resources``."""
    out: list[ExportItem] = []
    for key, kind in (("jobs", JOB), ("clusters", CLUSTER)):
        group = resources.get(key)
        for name, obj in (group.items() if isinstance(group, Mapping) else ()):
            if isinstance(obj, Mapping):
                out.append(_bundle_item(kind, key, name, obj, f"{label}.resources" if label else "resources",
                                        len(out), source))
    return out


def _bundle_item(kind: str, key: str, name: str, obj: Mapping[str, Any], prefix: str, index: int,
                 source: str) -> ExportItem:
    """One bundle job or cluster: its settings, without the bundle-only keys (permissions)."""
    props = {k: v for k, v in obj.items() if k != "permissions"}
    where = f"{prefix}.{key}.{name}"
    if kind == JOB:
        return ExportItem(JOB, props, where, str(props.get("name") or name), f"job:{name}", source)
    return _item(CLUSTER, {"cluster_name": name, **props}, where, index, source)


def _dbx_items(doc: Mapping[str, Any], source: str, label: str) -> list[ExportItem] | None:
    """The jobs of a dbx deployment file (``environments.<env>.workflows`` or ``jobs``, or the environments at the
    top); None when no environment holds such a list."""
    out: list[ExportItem] = []
    given = doc.get("environments")
    environments: Mapping[str, Any] = given if isinstance(given, Mapping) else doc
    found = False
    for env, body in environments.items():
        if not isinstance(body, Mapping):
            continue
        for key in ("workflows", "jobs"):
            if isinstance(body.get(key), list):
                found = True
                out += _dbx_jobs(body[key], f"{label}.{env}.{key}" if label else f"{env}.{key}", env, source)
    return out if found else None


def _dbx_jobs(jobs: list[Any], prefix: str, env: str, source: str) -> list[ExportItem]:
    """The job objects of one dbx environment's list (anything else in it is skipped)."""
    return [ExportItem(JOB, obj, f"{prefix}[{i}]", str(obj.get("name") or f"{prefix}[{i}]"),
                       f"job:{env}:{obj.get('name') or i}", source)
            for i, obj in enumerate(jobs) if isinstance(obj, Mapping)]


# ---- Terraform plans (`terraform show -json PLANFILE`) ---------------------------------------------------------------

#: A Terraform resource type -> the export kind its ``change.after`` is read as (terraform-provider-databricks
#: resource names).
TERRAFORM_KINDS: Mapping[str, str] = {"databricks_cluster": CLUSTER, "databricks_job": JOB,
                                      "databricks_instance_pool": INSTANCE_POOL,
                                      "databricks_cluster_policy": CLUSTER_POLICY_EXPORT,
                                      "databricks_model_serving": MODEL_SERVING_ENDPOINT,
                                      "databricks_model_serving_provisioned_throughput":
                                          PROVISIONED_THROUGHPUT_ENDPOINT,
                                      "databricks_token": TOKEN, "databricks_obo_token": OBO_TOKEN,
                                      "databricks_permissions": PERMISSIONS}
#: Repeated blocks Terraform spells in the singular, and the API field they are a list of (the provider's docs:
#: ``library``, ``task``, ``job_cluster``; the Jobs and Clusters APIs: ``libraries``, ``tasks``, ``job_clusters``).
TERRAFORM_LISTS: Mapping[str, str] = {"library": "libraries", "task": "tasks", "job_cluster": "job_clusters",
                                      "environment": "environments"}
#: Blocks the provider allows once: a plan writes each as a list of one object, the API as the object.
TERRAFORM_SINGLE = frozenset({
    "autoscale", "aws_attributes", "azure_attributes", "gcp_attributes", "docker_image", "cluster_log_conf",
    "workload_type", "new_cluster", "spark_python_task", "notebook_task", "spark_jar_task", "spark_submit_task",
    "python_wheel_task", "pipeline_task", "sql_task", "dbt_task", "run_job_task", "email_notifications",
    "schedule", "trigger", "pypi", "maven", "cran", "disk_spec", "disk_type", "basic_auth", "clients", "s3",
    "dbfs", "workspace", "volumes", "abfss", "gcs", "file", "log_analytics_info", "health", "git_source",
    "continuous", "queue", "run_as", "notification_settings", "webhook_notifications", "preloaded_docker_image",
    "config", "ai_gateway", "inference_table_config", "usage_tracking_config", "guardrails", "auto_capture_config",
    # a job task's serverless compute (compute.hardware_accelerator), its environment's spec, an AI Runtime task
    "compute", "spec", "ai_runtime_task",
    # a job task's sql_task holds one query, dashboard or alert (the provider's docs/resources/job.md, sql_task)
    "query", "dashboard", "alert",
})
#: What a value Terraform knows only after apply (``after_unknown``) reads as: set, not known.
TERRAFORM_UNKNOWN = UNKNOWN_VALUE
#: The provider's own attributes, not the API object's (the resource's ``id``, its workspace ``url``), dropped; and
#: those the workspace computes, dropped while unknown (a new resource's ``cluster_id``, ``state``, ``default_tags``).
TERRAFORM_ONLY = frozenset({"id", "url"})
TERRAFORM_COMPUTED: Mapping[str, frozenset[str]] = {
    CLUSTER: frozenset({"cluster_id", "state", "state_message", "default_tags", "cluster_source",
                        "creator_user_name"}),
    JOB: frozenset({"job_id", "creator_user_name"}),
    INSTANCE_POOL: frozenset({"instance_pool_id", "state", "default_tags"}),
    CLUSTER_POLICY_EXPORT: frozenset({"policy_id", "creator_user_name"}),
    MODEL_SERVING_ENDPOINT: frozenset({"serving_endpoint_id", "endpoint_url"}),
    PROVISIONED_THROUGHPUT_ENDPOINT: frozenset({"serving_endpoint_id"}),
    TOKEN: frozenset({"token_value", "token_id", "expiry_time", "creation_time"}),
    OBO_TOKEN: frozenset({"token_value"}),
    PERMISSIONS: frozenset({"object_type"}),
}


def is_terraform_plan(doc: Any) -> bool:
    """The JSON of ``terraform show -json PLANFILE``: ``format_version`` 1.x and ``resource_changes`` (which Terraform
    leaves out of a plan that changes nothing; a plan has ``terraform_version`` and ``planned_values`` or
    ``configuration`` then)."""
    if not isinstance(doc, Mapping) or not str(doc.get("format_version", "")).startswith("1."):
        return False
    changes = doc.get("resource_changes")
    return isinstance(changes, list) or (changes is None and "terraform_version" in doc and
                                        any(k in doc for k in ("planned_values", "configuration", "prior_state")))


def require_terraform_plan(path: Any) -> Mapping[str, Any]:
    """The JSON of ``terraform show -json PLANFILE`` in ``path``; `InputError` when it is not one (``check`` and ``cost
    --terraform-plan``)."""
    docs = parse_json_stream(read_text(path, "Terraform plan JSON"), str(path))
    version = docs[0].get("format_version") if len(docs) == 1 and isinstance(docs[0], Mapping) else None
    if version is not None and not str(version).startswith("1."):
        raise InputError.single(str(path), "format_version", f"is {clip(str(version))}; this reads the plan JSON of "
                                "format 1.x (Terraform 0.12 and later, terraform show -json).",
                                "write it with a Terraform release whose terraform show -json writes format 1.x.")
    if len(docs) != 1 or not is_terraform_plan(docs[0]):
        keys = ", ".join(sorted(map(str, docs[0]))[:6]) if docs and isinstance(docs[0], Mapping) else "no object"
        raise InputError.single(str(path), "", f"is not a Terraform plan's JSON (has {clip(keys)}): expected one "
                                "object with format_version 1.x and resource_changes.",
                                "write it with: terraform plan -out tfplan && terraform show -json tfplan > plan.json")
    return docs[0]


def _terraform_value(value: Any, unknown: Any, key: str = "") -> Any:
    """A plan's ``after`` value in the API's shape: singular blocks unwrapped, repeated ones renamed by the caller,
    nulls dropped (unset), each value of ``after_unknown`` set to `TERRAFORM_UNKNOWN`."""
    if unknown is True:
        return TERRAFORM_UNKNOWN
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        keys = set(value) | {k for k, v in (unknown.items() if isinstance(unknown, Mapping) else ()) if v is True}
        for k in keys:
            inner = _terraform_value(value.get(k), unknown.get(k) if isinstance(unknown, Mapping) else None, k)
            if inner is None or inner == []:
                continue
            out[TERRAFORM_LISTS.get(k, k)] = inner
        return out
    if isinstance(value, list):
        items = [_terraform_value(v, unknown[i] if isinstance(unknown, list) and i < len(unknown) else None, key)
                 for i, v in enumerate(value)]
        if key in TERRAFORM_SINGLE and len(items) == 1 and isinstance(items[0], Mapping):
            return items[0]
        return items
    return value


#: The id attribute of each kind that a plan leaves unknown for a new resource.
TERRAFORM_OWN_ID = {INSTANCE_POOL: "instance_pool_id", CLUSTER_POLICY_EXPORT: "policy_id"}
#: The kinds a plan gives as they are, judged by their own rules (not read as a cluster, job, pool or policy).
TERRAFORM_AS_IS = frozenset({MODEL_SERVING_ENDPOINT, PROVISIONED_THROUGHPUT_ENDPOINT, TOKEN, OBO_TOKEN, PERMISSIONS})
#: The name attribute of each kind that takes the resource's address when the plan names none (a cluster's
#: ``cluster_name`` also when it is empty: `_name_by_address`).
TERRAFORM_NAME = {JOB: "name", INSTANCE_POOL: "instance_pool_name", CLUSTER_POLICY_EXPORT: "name",
                  **dict.fromkeys(TERRAFORM_AS_IS, "name")}


def terraform_items(doc: Mapping[str, Any], source: str) -> list[ExportItem]:
    """The Databricks resources of a Terraform plan that exist after it, each named by its address
    (``module.ml.databricks_cluster.chat``): those it creates or changes, and those it leaves as they are (marked
    ``unchanged``: priced, not judged). A resource being deleted is neither; a data source (``mode: data``, a read
    Terraform defers to apply) is no resource of the plan at all, whatever its type."""
    out: list[ExportItem] = []
    references = configured_references(doc)
    selections = configured_selections(doc)
    for i, change in enumerate(doc.get("resource_changes") or []):  # absent: a plan that changes nothing
        item = _terraform_item(change, i, source, references, selections)
        if item is not None:
            out.append(item)
    return out


def _terraform_change(change: Any, i: int, source: str) -> tuple[str, Mapping[str, Any]] | None:
    """The export kind and the change object of one resource change; None for no Databricks resource of the plan
    (a data source, another type); raises `InputError` for a damaged one."""
    if not isinstance(change, Mapping):
        raise InputError.single(source, f"resource_changes[{i}]", "is not an object.",
                                "pass the JSON of terraform show -json PLANFILE.")
    if change.get("mode") == "data":  # a data source read (deferred to apply when its inputs are unknown)
        return None
    kind = TERRAFORM_KINDS.get(str(change.get("type")))
    if kind is None:
        return None
    body = change.get("change")
    if not isinstance(body, Mapping):  # never skipped in silence: the plan is damaged
        raise InputError.single(source, f"resource_changes[{i}] ({change.get('address') or change.get('type')})",
                                "has no change object (actions, before, after).",
                                "pass the JSON of terraform show -json PLANFILE as Terraform wrote it.")
    return kind, body


def _terraform_item(change: Any, i: int, source: str, references: Mapping[str, Any],
                    selections: Mapping[str, Any]) -> ExportItem | None:
    """One resource change as the item that exists after the plan; None for one that is none (`terraform_items`)."""
    found = _terraform_change(change, i, source)
    if found is None:
        return None
    kind, body = found
    actions = body.get("actions") or []
    after = body.get("after")
    if "delete" in actions and "create" not in actions or not isinstance(after, Mapping):
        return None
    address = str(change.get("address") or f"resource_changes[{i}]")
    unchanged = list(actions) == ["no-op"]
    props = _terraform_props(kind, str(change.get("type")), address, body, after, references, selections)
    _name_by_address(kind, props, address)
    if kind in TERRAFORM_AS_IS:  # judged by their own rules as they are
        check_numbers(kind, props, address, source)
        return ExportItem(kind, props, address, address, f"{TERRAFORM_URN}{address}", source, unchanged)
    item = _item(kind, props, address, i, source)
    return ExportItem(item.resource_type, item.props, address, address, f"{TERRAFORM_URN}{address}", source,
                      unchanged)


def _terraform_props(kind: str, resource_type: str, address: str, body: Mapping[str, Any],
                     after: Mapping[str, Any], references: Mapping[str, Any],
                     selections: Mapping[str, Any]) -> dict[str, Any]:
    """A resource's arguments after the plan: its known values, a data source's choice or a reference where the
    plan knows none yet, and the provider's schema defaults for what the configuration leaves out."""
    props = {k: v for k, v in _terraform_value(after, body.get("after_unknown") or {}).items()
             if k not in TERRAFORM_ONLY and not (k in TERRAFORM_COMPUTED[kind] and v == TERRAFORM_UNKNOWN)}
    configured = config_address(address)
    for attribute, (data, data_type, arguments) in selections.get(configured, {}).items():
        if props.get(attribute) == TERRAFORM_UNKNOWN:  # a data source's choice: known after apply, chosen by ...
            props[attribute] = SelectedValue(data, data_type, arguments)
    for attribute, reference in references.get(configured, {}).items():
        if props.get(attribute) in (None, TERRAFORM_UNKNOWN):
            # a reference to a resource of the plan: its (instance) address stands for its id
            props[attribute] = resolve(reference, address)
    for attribute, default in documented_defaults(resource_type).items():
        # an argument the configuration leaves out has the provider's schema default in the plan (a real plan
        # carries it already; Terraform code as written does not): autotermination_minutes 60 on a cluster
        props.setdefault(attribute, default)
    return props


def _name_by_address(kind: str, props: dict[str, Any], address: str) -> None:
    """The resource's address stands for the id a new resource has only after apply and for a name it lacks."""
    own = TERRAFORM_OWN_ID.get(kind)
    if own and own not in props:
        props[own] = address
    if kind == CLUSTER and not props.get("cluster_name"):
        props["cluster_name"] = address
    name = TERRAFORM_NAME.get(kind)
    if name:
        props.setdefault(name, address)


def export_items(doc: Any, source: str, label: str = "", index: int = 0) -> list[ExportItem]:
    """Every object of an export document (or of a list of documents), in order; raises `InputError` naming the
    first item that is none of the recognised shapes."""
    if isinstance(doc, list):
        return _document_list_items(doc, source, label)
    if not isinstance(doc, Mapping):
        raise InputError.single(source, label, f"expected a Databricks object or a list of them, got "
                                f"{type(doc).__name__}.", FIX)
    if is_terraform_plan(doc):
        return terraform_items(doc, source)
    _check_containers(doc, source, label)
    lists = [key for key in CONTAINERS if key in doc and isinstance(doc[key], list)]
    if lists and not _kind(doc):
        return _container_items(doc, lists, source, label)
    if set(doc) <= PAGING | set(CONTAINERS):  # an empty page: {"has_more": false}, {"clusters": null}
        return []
    kind = _kind(doc)
    if kind is None:
        return _nested_items(doc, source, label)
    return [_item(kind, doc, label, index, source)]


def _document_list_items(docs: list[Any], source: str, label: str) -> list[ExportItem]:
    """The items of each document of a list, in order."""
    out: list[ExportItem] = []
    for i, element in enumerate(docs):
        out += export_items(element, source, f"{label}[{i}]", i)
    return out


def _check_containers(doc: Mapping[str, Any], source: str, label: str) -> None:
    """Raises `InputError` for a list response's list key that holds no list (on a document that is no object)."""
    for key in CONTAINERS:
        if doc.get(key) is not None and not isinstance(doc[key], list) and not _kind(doc):
            where = f"{label}.{key}" if label else key
            raise InputError.single(source, where, f"must be a list of objects, got {type(doc[key]).__name__}.", FIX)


def _container_items(doc: Mapping[str, Any], lists: list[str], source: str, label: str) -> list[ExportItem]:
    """The objects of a list response's lists (``{"clusters": [...], "jobs": [...]}``), in `CONTAINERS` order."""
    out: list[ExportItem] = []
    for key in lists:
        for i, element in enumerate(doc[key]):
            where = f"{label}.{key}[{i}]" if label else f"{key}[{i}]"
            if not isinstance(element, Mapping):
                raise InputError.single(source, where, f"is a {type(element).__name__}, not an object.", FIX)
            out.append(_item(CONTAINERS[key], element, where, len(out), source))
    return out


def _nested_items(doc: Mapping[str, Any], source: str, label: str) -> list[ExportItem]:
    """The items of a document of no Databricks kind: a bundle's or a dbx file's; raises `InputError` otherwise."""
    nested = _nested(doc, source, label)
    if nested is None:
        keys = ", ".join(sorted(map(str, doc))[:8]) or "no keys"
        raise InputError.single(source, label, f"does not look like a Databricks cluster, job, instance pool, "
                                f"cluster policy or serving endpoint (has {clip(keys)}).", FIX)
    return nested


def read_export_file(path: Any, what: str = "cluster JSON") -> list[ExportItem]:
    """The items of one export file: one JSON document, or several one after another (paged exports)."""
    docs = parse_json_stream(read_text(path, what), str(path))
    return export_items(docs[0] if len(docs) == 1 else docs, str(path))


class NotStreamable(Exception):
    """The document has a shape that `ExportStream` does not read piece by piece: read it whole
    (`read_export_file`), which also gives the exact message for a document that is not valid."""


_SPACE = re.compile(r"[ \t\n\r]*")


class ExportStream:
    """The items of one export text, read one element at a time, so that only the text and the element being
    judged are in memory (a whole-document parse of an export takes about 4x its size in objects).

    Streamed: a list of Databricks objects (or of list responses), and list responses (``{"clusters": [...],
    "has_more": ...}``), one document or several one after another; an object that is not a list response is read
    whole, element by element. The items are exactly those of `read_export_file`, in its order, with one exception
    resolved after the fact: a label of the first document does not know yet whether more documents follow (then
    it reads ``[0]...``); `label` gives the final one. Anything else (an object whose keys mix a list response's with
    an object's, list keys out of the order `export_items` reads them in, a syntax error) raises `NotStreamable`,
    possibly after items were yielded: the caller reads the file whole instead."""

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source
        #: No value decoded from the text is unknown (`ExportItem.known`).
        self.known = not json_text_may_hold_unknown(text)
        self._decode = json_decoder().raw_decode
        self.documents = 0
        self.first_document_items = 0
        self._end = 0  # where the document read last ends

    def label(self, position: int, label: str) -> str:
        """The final label of the item yielded at ``position`` (0-based) with ``label``."""
        if self.documents <= 1 or position >= self.first_document_items:
            return label
        return "[0]" if not label else f"[0]{label}" if label.startswith("[") else f"[0].{label}"

    def __iter__(self) -> Iterator[ExportItem]:
        n = len(self.text)
        self.documents = self.first_document_items = 0  # a stream may be read more than once
        pos = self._space(0)
        if pos >= n:
            raise NotStreamable("empty")
        yielded = 0
        while pos < n:
            prefix = f"[{self.documents}]" if self.documents else ""
            for item in self._document(pos, prefix):
                yielded += 1
                yield item
            pos = self._space(self._end)
            self.documents += 1
            if self.documents == 1:
                self.first_document_items = yielded

    # -- pieces ----------------------------------------------------------------------------------------------------
    def _space(self, pos: int) -> int:
        return _SPACE.match(self.text, pos).end()  # type: ignore[union-attr]  # matches the empty string too

    def _value(self, pos: int) -> tuple[Any, int]:
        try:
            return self._decode(self.text, pos)
        except ValueError:  # JSONDecodeError, NaN, a repeated key: the whole-document reader says it right
            raise NotStreamable("syntax") from None

    def _expect(self, pos: int, chars: str) -> tuple[str, int]:
        pos = self._space(pos)
        if pos >= len(self.text) or self.text[pos] not in chars:
            raise NotStreamable("structure")
        return self.text[pos], pos + 1

    def _document(self, pos: int, prefix: str) -> Iterator[ExportItem]:
        text, source = self.text, self.source
        if text[pos] == "[":
            pos, i = self._space(pos + 1), 0
            if text.startswith("]", pos):
                self._end = pos + 1
                return
            while True:
                element, pos = self._value(pos)
                yield from export_items(element, source, f"{prefix}[{i}]", i)
                i += 1
                mark, pos = self._expect(pos, ",]")
                if mark == "]":
                    self._end = pos
                    return
                pos = self._space(pos)
        if text[pos] != "{":
            raise NotStreamable("not an object or a list")
        first = self._space(pos + 1)
        key = self._value(first)[0] if text.startswith('"', first) else None
        if key not in CONTAINERS and key not in PAGING:  # an object, not a list response: read it whole
            doc, self._end = self._value(pos)
            yield from export_items(doc, source, prefix, int(prefix[1:-1]) if prefix else 0)
            return
        yield from self._list_response(first, prefix)

    def _list_response(self, pos: int, prefix: str) -> Iterator[ExportItem]:
        order = list(CONTAINERS)
        seen: set[str] = set()
        rank, count = -1, 0
        while True:
            key, pos = self._value(pos)
            if not isinstance(key, str) or key in seen:
                raise NotStreamable("key")
            seen.add(key)
            _, pos = self._expect(pos, ":")
            pos = self._space(pos)
            if key in CONTAINERS and self.text.startswith("[", pos):
                if order.index(key) < rank:  # export_items reads the lists in CONTAINERS order
                    raise NotStreamable("order")
                rank = order.index(key)
                pos, count = yield from self._list(self._space(pos + 1), prefix, key, count)
            elif key in PAGING or (key in CONTAINERS and self.text.startswith("null", pos)):
                _, pos = self._value(pos)
            else:  # a list key that is no list, or an object's key: the whole-document reader decides
                raise NotStreamable("key")
            mark, pos = self._expect(pos, ",}")
            if mark == "}":
                self._end = pos
                return
            pos = self._space(pos)

    def _list(self, pos: int, prefix: str, key: str, count: int) -> Generator[ExportItem, None, tuple[int, int]]:
        """The items of one list of a list response, its text from after its ``[``; returns the position after its
        ``]`` and the count of the response's items so far."""
        text, source, kind, space, known = self.text, self.source, CONTAINERS[key], _SPACE.match, self.known
        if text.startswith("]", pos):
            return pos + 1, count
        at = f"{prefix}.{key}" if prefix else key
        i = 0
        while True:  # the loop of every element of an export: `_value`, `_expect` and `_space` written out
            try:
                element, pos = self._decode(text, pos)
            except ValueError:  # as `_value`
                raise NotStreamable("syntax") from None
            if type(element) is not dict and not isinstance(element, Mapping):
                raise NotStreamable("element")
            yield _item(kind, element, f"{at}[{i}]", count, source, known)
            i, count = i + 1, count + 1
            pos = space(text, pos).end()  # type: ignore[union-attr]  # matches the empty string too
            mark = text[pos:pos + 1]
            if mark == "]":
                return pos + 1, count
            if mark != ",":
                raise NotStreamable("structure")
            pos = space(text, pos + 1).end()  # type: ignore[union-attr]


def stream_export_file(path: Any, what: str = "cluster JSON") -> ExportStream:
    """`ExportStream` over one export file (its text read once; the file problems of `read_export_file`)."""
    return ExportStream(read_text(path, what), str(path))
