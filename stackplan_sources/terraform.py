"""A Terraform plan (``terraform show -json PLANFILE``) as a `Plan` the cost model prices: ``cost --terraform-plan``.

The plan's Databricks resources are read by the one export reader (`stackplan_sources.exports.terraform_items`: the
API's shape, addresses as names, a reference to a resource of the same plan as that resource's address); each becomes a
plan resource of the type the cost model prices (clusters, jobs, instance pools), its inputs the API JSON (the
shape reader takes Pulumi's camelCase and the API's snake_case alike). The usage assumptions are the defaults (a plan
states none); ``--prices`` overrides prices as for a stack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dbxtypes.clouds import checked_region
from dbxtypes.documents import parse_json_stream, read_text
from dbxtypes.errors import InputError
from dbxtypes.plan import Plan, Resource, UnpricedItem
from dbxtypes.vocabulary import (
    CLUSTER,
    INSTANCE_POOL,
    JOB,
    MODEL_SERVING_ENDPOINT,
    PROJECT,
    PROVISIONED_THROUGHPUT_ENDPOINT,
    USAGE_DEFAULTS,
)
from gpucatalog import Catalog, load_catalog
from policies.items import ExportItem
from stackplan.costing import price_plan
from stackplan_sources.audit import audit_items
from stackplan_sources.exports import is_terraform_plan, require_terraform_plan, terraform_items
from stackplan_sources.hcl import is_terraform_code, terraform_module_read
from stackplan_sources.tfexpand import Skipped, not_evaluated_findings

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


def terraform_plan(path: str, every: list[ExportItem], cloud: str | None = None) -> Plan:
    """A plan's clusters, jobs, pools and endpoints (``every``: its items, `stackplan_sources.exports.terraform_items`)
    as a `Plan`, not yet priced; `InputError` for a plan whose node types name several clouds, or none (unless ``cloud``
    is given: a cost diff's base takes its head's cloud, and a base without Databricks compute, a repository's first
    plan, is then $0, everything new)."""
    items = [i for i in every if i.resource_type in _ID]
    catalog = load_catalog()
    clouds = {c for i in items for c in _node_clouds(i.props, catalog) if c}
    if not clouds and cloud is not None:
        clouds = {cloud}
    if len(clouds) != 1:
        raise InputError.single(path, "resource_changes", f"names node types of {', '.join(sorted(clouds)) or 'no'} "
                                "cloud(s): the cost model prices one cloud.",
                                "pass the plan of one workspace, with node_type_id set on its clusters or pools.")
    resources = [Resource(urn=i.urn, id=str(i.props.get(_ID[i.resource_type]) or i.name), type=i.resource_type,
                          name=i.name, inputs=dict(i.props)) for i in items]
    return Plan.model_validate({"stack": Path(path).stem, "project": PROJECT, "stack_file": path,
                                "cloud": clouds.pop(), "resources": resources,
                                "assumptions": {k: u.default for k, u in USAGE_DEFAULTS.items()}})


def _node_clouds(props: Any, catalog: Catalog) -> set[str | None]:
    """The clouds of every node type an object names, however deep (a job's clusters)."""
    found: set[str | None] = set()
    if isinstance(props, Mapping):
        for key, value in props.items():
            if key in ("node_type_id", "driver_node_type_id") and isinstance(value, str):
                found.add(catalog.cloud_of(value))
            else:
                found |= _node_clouds(value, catalog)
    elif isinstance(props, list):
        for value in props:
            found |= _node_clouds(value, catalog)
    return found


def priced_terraform_plan(path: str, *, policy_config: Any, prices: str | None, cloud: str | None = None,
                          region: str | None = None, var_files: Sequence[str] = (), as_code: bool = False,
                          allow_empty: bool = False) -> Plan:
    """The plan priced (``--prices`` as for a stack; ``region``: ``--region``, the workspace's region), with the
    findings ``check --terraform-plan`` gives it. ``path`` may be Terraform code as written (a ``.tf`` file or a
    module directory, ``--terraform``; ``var_files``: its ``--var-file``s; ``as_code``: read as code whatever it
    holds; ``allow_empty``: a directory with no .tf is an empty module, a diff's base before the first .tf): read as
    the plan Terraform would make."""
    skipped: list[Skipped] = []
    if as_code or is_terraform_code(path):
        code = terraform_module_read(path, var_files, allow_empty=allow_empty)
        items, skipped = code.items, code.not_evaluated
    else:
        items = terraform_items(require_terraform_plan(path), path)  # the file read once: priced and judged
    plan = terraform_plan(path, items, cloud)
    plan.region = checked_region(region, plan.cloud)
    plan.cost = price_plan(plan, None, prices)
    for block in skipped:  # a total that leaves out what was not evaluated says so, naming it
        plan.cost.total.complete = False
        plan.cost.total.unpriced.append(block.address)
        plan.cost.unpriced.append(UnpricedItem(urn=f"terraform-not-evaluated:{block.address}", name=block.address,
                                               reason=f"not evaluated: {block.reason}"))
    plan.violations = audit_items(items, policy_config).violations + not_evaluated_findings(skipped)
    return plan
