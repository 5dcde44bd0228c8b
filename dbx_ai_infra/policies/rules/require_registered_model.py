"""An endpoint serves a model version that exists when the endpoint is created.

Model Serving creates an endpoint only for a registered model version it can read (the serving docs: the endpoint's
creator needs EXECUTE on an existing model version; databricks/mlops-stacks#217 shows the failure). A stack that
creates its own catalog and, in the same run, an endpoint serving a model of that catalog fails on its first ``pulumi
up``: nothing can be registered in a catalog created seconds earlier. So such a stack deploys in two runs: the first
creates the catalog (no endpoint), someone registers the model version, and the second adds the endpoint, which the
stack declares with ``model_registered: true`` on it. A stack rule: it needs to know which catalogs the same plan
creates and what the stack file declares of its endpoints (`dbx_ai_infra.policies.rule.StackView.served`), so it
judges the stack once; its finding is on the endpoint. The pack does not see the stack file's declarations, so it is
judged offline (``preview``, ``check``), not by the pack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import CATALOG, MODEL_SERVING_ENDPOINT
from dbx_ai_infra.policies.rule import Rule, ServedModel, StackFinding, StackView

NAME = "databricks-serving-require-registered-model"


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


def check(stack: StackView, config: Mapping[str, Any]) -> list[StackFinding]:
    """Each endpoint serving a model of a catalog the plan creates that the stack does not declare registered, on the
    endpoint (on the stack where the plan has no such endpoint); and a note for each declared one."""
    plan = stack.plan
    created = {str(r.inputs.get("name")) for r in plan.resources if r.type == CATALOG}
    endpoints = {str(r.inputs.get("name")): r for r in plan.resources if r.type == MODEL_SERVING_ENDPOINT}
    notes = [StackFinding(note, note=True) for note in awaiting(stack.served, created)]
    return notes + [StackFinding(message, endpoints.get(endpoint))
                    for endpoint, message in unregistered(stack.served, created)]


RULE = Rule(
    name=NAME,
    order=1010,
    description=("A serving endpoint serving a model of a catalog the same stack creates is declared to come after the "
                 "model version's registration (model_registered: true): on the first run no version exists there."),
    details=("Else the endpoint's creation fails. A [stack rule](../policies.md#stack-rules): "
             "judged by `preview` and `check` on the plan's catalogs and the stack's endpoints (see "
             "[two runs](../deploying.md#deploying-with-pulumi)); the Pulumi policy pack does not see the stack file's "
             "declaration, so run `check` before `pulumi up`."),
    enforcement="mandatory",
    scope="stack",
    stack_check=check,
    remediation="Deploy the catalog first, register the model version, then add the endpoint with "
                "model_registered: true.",
    severity="high",
    stack_fields=("serving",),
    sources=("pulumi",),
)
