"""The documentation (the README and the docs site) tells the truth about the code: rules, inputs, set-up commands."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from conftest import documentation, make_dry_run
from pydantic import BaseModel

from dbx_ai_infra.policies.registry import RULES_BY_NAME
from dbx_ai_infra.stackspec import models

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
DOCS = documentation()
POLICIES_PAGE = (REPO / "docs" / "policies.md").read_text()
POLICY_INDEX = (REPO / "docs" / "reference" / "policies.md").read_text()


def _gen_reference() -> ModuleType:
    """docs/gen_reference.py, the writer of the generated reference pages (not a package module)."""
    spec = importlib.util.spec_from_file_location("gen_reference", REPO / "docs" / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(page: str, name: str) -> str | None:
    return next((line for line in page.splitlines() if line.startswith(f"| `{name}` |")), None)


@pytest.mark.parametrize("rule", list(RULES_BY_NAME.values()), ids=list(RULES_BY_NAME))
def test_every_policy_is_in_the_policy_index_with_its_level_details_and_thresholds(rule):
    """The policy index (generated) is the rules' one table: each rule's row says what its module says, and the
    hand-written policies page holds no second copy of it."""
    row = _row(POLICY_INDEX, rule.name)
    assert row is not None, f"{rule.name} missing from the policy index (run make docs-reference)"
    assert f"| {rule.enforcement} |" in row
    assert " ".join(f"{rule.description} {rule.details}".split()).replace("|", "\\|") in row
    for key, value in rule.thresholds.items():
        assert f"`{key}` = `{json.dumps(list(value) if isinstance(value, tuple) else value)}`" in row
    assert _row(POLICIES_PAGE, rule.name) is None, f"{rule.name}: its row belongs to the policy index only"


def test_a_new_rule_module_is_documented_by_its_module_alone(tmp_path, monkeypatch):
    """Issue 56, item 5: a new rule is its module (and its tests). A module put in the rules package is found by the
    registry and is in the generated policy index, its row written from its ``Rule`` (name, level, severity,
    description and details, resource kinds, fix, typed thresholds), no page edited by hand."""
    from dbx_ai_infra.policies import rules

    module = "require_example_owner"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent('''
        from typing import Annotated

        from pydantic import Field

        from dbx_ai_infra.dbxtypes.shape import ClusterShape
        from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, INSTANCE_POOL
        from dbx_ai_infra.policies.rule import Rule, Thresholds


        class Settings(Thresholds):
            max_owners: Annotated[int, Field(ge=1, description="Most owners a cluster may name.")] = 3


        RULE = Rule(name="databricks-cluster-require-example-owner", order=99_999,
                    description="Clusters must name an owner.", details="An owner is the tag `owner`.",
                    enforcement="advisory", severity="low", resource_types=(CLUSTER, INSTANCE_POOL),
                    check=lambda view, config: [], takes=(ClusterShape,), remediation="Add the tag owner.",
                    settings=Settings)
    '''))
    monkeypatch.setattr(rules, "__path__", [*rules.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, f"{rules.__name__}.{module}", raising=False)  # and forget it afterwards

    page = _gen_reference().policies()

    assert _row(POLICY_INDEX, "databricks-cluster-require-example-owner") is None
    assert _row(page, "databricks-cluster-require-example-owner") == (
        "| `databricks-cluster-require-example-owner` | advisory | low | Clusters must name an owner. An owner is the "
        "tag `owner`. | Cluster, InstancePool | Add the tag owner. | `max_owners` = `3`: Most owners a cluster may "
        "name. |")
    assert page.splitlines()[-1] == _row(page, "databricks-cluster-require-example-owner"), "after the built-in rules"
    assert all(_row(page, name) is not None for name in RULES_BY_NAME)


SECTIONS = [models.StackSpec, models.TrainingSpec, models.TrainingJobSpec, models.InferenceSpec, models.DevSpec,
            models.ModelSpec, models.UnityCatalogSpec, models.VolumeSpec, models.GrantSpec, models.PoolSpec,
            models.UsageSpec, models.ClusterPoliciesSpec, models.ServingSpec, models.EndpointSpec,
            models.ConcurrencySpec, models.ExceptionSpec, models.WorkloadPermissionsSpec, models.WorkloadUsageSpec,
            models.AccessControlSpec, models.BudgetSpec, models.TrainingWorkloadSpec]


@pytest.mark.parametrize("model", SECTIONS, ids=[m.__name__ for m in SECTIONS])
def test_every_stack_input_is_documented(model: type[BaseModel]):
    for name, field in model.model_fields.items():
        assert f"`{name}`" in DOCS, f"{model.__name__}.{name} is not in the documentation"
        if field.default not in (None, "") and isinstance(field.default, (int, float, str)) and not isinstance(field.default, bool):
            assert re.search(rf"`{re.escape(name)}`[^\n]*`{re.escape(str(field.default))}`", DOCS) or \
                f"{name}: {field.default}" in DOCS, f"default of {model.__name__}.{name} ({field.default}) not shown"


def test_the_two_setup_commands_are_make_targets_and_ci_runs_the_test_one():
    assert "make preview STACK=dev" in README and "make test " in README
    assert make_dry_run("preview", "STACK=dev").rstrip().endswith("-m stackplan preview --stack dev")
    assert ' -m pytest ' in make_dry_run("test").splitlines()[-1]
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_shipped_stacks_are_listed():
    from conftest import SHIPPED

    for name in SHIPPED:
        assert (REPO / "stacks" / f"Pulumi.{name}.yaml").is_file(), name
        assert f"| `{name}` |" in (REPO / "docs" / "stacks.md").read_text(), name  # the table's one home
        assert f"`{name}`" in README, name


def test_the_readme_price_override_example_is_valid(tmp_path):
    from dbx_ai_infra.pricing import load_overrides_file, load_prices

    block = DOCS.split("**Overrides**", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "prices.yaml"
    path.write_text(block)
    book = load_prices(load_overrides_file(path))
    assert book.tier == "enterprise" and book.spot_factor("aws") == 0.35


def test_the_readme_policy_config_example_is_valid():
    import json

    from dbx_ai_infra.policies.registry import load_policy_config

    block = DOCS.split("**Configuring levels and thresholds.**", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    load_policy_config(json.loads(block))


def test_the_smallest_stack_of_the_readme_previews_as_described(tmp_path):
    from dbx_ai_infra.engine.engine import run_program
    from dbx_ai_infra.stackspec import load_stack

    block = README.split("## The smallest stack", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "Pulumi.small.yaml"
    path.write_text(block)
    plan = run_program(load_stack(str(path))).to_json()
    clusters = [r["inputs"] for r in plan["resources"] if r["type"] == "databricks:index/cluster:Cluster"]
    assert [c["nodeTypeId"] for c in clusters] == ["g5.xlarge"] and clusters[0]["numWorkers"] == 0
    assert clusters[0]["customTags"]["gpu_memory_need_gb"] == "16.8"
    assert [r["name"] for r in plan["resources"] if r["type"].endswith("clusterPolicy:ClusterPolicy")] == ["small-policy-dev"]


def test_the_readme_never_suggests_putting_a_host_or_a_token_in_the_committed_stack_file():
    """`pulumi config set --secret databricks:token` encrypts the token into stacks/Pulumi.<stack>.yaml, which is
    committed; the README's own advice is the environment or a profile."""
    for bad in ("databricks:token", "config set databricks:host", "config set --secret databricks"):
        assert bad not in DOCS, bad
    assert "DATABRICKS_CONFIG_PROFILE" in DOCS and "export DATABRICKS_TOKEN" in DOCS


def _tables(text: str) -> list[list[str]]:
    tables: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.startswith("|"):
            tables[-1].append(line)
        elif tables[-1]:
            tables.append([])
    return [t for t in tables if len(t) > 2]


def _first_cells(table: list[str]) -> tuple[str, set[str]]:
    """A table's key column: its header and its rows' first cells."""
    def first(line: str) -> str:
        return re.sub(r"[`*]", "", line.strip().strip("|").split("|")[0]).strip().lower()
    return first(table[0]), {first(row) for row in table[2:]}


def test_no_table_is_stated_twice():
    """Issue 56 item 8: a table has one home (CONTRIBUTING.md and docs/ARCHITECTURE.md held the same "what a change
    touches" table, and the two drifted). Two hand-written tables keyed by the same column over mostly the same rows
    are one table stated twice. The generated reference pages (docs/reference/) and bench/RESULTS.md (a dated history
    of measurements) are left out: the code writes the one, the other repeats its tables by design."""
    pages = [REPO / "README.md", REPO / "CONTRIBUTING.md",
             *sorted(p for p in (REPO / "docs").glob("*.md"))]
    keyed = [(page.relative_to(REPO), *_first_cells(t)) for page in pages for t in _tables(page.read_text())]
    twice = [(a, b, sorted(rows_a & rows_b)) for i, (a, head_a, rows_a) in enumerate(keyed)
             for b, head_b, rows_b in keyed[i + 1:]
             if head_a == head_b and len(rows_a & rows_b) >= 4 and len(rows_a & rows_b) * 2 >= min(len(rows_a), len(rows_b))]
    assert not twice, twice


def test_every_component_is_in_the_overview_table():
    """docs/index.md's "What it builds" is the components' one table (the README names them and points there)."""
    from dbx_ai_infra.dbxtypes import vocabulary

    overview = (REPO / "docs" / "index.md").read_text()
    tokens = [v for k, v in vars(vocabulary).items() if k.endswith("_TYPE") and isinstance(v, str)
              and v.startswith(f"{vocabulary.PROJECT}:")]
    assert len(tokens) >= 11
    for token in tokens:
        assert f"| `{token.rsplit(':', 1)[1]}` (`{token}`) |" in overview, token
        assert f"`{token.rsplit(':', 1)[1]}`" in README, token


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent that is a module, not a package
        return False


@pytest.mark.parametrize("page", ["docs/ARCHITECTURE.md", "CONTRIBUTING.md"])
def test_every_file_and_module_the_contributor_map_names_exists(page):
    """The map of the code names files and modules as they are: a module moved or renamed (issue 56 moved the package
    to dbx_ai_infra/ and renamed seven modules) fails here until the map follows it."""
    import importlib

    text = (REPO / page).read_text()
    paths = set(re.findall(r"`((?:dbx_ai_infra|stackplan|tests|docs|bench|\.ci)/[^`\s<*]*)`", text))
    missing = [p for p in sorted(paths) if not (REPO / p).exists() and p.rstrip("/") != "dbx_ai_infra/stacks"]
    for dotted in sorted(set(re.findall(r"`(dbx_ai_infra(?:\.\w+)+)", text)) - {"dbx_ai_infra.program"}):
        parts = dotted.split(".")
        k = next(k for k in range(len(parts), 0, -1) if _is_module(".".join(parts[:k])))
        obj: object = importlib.import_module(".".join(parts[:k]))
        for name in parts[k:]:
            if not hasattr(obj, name):
                missing.append(dotted)
                break
            obj = getattr(obj, name)
    assert not missing, f"{page} names what the code no longer has: {missing}"
