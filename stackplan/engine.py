"""The offline engine: runs the real Pulumi program (``__main__.py``) under Pulumi's mock runtime.

It records every registered resource (type token, name, URN, parent, inputs as plain JSON) into a plan.
Nothing here knows about components or policies: the program decides what exists; the engine listens.
"""

from __future__ import annotations

import contextvars
import logging
import runpy
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks

import pulumi_private
from dbxtypes.errors import ProgramError
from dbxtypes.plan import Plan, Resource
from dbxtypes.vocabulary import (
    CATALOG,
    MODEL_SERVING_ENDPOINT,
    PROGRAM_RESOURCE_TYPES,
    PROJECT,
    SCHEMA,
    STACK_TYPE,
    VOLUME,
)
from stackspec import LoadedStack
from stackspec.load import PROGRAM_STACK, REPO_ROOT, display_path

PROGRAM = REPO_ROOT / "__main__.py"


def plain(value: Any) -> Any:
    """Mock inputs as JSON: whole floats back to ints (Pulumi's wire format has only doubles)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def mock_id(type_: str, name: str, inputs: dict[str, Any]) -> str:
    """The id the real provider gives a resource where it is a name (Unity Catalog: a catalog is its name, a schema
    ``catalog.schema``, a volume ``catalog.schema.volume``; Terraform provider docs, Import sections); otherwise a
    readable placeholder ``<resource name>-id``."""
    if type_ == CATALOG and inputs.get("name"):
        return str(inputs["name"])
    if type_ == SCHEMA and inputs.get("catalogName") and inputs.get("name"):
        return f"{inputs['catalogName']}.{inputs['name']}"
    if type_ == VOLUME and all(inputs.get(k) for k in ("catalogName", "schemaName", "name")):
        return f"{inputs['catalogName']}.{inputs['schemaName']}.{inputs['name']}"
    return f"{name}-id"


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict]:
        # The state echoes the inputs, as a create would; an endpoint also gets the id its permissions name.
        state = dict(args.inputs)
        if args.typ == MODEL_SERVING_ENDPOINT:
            state["servingEndpointId"] = f"{args.name}-endpoint-id"
        return mock_id(args.typ, args.name, dict(args.inputs)), state

    def call(self, args: mocks.MockCallArgs) -> tuple[dict, None]:
        return {}, None


class _RecordingMonitor(pulumi_private.MockMonitor):
    """A mock monitor that keeps every registration, with URNs shaped as the Pulumi engine makes them."""

    def __init__(self, mock: pulumi.runtime.Mocks) -> None:
        super().__init__(mock)
        self.recorded: list[dict[str, Any]] = []

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        # The engine leaves the root stack's type out of its children's qualified types.
        if parent and parent.split("::")[2] != STACK_TYPE:
            type_ = parent.split("::")[2] + "$" + type_
        return "urn:pulumi:" + "::".join([pulumi.get_stack(), pulumi.get_project(), type_, name])

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)
        if request.type != STACK_TYPE:
            parent = request.parent if request.parent and STACK_TYPE not in request.parent.split("::")[2] else ""
            self.recorded.append({
                "urn": response.urn,
                "id": response.id or None,
                "type": request.type,
                "name": request.name,
                "parent": parent or None,
                "inputs": plain(pulumi_private.deserialize_properties(request.object)),
            })
        return response


def _run(stack: LoadedStack, program: Path, handed: bool) -> Plan:
    pulumi.runtime.set_all_config(stack.config)
    if handed:  # the spec was validated once, when the stack was loaded: the program takes it as it is
        PROGRAM_STACK.set(stack.resolved)
    mock = _Mocks()
    monitor = _RecordingMonitor(mock)
    quiet = logging.getLogger("stackplan.pulumi")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    pulumi.runtime.set_mocks(mock, project=PROJECT, stack=stack.name, preview=True, monitor=monitor, logger=quiet)

    def program_main() -> None:
        runpy.run_path(str(program), run_name="__main__")

    pulumi_private.run_program_function(program_main)
    outputs = {k: plain(pulumi_private.sync_await(pulumi.Output.from_input(v).future()))
               for k, v in pulumi_private.root_resource_outputs().items()}
    return Plan(
        stack=stack.name,
        project=PROJECT,
        stack_file=display_path(stack.path),
        cloud=stack.spec.cloud,
        # Registration order depends on the event loop's scheduling: sort so that a plan is reproducible.
        resources=[Resource(**r) for r in sorted(monitor.recorded, key=lambda r: r["urn"])],
        outputs=outputs,
    )


def run_program(stack: LoadedStack, program: Path = PROGRAM, *, from_config: bool = False) -> Plan:
    """Run the program for one stack and return its plan. Each run gets fresh Pulumi runtime state.

    The program takes the stack as loaded (validated once); with ``from_config`` it reads and validates the Pulumi
    config instead, as under `pulumi up`."""
    # The provider SDK with only the resource modules the program uses (the same classes `pulumi up` runs): the
    # whole package is most of a run's start-up (issue 23).
    pulumi_private.use_provider_subset("pulumi_databricks", PROGRAM_RESOURCE_TYPES)
    try:
        # Pulumi keeps its runtime settings in context variables: an empty context is a clean runtime.
        return contextvars.Context().run(_run, stack, program, not from_config)
    except pulumi.RunError as exc:
        raise ProgramError(str(exc)) from None
