"""The Terraform provider's documented attribute names, per resource, as a snapshot ``export-terraform`` is tested
against.

The source is the provider's own documentation, ``docs/resources/<resource>.md`` of
``databricks/terraform-provider-databricks`` at the tag the export's version constraint names (`TAG`). A name is
documented when the page lists it (a bullet ``* `name` - ...``), heads a section with it (``### library
Configuration Block``), or writes it in one of the page's HCL examples of that resource (``library {``,
``package = ...``), or in an example fragment of it (an HCL block without a ``resource`` head). The snapshot
(``dbxtypes/data/terraform_provider_docs.json``) keeps, per resource, the sorted names and the commit they were read
at; ``make terraform-docs TF_PROVIDER_REPO=DIR`` writes it from a clone of the
provider. The machines that build this project cannot download the provider, so the documentation is the provider
spelling we can check against (the README's Terraform section says what is and is not checked).

This is a list of names per page, not a schema: it tells a misspelt or invented attribute from a documented one, not
whether a documented name sits in the right block.
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
#: The provider release the export's version constraint names (its reasoning: `stackplan.tfexport`).
TAG = "v1.128.0"
#: The resources the export writes (the plan's resource types, as Terraform names them).
RESOURCES = ("databricks_catalog", "databricks_cluster", "databricks_cluster_policy", "databricks_file",
             "databricks_grants", "databricks_instance_pool", "databricks_job", "databricks_model_serving",
             "databricks_permissions", "databricks_schema", "databricks_volume")

_BULLET = re.compile(r"^\s*[*-]\s+`([a-z][a-z0-9_]*)`", re.M)
_HEADING = re.compile(r"^#{2,6}\s+`?([a-z][a-z0-9_]*)`?(?:\s|$)", re.M)
_FENCE = re.compile(r"```(?:hcl|terraform)?\n(.*?)```", re.S)
_HCL_NAME = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*(?:=|\{)", re.M)
_RESOURCE_HEAD = re.compile(r'^resource\s+"([a-z0-9_]+)"\s+"[^"]*"\s*\{', re.M)


def names_in(page: str, resource: str) -> set[str]:
    """The attribute and block names one documentation page gives for ``resource``."""
    names = set(_BULLET.findall(page)) | set(_HEADING.findall(page))
    for fence in _FENCE.findall(page):
        names |= _names_in_examples(fence, resource)
    return names


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
    pages = {r: names_in(git("show", f"{tag}:docs/resources/{r.removeprefix('databricks_')}.md"), r)
             for r in resources}
    return {"source": "github.com/databricks/terraform-provider-databricks docs/resources/*.md", "tag": tag,
            "commit": commit, "resources": {r: sorted(names) for r, names in sorted(pages.items())}}


@functools.cache
def documented() -> Mapping[str, Any]:
    """The snapshot (`SNAPSHOT`)."""
    return dict(json.loads(SNAPSHOT.read_text(encoding="utf-8")))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m dbxtypes.terraform_docs PATH_OF_A_CLONE_OF_terraform-provider-databricks",
              file=sys.stderr)
        return 2
    print(json.dumps(generate(args[0]), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
