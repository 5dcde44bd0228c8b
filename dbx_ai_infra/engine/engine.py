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

from dbx_ai_infra import PACKAGE_DIR, pulumi_private
from dbx_ai_infra.dbxtypes.errors import ProgramError
from dbx_ai_infra.dbxtypes.plan import Plan, Resource
from dbx_ai_infra.dbxtypes.stack_files import display_path
from dbx_ai_infra.dbxtypes.vocabulary import PROGRAM_RESOURCE_TYPES, PROJECT, STACK_TYPE
from dbx_ai_infra.engine.heap import settled
from dbx_ai_infra.engine.mocks import mock_id, mock_state
from dbx_ai_infra.stackspec import LoadedStack
from dbx_ai_infra.stackspec.load import PROGRAM_STACK

#: The Pulumi program (the project's __main__.py runs it under `pulumi up`).
PROGRAM = PACKAGE_DIR / "program.py"


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


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict]:
        # the id the provider would give the resource and the state a create returns (`dbx_ai_infra.engine.mocks`)
        inputs = dict(args.inputs)
        return mock_id(args.typ, args.name, inputs), mock_state(args.typ, args.name, inputs)

    def call(self, args: mocks.MockCallArgs) -> tuple[dict, None]:
        return {}, None


def _timeouts(request: Any) -> dict[str, Any]:
    """``{"custom_timeouts": {...}}`` when the registration carries custom timeouts (the RegisterResourceRequest's
    ``customTimeouts``), else nothing."""
    given = getattr(request, "customTimeouts", None)
    found = {k: getattr(given, k) for k in ("create", "update", "delete") if given is not None and getattr(given, k)}
    return {"custom_timeouts": found} if found else {}


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
                "dependencies": sorted(set(request.dependencies)),
                **_timeouts(request),
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

    with pulumi_private.without_source_positions():  # the mocks ignore them; they cost a quarter of a run
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
    with settled():
        pulumi_private.use_provider_subset("pulumi_databricks", PROGRAM_RESOURCE_TYPES)
    try:
        # Pulumi keeps its runtime settings in context variables: an empty context is a clean runtime. (A signal
        # must not raise in here: dbx_ai_infra.engine.interrupts.)
        return contextvars.Context().run(_run, stack, program, not from_config)
    except pulumi.RunError as exc:
        raise ProgramError(str(exc)) from None
