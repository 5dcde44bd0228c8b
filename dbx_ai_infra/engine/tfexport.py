"""``export-terraform``: the stack's plan as Terraform JSON configuration (``main.tf.json``), for estates that apply
with Terraform (issue 30).

The plan is the one the offline engine records from the Pulumi program (`dbx_ai_infra.engine.pipeline`), so the
Terraform configuration holds the same resources with the same settings. Pulumi's provider is bridged from Databricks'
Terraform provider, so each resource is the Terraform resource of the same name (``databricks:index/cluster:Cluster`` is
``databricks_cluster``) and each argument the Terraform argument Pulumi camel-cased; where the bridge made a repeated
block plural (``libraries``), Terraform spells it singular (``library``: `BLOCK_RENAMES`). A value that is another
resource's id in the plan (the engine's stand-in) becomes a reference (``${databricks_instance_pool.NAME.id}``; a
catalog by its ``name``, which is its id; a schema's id is ``<catalog>.<name>`` and a Volume's
``<catalog>.<schema>.<name>``, as the engine's stand-ins and the provider's docs say), and the plan's dependencies
become ``depends_on``. The attribute names are tested against the provider's documentation
(`dbx_ai_infra.dbxtypes.terraform_docs`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Plan, Resource
from dbx_ai_infra.dbxtypes.shape import MAP_VALUED_KEYS, camel_to_snake, normalize_props
from dbx_ai_infra.dbxtypes.vocabulary import CATALOG, EXTERNAL_LOCATION, PROJECT, STORAGE_CREDENTIAL
from dbx_ai_infra.engine.mocks import mock_state

#: The provider's registry address, and the releases the export is written for. pulumi-databricks 1.118.0 (pinned in
#: requirements.txt) has every resource the Terraform provider's v1.128.0 added (the ``*_iam_*_v2`` resources, its
#: CHANGELOG) and none that a later release added, so it is bridged from v1.128.x; the attribute names are checked
#: against v1.128.0's docs (`dbx_ai_infra.dbxtypes.terraform_docs.TAG`). ``~> 1.128.0`` takes its patch releases only.
PROVIDER_SOURCE = "databricks/databricks"
PROVIDER_VERSION = "~> 1.128.0"
#: Repeated blocks the Pulumi bridge names in the plural and Terraform in the singular (the provider's docs:
#: ``library``, ``task``, ``job_cluster``, ``grant``, ``access_control``).
BLOCK_RENAMES: Mapping[str, str] = {"libraries": "library", "tasks": "task", "job_clusters": "job_cluster",
                                    "grants": "grant", "access_controls": "access_control",
                                    "environments": "environment"}
#: Arguments that name another resource (an id, or a Unity Catalog name): where a reference replaces a value.
NAME_ARGUMENTS = frozenset({"catalog", "schema", "volume", "catalog_name", "schema_name", "credential_name"})
#: Arguments holding JSON text that may name another resource's id (a cluster policy's definition).
JSON_ARGUMENTS = frozenset({"definition"})
#: The Terraform resource type an argument names (the provider's docs of each argument): a reference put in its place
#: is always to a resource of that type, whatever other resource shares the stand-in id.
REFERENCE_TYPES: Mapping[str, str] = {
    "cluster_id": "databricks_cluster", "existing_cluster_id": "databricks_cluster",
    "instance_pool_id": "databricks_instance_pool", "driver_instance_pool_id": "databricks_instance_pool",
    "policy_id": "databricks_cluster_policy", "cluster_policy_id": "databricks_cluster_policy",
    "job_id": "databricks_job", "serving_endpoint_id": "databricks_model_serving",
    "catalog": "databricks_catalog", "catalog_name": "databricks_catalog",
    "schema": "databricks_schema", "schema_name": "databricks_schema", "volume": "databricks_volume",
    "credential_name": "databricks_storage_credential",
}
#: Resources another refers to by their ``name`` attribute (a catalog, a storage credential, an external location:
#: each is named, and its id is its name; Terraform provider docs of each, Import).
NAMED_BY_NAME = frozenset({CATALOG, STORAGE_CREDENTIAL, EXTERNAL_LOCATION})

#: Arguments that name a resource of another type too: a Permissions' ``serving_endpoint_id`` names a
#: provisioned-throughput endpoint as well (its ``serving_endpoint_id`` attribute: the provider's
#: databricks_model_serving_provisioned_throughput page, "Attribute Reference").
REFERENCE_ALSO: Mapping[str, tuple[str, ...]] = {
    "serving_endpoint_id": ("databricks_model_serving_provisioned_throughput",)}

_TYPE = re.compile(r"^databricks:index/(\w+):\w+$")


def terraform_type(pulumi_type: str) -> str | None:
    """``databricks:index/modelServing:ModelServing`` -> ``databricks_model_serving``; None for anything else (the
    project's components, providers)."""
    found = _TYPE.match(pulumi_type)
    return f"databricks_{camel_to_snake(found.group(1))}" if found else None


def terraform_name(name: str) -> str:
    """A Terraform-safe resource name: letters, digits, ``_`` and ``-``, starting with a letter or ``_``."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    return safe if re.match(r"^[A-Za-z_]", safe) else f"_{safe}"


def _escape(text: str) -> str:
    """A literal string in Terraform's template syntax (``${`` and ``%{`` start interpolation and directives)."""
    return text.replace("${", "$${").replace("%{", "%%{")


class _Export:
    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.source = plan.stack_file or plan.stack
        self.exported = [r for r in plan.resources if terraform_type(r.type)]
        self.address: dict[str, str] = {}
        named: dict[str, Resource] = {}
        for r in self.exported:
            address = f"{terraform_type(r.type)}.{terraform_name(r.name)}"
            if address in named:  # two resources of one type under one name: no reference could tell them apart
                raise InputError.single(self.source, "", f"resources {named[address].name!r} and {r.name!r} both "
                                        f"become {address} in Terraform.", "rename the workload or endpoint whose "
                                        "name makes one of them, so each resource of a type has its own name.")
            named[address] = r
            self.address[r.urn] = address
        # what the offline engine gave each resource (its id, and the outputs its kind's mock adds) -> the references
        # of the resources that hold that value, with their Terraform types
        self.references: dict[str, dict[str, str]] = {}
        for r in self.exported:
            address = self.address[r.urn]
            kind = address.split(".", 1)[0]
            if r.id:
                self.references.setdefault(r.id, {})[kind] = \
                    f"${{{address}.{'name' if r.type in NAMED_BY_NAME else 'id'}}}"
            for key, value in mock_state(r.type, r.name, dict(r.inputs)).items():
                if key not in r.inputs and isinstance(value, str):
                    self.references.setdefault(value, {})[kind] = f"${{{address}.{camel_to_snake(key)}}}"
        self.parents = {r.urn: r.parent for r in plan.resources}
        self.dependencies_of = {r.urn: r.dependencies for r in plan.resources}

    def dependencies(self, r: Resource) -> set[str]:
        """What ``r`` waits for: its own dependencies and its ancestors' (a component's ``depends_on`` holds for
        every resource in it: Pulumi waits for them before it registers the component's children, but Terraform
        knows no components, so each exported resource carries them itself)."""
        found = set(r.dependencies)
        parent = self.parents.get(r.urn)
        while parent:
            found.update(self.dependencies_of.get(parent, ()))
            parent = self.parents.get(parent)
        return found

    def body(self, r: Resource) -> dict[str, Any]:
        body = self.block(normalize_props(r.inputs))  # Terraform's snake_case: the provider's own names
        depends = sorted({a for dep in self.dependencies(r) for a in self.addresses_of(dep)}
                         - {self.address[r.urn]})
        if depends:
            body["depends_on"] = depends
        # Pulumi's CustomTimeouts are the provider's timeouts block (model_serving.md and
        # model_serving_provisioned_throughput.md, Timeouts)
        if r.custom_timeouts:
            body["timeouts"] = dict(r.custom_timeouts)
        return body

    def addresses_of(self, urn: str) -> list[str]:
        """The exported resources a dependency stands for: itself, or a component's descendants."""
        if urn in self.address:
            return [self.address[urn]]
        return [self.address[r.urn] for r in self.exported if self._under(r.urn, urn)]

    def _under(self, urn: str, ancestor: str) -> bool:
        parent = self.parents.get(urn)
        while parent:
            if parent == ancestor:
                return True
            parent = self.parents.get(parent)
        return False

    def block(self, props: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in props.items():
            if value is None:
                continue
            name = BLOCK_RENAMES.get(key, key)
            if key in MAP_VALUED_KEYS and isinstance(value, Mapping):  # the user's keys, as they are
                out[name] = {str(k): self.value(v, "") for k, v in value.items()}
            else:
                out[name] = self.value(value, name)
        return out

    def reference(self, value: str, name: str) -> str | None:
        """The reference that replaces ``value`` in argument (or output) ``name``: to the resource of the type the
        argument names (`REFERENCE_TYPES`), or to the one resource holding that value; None when no resource holds it
        (or none of the right type). Two resources of other types holding it leave nothing to choose by: exit 2."""
        held = self.references.get(value)
        if not held:
            return None
        wanted = REFERENCE_TYPES.get(name)
        if wanted is not None:
            return next((held[t] for t in (wanted, *REFERENCE_ALSO.get(name, ())) if t in held), None)
        if len(held) > 1:
            raise InputError.single(self.source, name, f"holds {value!r}, the id of both "
                                    f"{' and '.join(sorted(held))} resources: the export cannot tell which it names.",
                                    "rename the workload or endpoint whose name makes one of them.")
        return next(iter(held.values()))

    def output(self, value: Any, name: str = "") -> Any:
        """An output's value: every string that is a resource's id in the plan becomes its reference."""
        if isinstance(value, Mapping):
            return {str(k): self.output(v, name) for k, v in value.items()}
        if isinstance(value, list):
            return [self.output(v, name) for v in value]
        if isinstance(value, str):
            reference = self.reference(value, name)
            return reference if reference is not None else _escape(value)
        return value

    def value(self, value: Any, name: str) -> Any:
        if isinstance(value, Mapping):
            return self.block(value)
        if isinstance(value, list):
            return [self.value(v, name) for v in value]
        if not isinstance(value, str):
            return value
        if name in NAME_ARGUMENTS or name.endswith("_id"):
            reference = self.reference(value, name)
            if reference is not None:
                return reference
        text = _escape(value)
        if name in JSON_ARGUMENTS:  # an id inside the JSON text (a pinned pool): a reference inside the template
            for mock in self.references:
                if json.dumps(mock) in text:
                    text = text.replace(json.dumps(mock), json.dumps(self.reference(mock, "") or mock))
        return text


def _output_argument(output: str) -> str:
    """The argument an output of the program stands for (``chat_cluster_id`` -> ``cluster_id``,
    ``cluster_policy_ids`` -> ``policy_id``), so its references are typed like an argument's; "" when none."""
    if output == "cluster_policy_ids":
        return "policy_id"
    return next((arg for arg in REFERENCE_TYPES if output.endswith(arg)), "")


def terraform_config(plan: Plan) -> dict[str, Any]:
    """The plan as one Terraform JSON configuration document."""
    export = _Export(plan)
    resources: dict[str, dict[str, Any]] = {}
    for r in export.exported:
        kind, name = export.address[r.urn].split(".", 1)
        resources.setdefault(kind, {})[name] = export.body(r)
    # the stack's outputs: a resource's id as a reference (in a map of them too), the rest (names, paths) as they are
    outputs = {name: {"value": export.output(value, _output_argument(name))}
               for name, value in sorted(plan.outputs.items())}
    doc: dict[str, Any] = {
        "//": (f"stack {plan.stack} of {PROJECT}, written by `python -m stackplan export-terraform` from the same plan "
               "`pulumi up` deploys; regenerate it rather than edit it."),
        "terraform": {"required_providers": {"databricks": {"source": PROVIDER_SOURCE,
                                                            "version": PROVIDER_VERSION}}},
        "provider": {"databricks": {
            "//": ("host and credentials come from the environment (DATABRICKS_HOST with DATABRICKS_TOKEN or "
                   "DATABRICKS_CLIENT_ID/DATABRICKS_CLIENT_SECRET) or a profile of ~/.databrickscfg "
                   "(DATABRICKS_CONFIG_PROFILE), never from this file")}},
        "resource": {kind: dict(sorted(named.items())) for kind, named in sorted(resources.items())},
    }
    if outputs:
        doc["output"] = outputs
    return doc

