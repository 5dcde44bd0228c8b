"""The rule list, the policy config, and the offline evaluators (resource, plan, Clusters API JSON).

The CrossGuard pack (``policies/pack.py``) and these evaluators run the same code path, `rule_messages`, so a plan
evaluated offline and the same resources analysed by the pack over gRPC give the same violations.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable

from policies.common import as_number, clusters_of_resource, normalize_props
from policies.rule import CLUSTER, CLUSTER_BEARING_TYPES, ResourceView, Rule, Source, View
from policies.rules import (
    configure_single_node, configure_single_node_shuffle_partitions, configure_worker_bounds,
    disallow_all_privileges_account_users, disallow_all_spot_inference, disallow_autoscaled_or_spot_training,
    disallow_node_type_with_pool, disallow_plaintext_secrets, require_autotermination, require_gpu_memory_fit,
    require_matching_cloud_attributes, require_matching_runtime, require_pinned_pip_libraries, require_tags,
    require_training_checkpoints, require_volumes_for_caches,
)

#: Every rule, mandatory ones first; the pack lists its policies in this order.
ALL_RULES: tuple[Rule, ...] = (
    disallow_all_spot_inference.RULE,
    disallow_autoscaled_or_spot_training.RULE,
    configure_worker_bounds.RULE,
    require_matching_cloud_attributes.RULE,
    require_matching_runtime.RULE,
    disallow_node_type_with_pool.RULE,
    require_autotermination.RULE,
    configure_single_node.RULE,
    require_tags.RULE,
    require_pinned_pip_libraries.RULE,
    disallow_plaintext_secrets.RULE,
    disallow_all_privileges_account_users.RULE,
    require_volumes_for_caches.RULE,
    configure_single_node_shuffle_partitions.RULE,
    require_training_checkpoints.RULE,
    require_gpu_memory_fit.RULE,
)
RULES_BY_NAME: Mapping[str, Rule] = MappingProxyType({r.name: r for r in ALL_RULES})
assert len(RULES_BY_NAME) == len(ALL_RULES), "duplicate rule names"

#: Default thresholds (each belongs to one rule, see ``Rule.thresholds``).
DEFAULT_CONFIG: Mapping[str, int] = MappingProxyType({k: v for r in ALL_RULES for k, v in r.thresholds.items()})

ENFORCEMENT_LEVELS = ("advisory", "mandatory", "disabled")


# --------------------------------------------------------------------------------------------------------------------
# Policy config
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PolicyConfig:
    """Validated policy config: enforcement overrides and threshold overrides, keyed by policy name."""

    enforcement: Mapping[str, str] = field(default_factory=dict)
    thresholds: Mapping[str, Mapping[str, int | float]] = field(default_factory=dict)

    def level(self, rule: Rule) -> str:
        """The effective enforcement level of a rule: ``mandatory``, ``advisory`` or ``disabled``."""
        return self.enforcement.get(rule.name, rule.enforcement)

    def thresholds_for(self, rule: Rule) -> dict[str, int | float]:
        """The rule's thresholds: defaults overlaid by this config."""
        return {**rule.thresholds, **self.thresholds.get(rule.name, {})}


def _check_level(value: Any, where: str) -> str:
    if value not in ENFORCEMENT_LEVELS:
        raise ValueError(f"{where}: enforcementLevel must be one of {', '.join(ENFORCEMENT_LEVELS)}, got {value!r}")
    return value


def validate_threshold(rule: Rule, key: str, value: Any, where: str = "policy config") -> int | float:
    """A threshold value checked against the rule's schema (a number, an integer where the schema says so, and no
    smaller than its minimum)."""
    if key not in rule.thresholds:
        known = ", ".join(sorted(rule.thresholds)) or "none"
        raise ValueError(f"{where}: unknown setting {key!r} for policy {rule.name} (known settings: {known})")
    number = as_number(value) if not isinstance(value, str) else None
    schema = rule.threshold_schema.get(key, {})
    if number is None or (schema.get("type") == "integer" and not float(number).is_integer()):
        raise ValueError(f"{where}: {rule.name}.{key} must be {'an integer' if schema.get('type') == 'integer' else 'a number'}, got {value!r}")
    if "minimum" in schema and number < schema["minimum"]:
        raise ValueError(f"{where}: {rule.name}.{key} must be at least {schema['minimum']}, got {value!r}")
    return int(number) if float(number).is_integer() else number


def load_policy_config(path_or_dict: str | Path | Mapping[str, Any] | PolicyConfig | None = None) -> PolicyConfig:
    """Read a policy config in Pulumi's shape, from a dict or a JSON (or YAML) file.

    ``{"<policy-name>": {"enforcementLevel": "advisory"|"mandatory"|"disabled", "<threshold>": N}}``; a policy's value
    may also be just the level (``{"<policy-name>": "disabled"}``), and the key ``all`` sets the level of every
    policy (named policies still win). An unknown policy name, setting or level raises ``ValueError`` naming it.
    """
    if path_or_dict is None:
        return PolicyConfig()
    if isinstance(path_or_dict, PolicyConfig):
        return path_or_dict
    where = "policy config"
    if isinstance(path_or_dict, (str, Path)):
        path = Path(path_or_dict)
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{where}: cannot read the policy config ({exc.strerror or exc})") from exc
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ValueError(f"{where}: not valid YAML ({exc})") from exc
        else:
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: not valid JSON ({exc})") from exc
    else:
        data = path_or_dict
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected an object keyed by policy name, got {type(data).__name__}")

    enforcement: dict[str, str] = {}
    thresholds: dict[str, dict[str, int | float]] = {}
    everything = data.get("all")
    if everything is not None:
        level = everything.get("enforcementLevel") if isinstance(everything, Mapping) else everything
        if isinstance(everything, Mapping) and set(everything) - {"enforcementLevel"}:
            raise ValueError(f"{where}: 'all' accepts only enforcementLevel, got {sorted(everything)}")
        level = _check_level(level, f"{where}: all")
        enforcement.update({r.name: level for r in ALL_RULES})
    for name, value in data.items():
        if name == "all":
            continue
        rule = RULES_BY_NAME.get(name)
        if rule is None:
            raise ValueError(f"{where}: unknown policy {name!r} (known policies: {', '.join(RULES_BY_NAME)})")
        if isinstance(value, str):
            enforcement[name] = _check_level(value, f"{where}: {name}")
            continue
        if not isinstance(value, Mapping):
            raise ValueError(f"{where}: {name} must be an enforcement level or an object, got {type(value).__name__}")
        for key, setting in value.items():
            if key == "enforcementLevel":
                enforcement[name] = _check_level(setting, f"{where}: {name}")
            else:
                thresholds.setdefault(name, {})[key] = validate_threshold(rule, key, setting, where)
    return PolicyConfig(enforcement=MappingProxyType(enforcement),
                        thresholds=MappingProxyType({k: MappingProxyType(v) for k, v in thresholds.items()}))


# --------------------------------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Violation:
    policy: str
    enforcement: str
    urn: str
    resource_name: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def views_of(resource_type: str, props: Mapping[str, Any] | None, source: Source = "pulumi") -> list[View]:
    """What the rules see of one resource: a view per cluster definition for Clusters and Jobs, else one view."""
    if resource_type in CLUSTER_BEARING_TYPES:
        return list(clusters_of_resource(resource_type, props, source))
    return [ResourceView(resource_type=resource_type, props=normalize_props(props), source=source)]


def messages_for_views(rule: Rule, views: Iterable[View], thresholds: Mapping[str, Any]) -> list[str]:
    """A rule's messages over the views of one resource; a job cluster's messages start with its label."""
    out = []
    for view in views:
        if view.resource_type not in rule.resource_types:
            continue
        for message in rule.check(view, thresholds):
            out.append(f"{view.label}: {message}" if view.label else message)
    return out


def rule_messages(rule: Rule, resource_type: str, props: Mapping[str, Any] | None,
                  thresholds: Mapping[str, Any] | None = None, source: Source = "pulumi") -> list[str]:
    """One rule's violation messages for one resource (the pack's validate calls this)."""
    if resource_type not in rule.resource_types:
        return []
    return messages_for_views(rule, views_of(resource_type, props, source),
                              rule.thresholds if thresholds is None else thresholds)


def evaluate_resource(resource_type: str, props: Mapping[str, Any] | None, *, urn: str, name: str,
                      config: Any = None, source: Source = "pulumi") -> list[Violation]:
    """Every enabled rule against one resource, in ``ALL_RULES`` order."""
    cfg = load_policy_config(config)
    views: list[View] | None = None
    out = []
    for rule in ALL_RULES:
        level = cfg.level(rule)
        if level == "disabled" or resource_type not in rule.resource_types:
            continue
        if views is None:
            views = views_of(resource_type, props, source)
        for message in messages_for_views(rule, views, cfg.thresholds_for(rule)):
            out.append(Violation(rule.name, level, urn, name, message))
    return out


def evaluate_plan(plan: Mapping[str, Any], config: Any = None) -> list[dict[str, str]]:
    """Violations of a plan (``plan["resources"]``, each with ``type``, ``urn``, ``name`` and ``inputs``) as dicts
    ``{policy, enforcement, urn, resource_name, message}``, in resource order then rule order."""
    cfg = load_policy_config(config)
    resources = plan.get("resources") if isinstance(plan, Mapping) else None
    if not isinstance(resources, Sequence) or isinstance(resources, (str, bytes)):
        raise ValueError("plan must be an object with a 'resources' list")
    out: list[dict[str, str]] = []
    for i, res in enumerate(resources):
        if not isinstance(res, Mapping) or not isinstance(res.get("type"), str):
            raise ValueError(f"plan resources[{i}] must be an object with a 'type'")
        name = str(res.get("name", ""))
        violations = evaluate_resource(res["type"], res.get("inputs") or {}, urn=str(res.get("urn", "")), name=name,
                                       config=cfg, source="pulumi")
        out.extend(v.to_dict() for v in violations)
    return out


class ClusterJsonError(ValueError):
    """The JSON given to `evaluate_cluster_json` is not Databricks cluster definitions."""


#: Keys of which a cluster object has at least one.
_CLUSTER_KEYS = frozenset({"cluster_id", "cluster_name", "spark_version", "node_type_id", "driver_node_type_id",
                           "num_workers", "autoscale", "instance_pool_id", "is_single_node", "kind",
                           "sparkVersion", "nodeTypeId", "numWorkers", "instancePoolId", "clusterName"})


def cluster_objects(obj: Any) -> list[Mapping[str, Any]]:
    """The cluster objects in Clusters API JSON (one object, a list, or ``{"clusters": [...]}``); raises
    `ClusterJsonError` naming the first item that is not a cluster."""
    if isinstance(obj, Mapping) and "clusters" in obj:
        clusters = obj["clusters"]
        if not isinstance(clusters, list):
            raise ClusterJsonError(f"'clusters' must be a list of cluster objects, got {type(clusters).__name__}")
        items, where = clusters, "clusters"
    elif isinstance(obj, list):
        items, where = obj, ""
    elif isinstance(obj, Mapping):
        items, where = [obj], None
    else:
        raise ClusterJsonError(f"expected a cluster object, a list of clusters or {{\"clusters\": [...]}}, "
                               f"got {type(obj).__name__}")
    for i, item in enumerate(items):
        label = "the object" if where is None else f"{where}[{i}]" if where else f"item [{i}]"
        if not isinstance(item, Mapping):
            raise ClusterJsonError(f"{label} is a {type(item).__name__}, not a cluster object")
        if not _CLUSTER_KEYS & set(item):
            keys = ", ".join(sorted(map(str, item))[:8]) or "no keys"
            raise ClusterJsonError(f"{label} does not look like a Databricks cluster (has {keys}; expected keys such as "
                                   f"cluster_name, spark_version, node_type_id, num_workers or autoscale)")
    return list(items)


def evaluate_cluster_json(obj: Any, config: Any = None) -> list[dict[str, str]]:
    """Violations of Clusters API JSON: one cluster object, a list of them, or ``{"clusters": [...]}`` (the
    clusters/list response). Each violation names the cluster by ``cluster_name`` (else ``cluster_id``) and gets the
    urn ``cluster:<cluster_id or cluster_name or index>``. Raises `ClusterJsonError` for anything else."""
    cfg = load_policy_config(config)
    out: list[dict[str, str]] = []
    for i, cluster in enumerate(cluster_objects(obj)):
        cluster_id, cluster_name = cluster.get("cluster_id"), cluster.get("cluster_name")
        name = str(cluster_name or cluster_id or f"cluster[{i}]")
        urn = f"cluster:{cluster_id or cluster_name or i}"
        out.extend(v.to_dict() for v in evaluate_resource(CLUSTER, cluster, urn=urn, name=name, config=cfg,
                                                          source="api"))
    return out


def has_mandatory(violations: Iterable[Violation | Mapping[str, Any]]) -> bool:
    """True when any violation (a `Violation` or its dict) is mandatory."""
    return any((v.get("enforcement") if isinstance(v, Mapping) else v.enforcement) == "mandatory" for v in violations)
