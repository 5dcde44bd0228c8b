"""The program run the way the CLI runs it: a ``LanguageRuntime.Run`` request (the CLI's config map and secret keys,
the monitor and engine addresses) to Pulumi's own Python language host (the ``LanguageServer`` the automation API
serves; the same run strategy as ``pulumi-language-python-exec``), against a small stand-in engine and resource
monitor speaking gRPC, as the CLI's engine would answer. For every shipped stack the program registers the resources
the offline engine records, and no secret value reaches a registered input in plain text.
"""

from __future__ import annotations

import json
import runpy
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from conftest import SHIPPED
from google.protobuf import empty_pb2
from pulumi.automation._server import LanguageServer
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    language_pb2,
    resource_pb2,
    resource_pb2_grpc,
)

from dbx_ai_infra.dbxtypes.vocabulary import PROJECT, STACK_TYPE
from dbx_ai_infra.stackspec import load_stack

PROGRAM = Path(__file__).resolve().parent.parent / "__main__.py"
SECRET = "dapi" + "fedcba9876543210" * 2


class _Monitor(resource_pb2_grpc.ResourceMonitorServicer):
    """Answers registrations as the engine does in a preview: a URN, an id for custom resources, inputs echoed."""

    def __init__(self) -> None:
        self.registered: list[tuple[str, str, bytes]] = []

    def SupportsFeature(self, request, context):  # noqa: N802 - gRPC method names
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id in ("secrets", "resourceReferences"))

    def RegisterResource(self, request, context):  # noqa: N802
        parent_type = request.parent.split("::")[2] if request.parent else ""
        qualified = request.type if not parent_type or parent_type == STACK_TYPE else f"{parent_type}${request.type}"
        urn = f"urn:pulumi:{self.stack}::{PROJECT}::{qualified}::{request.name}"
        if request.type != STACK_TYPE:
            self.registered.append((request.type, request.name, request.object.SerializeToString()))
        return resource_pb2.RegisterResourceResponse(urn=urn, id=f"{request.name}-id" if request.custom else "",
                                                     object=request.object)

    def RegisterResourceOutputs(self, request, context):  # noqa: N802
        return empty_pb2.Empty()

    def RegisterPackage(self, request, context):  # noqa: N802
        return resource_pb2.RegisterPackageResponse(ref=f"{request.name}-ref")


class _Engine(engine_pb2_grpc.EngineServicer):
    def __init__(self) -> None:
        self.root = ""
        self.errors: list[str] = []

    def Log(self, request, context):  # noqa: N802
        if request.severity == engine_pb2.ERROR:
            self.errors.append(request.message)
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):  # noqa: N802
        return engine_pb2.GetRootResourceResponse(urn=self.root)

    def SetRootResource(self, request, context):  # noqa: N802
        self.root = request.urn
        return engine_pb2.SetRootResourceResponse()


@pytest.fixture
def engine():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    monitor, eng = _Monitor(), _Engine()
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, server)
    engine_pb2_grpc.add_EngineServicer_to_server(eng, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}", monitor, eng
    server.stop(None)


def _run(address: str, monitor: _Monitor, stack: str, config: dict[str, str], secret_keys: list[str]):
    monitor.stack = stack
    request = language_pb2.RunRequest(project=PROJECT, stack=stack, monitor_address=address, args=[address],
                                      config=config, configSecretKeys=secret_keys, dryRun=True, parallel=4)
    return LanguageServer(lambda: runpy.run_path(str(PROGRAM), run_name="__main__")).Run(request, None)


@pytest.mark.parametrize("stack", SHIPPED)
def test_the_language_host_registers_what_the_offline_engine_records(engine, plan_of, stack):
    address, monitor, eng = engine
    config = {**load_stack(stack).config, "databricks:token": SECRET}  # a decrypted provider secret
    response = _run(address, monitor, stack, config, ["databricks:token"])
    assert response.error == "", response.error
    offline = {(r["type"], r["name"]) for r in plan_of(stack)["resources"]}
    assert {(t, n) for t, n, _ in monitor.registered} == offline
    assert all(SECRET.encode() not in blob for *_, blob in monitor.registered)


def test_a_secret_project_setting_fails_the_run_with_the_clear_message(engine):
    address, monitor, eng = engine
    config = dict(load_stack("dev").config)
    dev = json.loads(config["dbx-ai-infra:dev"])
    dev["spark_env_vars"] = {"HF_TOKEN": "hf_plaintext"}
    config["dbx-ai-infra:dev"] = json.dumps(dev)
    response = _run(address, monitor, "dev", config, ["dbx-ai-infra:dev"])
    assert "dbx-ai-infra:dev: is a Pulumi secret" in response.error
    assert monitor.registered == [] and "hf_plaintext" not in response.error
