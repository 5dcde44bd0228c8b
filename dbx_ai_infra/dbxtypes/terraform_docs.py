"""The Terraform provider's documented attribute names, per resource, as a snapshot ``export-terraform`` is tested
against.

The source is the provider's own documentation, ``docs/resources/<resource>.md`` of
``databricks/terraform-provider-databricks`` at the tag the export's version constraint names (`TAG`). A name is
documented when the page lists it (a bullet ``* `name` - ...``), heads a section with it (``### library
Configuration Block``), or writes it in one of the page's HCL examples of that resource (``library {``,
``package = ...``), or in an example fragment of it (an HCL block without a ``resource`` head). The snapshot
(``dbx_ai_infra/dbxtypes/data/terraform_provider_docs.json``) keeps, per resource, the sorted names and the commit they
were read at; ``make terraform-docs TF_PROVIDER_REPO=DIR`` writes it from a clone of the provider. The machines that
build this project cannot download the provider, so the documentation is the provider spelling we can check against (the
README's Terraform section says what is and is not checked).

This is a list of names per page, not a schema: it tells a misspelt or invented attribute from a documented one, not
whether a documented name sits in the right block.

The snapshot also keeps, per resource, the defaults the page documents for its top-level arguments (a bullet of the
``## Argument Reference`` section, before its first block heading, that says ``Defaults to `60``` or ``default value
is `X```): what a plan carries for an argument the configuration leaves out (`defaults`). The provider's schema sets
the same (``clusters/resource_cluster.go``: ``autotermination_minutes`` ``Optional: true, Default: 60``, v1.128.0).
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).resolve().parent / "data" / "terraform_provider_docs.json"
#: The provider release the export's version constraint names (its reasoning: `dbx_ai_infra.engine.tfexport`).
TAG = "v1.128.0"
#: The resources the export writes (the plan's resource types, as Terraform names them).
RESOURCES = ("databricks_catalog", "databricks_cluster", "databricks_cluster_policy", "databricks_external_location",
             "databricks_file", "databricks_grant", "databricks_grants", "databricks_instance_pool", "databricks_job",
             "databricks_model_serving", "databricks_model_serving_provisioned_throughput", "databricks_permissions",
             "databricks_schema", "databricks_storage_credential", "databricks_volume")

_BULLET = re.compile(r"^\s*[*-]\s+`([a-z][a-z0-9_]*)`", re.M)
_HEADING = re.compile(r"^#{2,6}\s+`?([a-z][a-z0-9_]*)`?(?:\s|$)", re.M)
_FENCE = re.compile(r"```(?:hcl|terraform)?\n(.*?)```", re.S)
_HCL_NAME = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*(?:=|\{)", re.M)
_RESOURCE_HEAD = re.compile(r'^resource\s+"([a-z0-9_]+)"\s+"[^"]*"\s*\{', re.M)
#: A documented default of one argument, in its bullet: ``Defaults to `60`.``, ``the default value is `100`.``
_DEFAULT = re.compile(r"(?:[Dd]efaults? to|default value is|[Dd]efault:)\s+`([^`]+)`")


_TIMEOUTS = re.compile(r"^##\s+Timeouts\s*$(.*?)(?=^##\s|\Z)", re.M | re.S)
_CODE_NAME = re.compile(r"`([a-z][a-z0-9_]*)`")


def names_in(page: str, resource: str) -> set[str]:
    """The attribute and block names one documentation page gives for ``resource``: with those the page's
    "Timeouts" section names in its prose (`` `timeouts` block ... `create` and `update` ``)."""
    names = set(_BULLET.findall(page)) | set(_HEADING.findall(page))
    for section in _TIMEOUTS.findall(page):
        names |= set(_CODE_NAME.findall(section))
    for fence in _FENCE.findall(page):
        names |= _names_in_examples(fence, resource)
    return names


def defaults_in(page: str) -> dict[str, Any]:
    """The documented defaults of the page's top-level arguments: the bullets of ``## Argument Reference`` before
    the section's first block heading (``### library Configuration Block``), each with its default as a number, a
    boolean or a string."""
    section = re.split(r"^## Argument Reference\s*$", page, maxsplit=1, flags=re.M)
    if len(section) < 2:
        return {}
    top = re.split(r"^#{2,3}\s", section[1], maxsplit=1, flags=re.M)[0]
    out: dict[str, Any] = {}
    for line in top.splitlines():
        bullet, default = _BULLET.match(line), _DEFAULT.search(line)
        if bullet and default:
            out[bullet.group(1)] = _literal(default.group(1))
    return out


def _literal(text: str) -> Any:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    return text.strip('"')


def _names_in_examples(hcl: str, resource: str) -> set[str]:
    """Names written inside the example's ``resource "<resource>" ...`` blocks (braces counted; other resources'
    blocks, locals and variables left out); an example without a ``resource`` head is a fragment of the page's own
    resource (``init_scripts { volumes { ... } }``): all of its names."""
    if not _RESOURCE_HEAD.search(hcl) and not re.search(r"^(data|variable|locals|output|module|provider)\b", hcl,
                                                          re.M):
        return set(_HCL_NAME.findall(hcl))
    out: set[str] = set()
    for head in _RESOURCE_HEAD.finditer(hcl):
        if head.group(1) != resource:
            continue
        depth, end = 1, head.end()
        while end < len(hcl) and depth:
            depth += {"{": 1, "}": -1}.get(hcl[end], 0)
            end += 1
        out |= set(_HCL_NAME.findall(hcl[head.end():end]))
    return out


def generate(repo: str, tag: str = TAG, resources: Iterable[str] = RESOURCES) -> dict[str, Any]:
    """The snapshot, read from a clone of the provider (``git show <tag>:docs/resources/<name>.md``)."""

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout

    commit = git("rev-parse", f"{tag}^{{commit}}").strip()
    texts = {r: git("show", f"{tag}:docs/resources/{r.removeprefix('databricks_')}.md") for r in resources}
    pages = {r: names_in(text, r) for r, text in texts.items()}
    defaults = {r: found for r, text in sorted(texts.items()) if (found := defaults_in(text))}
    return {"source": "github.com/databricks/terraform-provider-databricks docs/resources/*.md", "tag": tag,
            "commit": commit, "resources": {r: sorted(names) for r, names in sorted(pages.items())},
            "defaults": defaults}


@functools.cache
def documented() -> Mapping[str, Any]:
    """The snapshot (`SNAPSHOT`)."""
    return dict(json.loads(SNAPSHOT.read_text(encoding="utf-8")))


def documented_names(resource: str) -> frozenset[str]:
    """The names the provider documents for ``resource`` (empty for a resource the snapshot does not cover)."""
    return frozenset(documented()["resources"].get(resource, ()))


def documented_defaults(resource: str) -> Mapping[str, Any]:
    """The documented defaults of ``resource``'s top-level arguments (`defaults_in`)."""
    return dict(documented().get("defaults", {}).get(resource, {}))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m dbx_ai_infra.dbxtypes.terraform_docs PATH_OF_A_CLONE_OF_terraform-provider-databricks",
              file=sys.stderr)
        return 2
    print(json.dumps(generate(args[0]), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
