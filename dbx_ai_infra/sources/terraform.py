"""A Terraform plan (``terraform show -json PLANFILE``) as a `Plan` the cost model prices: ``cost --terraform-plan``.

The plan's Databricks resources are read by the one export reader (`dbx_ai_infra.sources.exports.terraform_items`: the
API's shape, addresses as names, a reference to a resource of the same plan as that resource's address); each becomes a
plan resource of the type the cost model prices (clusters, jobs, instance pools), its inputs the API JSON (the
shape reader takes Pulumi's camelCase and the API's snake_case alike). The usage assumptions are the defaults (a plan
states none); ``--prices`` overrides prices as for a stack.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.clouds import checked_region, region_problem
from dbx_ai_infra.dbxtypes.documents import parse_json_stream, read_text
from dbx_ai_infra.dbxtypes.endpoint import served_entities
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Cost, Plan, Resource, UnpricedItem
from dbx_ai_infra.dbxtypes.shape import normalize_props
from dbx_ai_infra.dbxtypes.vocabulary import (
    CLUSTER,
    INSTANCE_POOL,
    JOB,
    MODEL_SERVING_ENDPOINT,
    PROJECT,
    PROVISIONED_THROUGHPUT_ENDPOINT,
    USAGE_DEFAULTS,
)
from dbx_ai_infra.engine.costing import price_plan
from dbx_ai_infra.gpucatalog import load_catalog
from dbx_ai_infra.gpucatalog.serving import load_serving_catalog
from dbx_ai_infra.policies.items import ExportItem
from dbx_ai_infra.sources.audit import audit_items, read_export
from dbx_ai_infra.sources.exports import is_terraform_plan, require_terraform_plan, terraform_items
from dbx_ai_infra.sources.hcl import is_terraform_code, terraform_module_read
from dbx_ai_infra.sources.tf_nodes import resolve_node_types, resource_clouds
from dbx_ai_infra.sources.tfexpand import Skipped, not_evaluated_violations

#: The cloud a module is priced on when none of its resources names one (a serving-only module, node types all from
#: data sources with no cloud attribute block): said in a note, never silent.
DEFAULT_CLOUD = "aws"
#: The id attribute each priced kind is known by (what a cluster's ``instance_pool_id`` names).
_ID = {INSTANCE_POOL: "instance_pool_id", CLUSTER: "cluster_id", JOB: "job_id", MODEL_SERVING_ENDPOINT: "name",
       PROVISIONED_THROUGHPUT_ENDPOINT: "name"}


def is_terraform_plan_file(path: str) -> bool:
    """Whether ``path`` holds a Terraform plan's JSON (told apart from a saved stack plan by its ``format_version``
    and ``resource_changes``)."""
    try:
        docs = parse_json_stream(read_text(path, "plan"), path)
    except InputError:
        return False
    return len(docs) == 1 and is_terraform_plan(docs[0])


def terraform_name(path: str) -> str:
    """A Terraform module or plan as reports name it: the file's or directory's name (``plan`` of ``plan.json``,
    ``ml`` of ``infra/ml``), or the path as the user gave it where that has no name (``.``, ``..``)."""
    name = Path(path).stem
    return name if name not in ("", ".", "..") else path


def _own_clouds(items: list[ExportItem], catalog: Any, hints: Mapping[str, tuple[str, str]], said: TerraformPricing
                ) -> dict[str, set[str]]:
    """Each resource's clouds: what it names itself (`resource_clouds`), else what its provider block tells
    (``hints``: address -> (cloud, what tells it), `dbx_ai_infra.sources.tf_providers`), said in a note."""
    own: dict[str, set[str]] = {}
    told: dict[tuple[str, str], list[str]] = {}
    for i in items:
        own[i.urn] = resource_clouds(i.props, catalog)
        if not own[i.urn] and i.name in hints:
            own[i.urn] = {hints[i.name][0]}
            told.setdefault(hints[i.name], []).append(i.name)
    for (cloud, why), names in told.items():
        said.notes.append(f"{', '.join(names)}: on {cloud.upper()}, as the provider configuration that creates "
                          f"{'it' if len(names) == 1 else 'them'} tells ({why}); no cloud attribute block or node "
                          f"type of {'its' if len(names) == 1 else 'their'} own names one.")
    return own


def terraform_plan(path: str, every: list[ExportItem], cloud: str | None = None,
                   hints: Mapping[str, tuple[str, str]] | None = None) -> tuple[Plan, TerraformPricing]:
    """A plan's clusters, jobs, pools and endpoints (``every``: its items,
    `dbx_ai_infra.sources.exports.terraform_items`)
    as a `Plan`, not yet priced, and what pricing it leaves to say (`TerraformPricing`). Never an error for a valid
    module: each resource's cloud is its own (`tf_nodes.resource_clouds`); the plan prices the cloud most of them name
    (``cloud``, a cost diff's head's, when none does; AWS, said in a note, when nothing tells); a resource of another
    cloud is left out and named unpriced; a node type a ``databricks_node_type`` data source picks is resolved as
    Databricks would pick it (`tf_nodes.pick_node_type`), the choice said."""
    items = [i for i in every if i.resource_type in _ID]
    catalog = load_catalog()
    said = TerraformPricing()
    own = _own_clouds(items, catalog, hints or {}, said)
    counts = Counter(c for clouds in own.values() for c in clouds)
    if counts:
        chosen = sorted(counts, key=lambda c: (-counts[c], c))[0]
    elif cloud is not None:
        chosen = cloud
    else:
        chosen = DEFAULT_CLOUD
        if items:
            said.notes.append(f"No resource names its cloud (no cloud attribute block, no node type of a known cloud): "
                              f"priced at {DEFAULT_CLOUD.upper()}'s list prices.")
    resources = []
    for i in items:
        if own[i.urn] and chosen not in own[i.urn]:
            said.left_out.append((i.urn, i.name, f"on {', '.join(sorted(own[i.urn]))}: this cost prices {chosen}, the "
                                  "cloud most of the module's resources name (price the other workspace's module "
                                  "on its own)"))
            continue
        props = resolve_node_types(i.props, chosen if (own[i.urn] or counts) else None, catalog, said.notes)
        resources.append(Resource(urn=i.urn, id=str(props.get(_ID[i.resource_type]) or i.name),
                                  type=i.resource_type, name=i.name, inputs=dict(props)))
    plan = Plan.model_validate({"stack": terraform_name(path), "project": PROJECT, "stack_file": path, "cloud": chosen,
                                "resources": resources,
                                "assumptions": {k: u.default for k, u in USAGE_DEFAULTS.items()}})
    return plan, said


@dataclass
class TerraformPricing:
    """What pricing a Terraform plan says besides the cost model: ``notes`` (the cloud when nothing named it, each
    data source's node type choice) and the resources ``left_out`` of the priced cloud (urn, name, reason), named
    unpriced in the total."""

    notes: list[str] = field(default_factory=list)
    left_out: list[tuple[str, str, str]] = field(default_factory=list)

    def apply(self, cost: Cost) -> None:
        """Says it on ``cost``: the notes, and each resource left out as unpriced (the total incomplete)."""
        cost.notes = [*cost.notes, *self.notes]
        for urn, name, reason in self.left_out:
            cost.unpriced.append(UnpricedItem(urn=urn, name=name, reason=reason))
            cost.total.leave_out(name)


def serving_cloud(items: list[ExportItem], region: str | None) -> str | None:
    """The cloud of an input that names no cloud but serves Model Serving endpoints (a serving-only module): the one
    cloud that offers every GPU or CPU workload type its endpoints name (dbx_ai_infra/gpucatalog/serving_types.yaml:
    AWS's MULTIGPU_MEDIUM is offered on no other cloud) and whose regions have the form of ``--region``; None when the
    input serves nothing, names its cloud otherwise, or when no one cloud fits (`terraform_plan` then says what it
    priced)."""
    endpoints = [i for i in items if i.resource_type == MODEL_SERVING_ENDPOINT]
    catalog = load_catalog()
    if not endpoints or any(resource_clouds(i.props, catalog) for i in items):
        return None
    serving = load_serving_catalog()
    named = sorted({t for i in endpoints for e in served_entities(normalize_props(i.props))
                    if (t := e.get("workload_type")) and isinstance(t, str)})
    fits = [c for c in ("aws", "azure", "gcp") if all(serving.get(c, t) or serving.cpu_type(c, t) for t in named)
            and (region is None or region_problem(c, region) is None)]
    return fits[0] if len(fits) == 1 else None


def priced_terraform_plan(path: str, *, policy_config: Any, prices: str | None, cloud: str | None = None,
                          region: str | None = None, var_files: Sequence[str] = (), as_code: bool = False,
                          allow_empty: bool = False, export: bool = False) -> Plan:
    """The plan priced (``--prices`` as for a stack; ``region``: ``--region``, the workspace's region), with the
    findings ``check --terraform-plan`` gives it. ``path`` may be Terraform code as written (a ``.tf`` file or a
    module directory, ``--terraform``; ``var_files``: its ``--var-file``s; ``as_code``: read as code whatever it
    holds; ``allow_empty``: a directory with no .tf is an empty module, a diff's base before the first .tf): read as
    the plan Terraform would make. ``export``: ``path`` is a workspace export (``cost --cluster-json``: a file or a
    directory of what the API returned, `dbx_ai_infra.sources.audit.read_export`), priced the same way."""
    skipped: list[Skipped] = []
    hints: dict[str, tuple[str, str]] = {}
    if export:
        items = read_export(path)
    elif as_code or is_terraform_code(path):
        code = terraform_module_read(path, var_files, allow_empty=allow_empty)
        items, skipped, hints = code.items, code.not_evaluated, code.clouds
    else:
        items = terraform_items(require_terraform_plan(path), path)  # the file read once: priced and judged
    decided = None if cloud else serving_cloud(items, region)
    plan, said = terraform_plan(path, items, cloud or decided, hints)
    if decided:
        said.notes.append(f"No resource names its cloud: priced on {decided.upper()}, the one cloud that offers its "
                          f"endpoints' workload types{f' in a region like {region}' if region else ''}.")
    plan.region = checked_region(region, plan.cloud)
    plan.cost = price_plan(plan, None, prices)
    said.apply(plan.cost)
    for note in said.notes:  # the reader's notes go to stderr (`dbx_ai_infra.sources.hcl`): these are pricing's
        print(f"note: {path}: {note}", file=sys.stderr)
    for block in skipped:  # a total that leaves out what was not evaluated says so, naming it
        plan.cost.total.leave_out(block.address)
        plan.cost.unpriced.append(UnpricedItem(urn=f"terraform-not-evaluated:{block.address}", name=block.address,
                                               reason=f"not evaluated: {block.reason}"))
    plan.violations = audit_items(items, policy_config).violations + not_evaluated_violations(skipped)
    return plan
