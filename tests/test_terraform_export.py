"""``export-terraform`` (issue 30, part 1): each shipped stack's plan as Terraform JSON, held against the provider's
documented attribute names (`dbx_ai_infra.dbxtypes.terraform_docs`), with references instead of the engine's ids and the plan's
dependencies."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SHIPPED

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.plan import Plan, Resource
from dbx_ai_infra.dbxtypes.shape import MAP_VALUED_KEYS
from dbx_ai_infra.dbxtypes.terraform_docs import RESOURCES, TAG, documented, names_in
from dbx_ai_infra.engine.mocks import mock_state
from dbx_ai_infra.engine.tfexport import (
    NAMED_BY_NAME,
    PROVIDER_SOURCE,
    PROVIDER_VERSION,
    terraform_config,
    terraform_type,
)

REFERENCE = re.compile(r"\$\{(databricks_[a-z_]+)\.([A-Za-z0-9_-]+)\.([a-z_]+)\}")


@pytest.fixture(scope="module")
def export_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tf")


@pytest.fixture(scope="module")
def exported(export_root: Path) -> dict[str, tuple[dict[str, Any], Any]]:
    """Each shipped stack -> (its main.tf.json as the CLI wrote it under ``export_root/<stack>``, its plan)."""
    from dbx_ai_infra.engine.pipeline import build_plan

    out: dict[str, tuple[dict[str, Any], Any]] = {}
    root = export_root
    for stack in SHIPPED:
        assert main(["export-terraform", "--stack", stack, "--out", str(root / stack)]) == 0
        doc = json.loads((root / stack / "main.tf.json").read_text(encoding="utf-8"))
        out[stack] = (doc, build_plan(stack, with_policies=False))
    return out


def attribute_names(resource: str, body: Any, path: str = "") -> Iterator[tuple[str, str, str]]:
    """(the resource whose docs must list it, the name, where) for every argument and block name of a body; a map's
    keys are the user's, not names; a job's ``new_cluster`` holds the cluster's arguments (job.md: "supports all
    the attributes of databricks_cluster")."""
    if isinstance(body, list):
        for item in body:
            yield from attribute_names(resource, item, path)
        return
    if not isinstance(body, dict):
        return
    for key, value in body.items():
        if key in ("//", "depends_on"):
            continue
        yield resource, key, f"{path}{key}"
        if key in MAP_VALUED_KEYS and isinstance(value, dict):
            continue
        inner = "databricks_cluster" if resource == "databricks_job" and key == "new_cluster" else resource
        # a provisioned-throughput endpoint's ai_gateway is the Model Serving endpoint's block: its page lists the
        # block's first names and sends the reader to model_serving.md for the rest ("For details see the
        # description of `rate_limits` block above"), and pulumi-databricks 1.118, generated from the provider's
        # schema, gives it the same fields (ModelServingProvisionedThroughputAiGatewayInferenceTableConfigArgs:
        # catalog_name, schema_name, table_name_prefix, enabled; ...RateLimitArgs: calls, key, renewal_period)
        if resource == "databricks_model_serving_provisioned_throughput" and key == "ai_gateway":
            inner = "databricks_model_serving"
        yield from attribute_names(inner, value, f"{path}{key}.")


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_attribute_is_one_the_provider_documents(exported, stack: str) -> None:
    doc, _ = exported[stack]
    names = documented()["resources"]
    undocumented = [(kind, where) for kind, named in doc["resource"].items() for body in named.values()
                    for owner, name, where in attribute_names(kind, body) if name not in names[owner]]
    assert undocumented == []
    assert set(doc["resource"]) <= set(RESOURCES)


@pytest.mark.parametrize("stack", SHIPPED)
def test_one_resource_per_plan_resource_with_a_terraform_safe_name(exported, stack: str) -> None:
    doc, plan = exported[stack]
    provider_resources = [r for r in plan.resources if terraform_type(r.type)]
    written = [(kind, name) for kind, named in doc["resource"].items() for name in named]
    assert len(written) == len(provider_resources) > 0
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name) for _, name in written)
    assert sorted(k for k, _ in written) == sorted(str(terraform_type(r.type)) for r in provider_resources)


def mock_values(plan: Any) -> set[str]:
    """Every value the offline engine made up for a resource: its id and the outputs its kind's mock adds."""
    # a catalog's, a storage credential's and an external location's id is its name, which it states itself
    values = {r.id for r in plan.resources if r.id and terraform_type(r.type) and r.type not in NAMED_BY_NAME}
    for r in plan.resources:
        if terraform_type(r.type):
            values |= {v for k, v in mock_state(r.type, r.name, dict(r.inputs)).items()
                       if k not in r.inputs and isinstance(v, str)}
    return values


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, str):
        yield value


@pytest.mark.parametrize("stack", SHIPPED)
def test_references_not_the_engines_ids(exported, stack: str) -> None:
    doc, plan = exported[stack]
    ids = mock_values(plan)
    leaked = [s for s in strings({**doc["resource"], **doc.get("output", {})}) for mock in ids
              if s == mock or json.dumps(mock) in s]
    assert leaked == []
    # every reference names a resource of the document, by an attribute the provider documents
    names = documented()["resources"]
    for text in strings(doc):
        for kind, name, attribute in REFERENCE.findall(text):
            assert name in doc["resource"][kind], text
            assert attribute in names[kind] or attribute in ("id", "name"), text


def test_a_pool_a_policy_and_a_volume_are_referenced_as_terraform_writes_them(exported) -> None:
    doc, _ = exported["prod"]
    clusters = doc["resource"]["databricks_cluster"]
    inference = next(c for c in clusters.values() if c.get("autoscale"))
    assert REFERENCE.fullmatch(inference["instance_pool_id"]).group(1) == "databricks_instance_pool"
    assert REFERENCE.fullmatch(inference["policy_id"]).group(1) == "databricks_cluster_policy"
    # a policy that pins the pool names it inside its JSON definition, as a reference in the template
    policies = doc["resource"]["databricks_cluster_policy"]
    assert any("${databricks_instance_pool." in p["definition"] for p in policies.values())
    grants = doc["resource"]["databricks_grants"]
    assert any(str(g.get("volume", "")).startswith("${databricks_volume.") for g in grants.values())
    schemas = doc["resource"]["databricks_schema"]
    assert all(s["catalog_name"].startswith("${databricks_catalog.") for s in schemas.values())
    # the stack's outputs: ids as references (in a map of them too), names as they are
    assert doc["output"]["training_job_id"]["value"].startswith("${databricks_job.")
    assert all(v.startswith("${databricks_cluster_policy.")
               for v in doc["output"]["cluster_policy_ids"]["value"].values())
    assert doc["output"]["checkpoint_dir"]["value"].startswith("/Volumes/")


@pytest.mark.parametrize("stack", SHIPPED)
def test_depends_on_carries_the_plans_dependencies(exported, stack: str) -> None:
    doc, plan = exported[stack]
    address = {}
    for kind, named in doc["resource"].items():
        for name in named:
            address[(kind, name)] = f"{kind}.{name}"
    by_urn = {r.urn: r for r in plan.resources}
    for r in plan.resources:
        kind = terraform_type(r.type)
        if not kind:
            continue
        body = next(b for n, b in doc["resource"][kind].items() if n == r.name.replace(".", "_"))
        depends = set(body.get("depends_on", []))
        assert all(tuple(a.split(".", 1)) in address for a in depends)
        for dep in r.dependencies:
            target = by_urn.get(dep)
            if target is not None and terraform_type(target.type):
                assert f"{terraform_type(target.type)}.{target.name}" in depends


def test_the_provider_block_takes_no_credentials_and_the_version_is_the_bridged_one(exported) -> None:
    doc, _ = exported["dev"]
    provider = doc["terraform"]["required_providers"]["databricks"]
    assert provider == {"source": PROVIDER_SOURCE, "version": PROVIDER_VERSION}
    assert set(doc["provider"]["databricks"]) == {"//"}  # host and credentials from the environment or a profile
    assert PROVIDER_VERSION == f"~> {TAG.removeprefix('v')}"  # the release whose docs the names are checked against
    assert documented()["tag"] == TAG and re.fullmatch(r"[0-9a-f]{40}", documented()["commit"])


def terraform(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """Terraform in ``cwd``, offline: its home (CLI config, plugin cache) a scratch directory, no version check."""
    env = {**os.environ, "HOME": str(home), "CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1"}
    return subprocess.run(["terraform", *args, "-no-color"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.skipif(shutil.which("terraform") is None, reason="Terraform is not on PATH")
def test_terraform_itself_reads_every_export(exported, export_root: Path, tmp_path: Path) -> None:
    """`terraform providers` loads the configuration as `init` does (JSON syntax, block structure, the expressions
    of depends_on and the templates) without the provider, which cannot be downloaded here; a broken copy fails it."""
    for stack in SHIPPED:
        done = terraform(["providers"], export_root / stack, tmp_path)
        assert done.returncode == 0, done.stderr
        assert f"{PROVIDER_SOURCE}] {PROVIDER_VERSION}" in done.stdout
    broken = tmp_path / "broken"
    broken.mkdir()
    doc, _ = exported["dev"]
    kind, named = next(iter(doc["resource"].items()))
    body = next(iter(named.values()))
    (broken / "main.tf.json").write_text(json.dumps({**doc, "resource": {kind: {"x": {
        **body, "depends_on": ["not an address"]}}}}), encoding="utf-8")
    done = terraform(["providers"], broken, tmp_path)
    assert done.returncode != 0 and "Invalid expression" in done.stderr
    assert sorted(p.name for p in (export_root / "dev").iterdir()) == ["main.tf.json"]  # it wrote nothing there


def test_singular_blocks_where_pulumi_has_plural_lists(exported) -> None:
    doc, _ = exported["prod"]
    job = next(iter(doc["resource"]["databricks_job"].values()))
    assert "task" in job and "job_cluster" in job and "tasks" not in job
    assert isinstance(job["task"], list) and "library" in job["task"][0]
    assert all("grant" in g and "grants" not in g for g in doc["resource"]["databricks_grants"].values())
    assert all("access_control" in p for p in doc["resource"]["databricks_permissions"].values())


def test_template_characters_in_a_value_are_escaped() -> None:
    plan = Plan(stack="t", project="dbx-ai-infra", cloud="aws", resources=[Resource(
        urn="urn:pulumi:t::dbx-ai-infra::databricks:index/clusterPolicy:ClusterPolicy::p", id="p-id",
        type="databricks:index/clusterPolicy:ClusterPolicy", name="p",
        inputs={"name": "a ${var.x} and %{ if }", "description": "plain"})])
    body = terraform_config(plan)["resource"]["databricks_cluster_policy"]["p"]
    assert body["name"] == "a $${var.x} and %%{ if }" and body["description"] == "plain"


def test_the_docs_reader_takes_bullets_headings_and_the_resources_own_examples() -> None:
    page = """# databricks_thing resource
## Argument Reference
* `name` - (Required) the name.
### library Configuration Block
```hcl
resource "databricks_thing" "this" {
  pypi {
    package = "x"
  }
}
resource "databricks_other" "that" {
  not_ours = 1
}
```
A fragment of the page's own resource:
```hcl
init_scripts {
  volumes {
    destination = "/Volumes/x"
  }
}
```
```hcl
data "databricks_other" "x" {
  nor_this = 1
}
```
"""
    assert names_in(page, "databricks_thing") == {"name", "library", "pypi", "package", "init_scripts", "volumes",
                                                  "destination"}


def test_export_terraform_cli_errors_are_exit_2_and_write_nothing(tmp_path: Path, capsys) -> None:
    taken = tmp_path / "file"
    taken.write_text("keep", encoding="utf-8")
    assert main(["export-terraform", "--stack", "dev", "--out", str(taken)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "Traceback" not in err and taken.read_text(encoding="utf-8") == "keep"
    assert main(["export-terraform", "--stack", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()
