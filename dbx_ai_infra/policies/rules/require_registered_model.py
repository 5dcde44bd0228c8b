"""An endpoint serves a model version that exists when the endpoint is created.

Model Serving creates an endpoint only for a registered model version it can read (the serving docs: the endpoint's
creator needs EXECUTE on an existing model version; databricks/mlops-stacks#217 shows the failure). A stack that
creates its own catalog and, in the same run, an endpoint serving a model of that catalog fails on its first ``pulumi
up``: nothing can be registered in a catalog created seconds earlier. So such a stack deploys in two runs: the first
creates the catalog (no endpoint), someone registers the model version, and the second adds the endpoint, which the
stack declares with ``model_registered: true`` on it. A stack-level rule: it needs to know which catalogs the same
plan creates, so the pipeline calls `unregistered` with the plan's catalogs and the stack's endpoints; the registry
never calls it per resource.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbx_ai_infra.policies.rule import Rule, View

NAME = "databricks-serving-require-registered-model"


@dataclass(frozen=True)
class ServedModel:
    """One endpoint of a stack and the model version it serves."""

    endpoint: str
    entity: str  #: catalog.schema.model
    version: str
    #: The stack declares the version registered (``serving.endpoints.<name>.model_registered``).
    declared: bool

    @property
    def catalog(self) -> str:
        return self.entity.split(".", 1)[0]


def unregistered(models: Sequence[ServedModel], created_catalogs: set[str]) -> list[tuple[str, str]]:
    """(endpoint, message) for each endpoint serving a model of a catalog the plan itself creates, which the stack does
    not declare registered."""
    return [(m.endpoint, f"endpoint {m.endpoint} serves {m.entity} version {m.version} from catalog {m.catalog}, which "
                         f"this stack creates: no model version can exist there on the first run, and the endpoint's "
                         f"creation fails. Fix: deploy without the endpoint first, register {m.entity} version "
                         f"{m.version} (MLflow, registry_uri databricks-uc), then add the endpoint with "
                         f"model_registered: true (serving.endpoints.{m.endpoint}).")
            for m in models if m.catalog in created_catalogs and not m.declared]


def awaiting(models: Sequence[ServedModel], created_catalogs: set[str]) -> list[str]:
    """What a preview says of the declared ones: the model must be registered before the run that creates them."""
    return [f"serving endpoint {m.endpoint}: {m.entity} version {m.version} must be registered in catalog {m.catalog} "
            f"before the `pulumi up` that creates the endpoint (the stack declares it is: model_registered: true)"
            for m in models if m.catalog in created_catalogs and m.declared]


def check(view: View, config: Mapping[str, Any]) -> list[str]:
    return []  # a stack-level rule: see unregistered


RULE = Rule(
    name=NAME,
    description=("A serving endpoint serving a model of a catalog the same stack creates is declared to come after the "
                 "model version's registration (model_registered: true): on the first run no version exists there."),
    enforcement="mandatory",
    resource_types=(),
    check=check,
    remediation="Deploy the catalog first, register the model version, then add the endpoint with "
                "model_registered: true.",
    severity="high",
    stack_fields=("serving",),
    sources=("pulumi",),
)
