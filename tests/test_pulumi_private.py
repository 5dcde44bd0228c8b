"""Pulumi's private API, used in one module only: a test per symbol, so an SDK upgrade fails here, loudly.

Each test drives the symbol the way the offline engine does and checks what the engine relies on.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
from pathlib import Path

import pulumi
import pytest
from conftest import project_sources
from google.protobuf import struct_pb2

from dbx_ai_infra import pulumi_private

REPO = Path(__file__).resolve().parent.parent
PRIVATE_MODULES = ("pulumi.runtime.sync_await", "pulumi.runtime.stack", "pulumi.runtime.rpc", "pulumi.runtime.config",
                   "pulumi.runtime.resource", "pulumi.runtime.proto.source_pb2",
                   "pulumi_policy.proxy")


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, None]:
        return {}, None


def _in_fresh_runtime(func, config: dict[str, str] | None = None):
    """Run ``func`` with a clean Pulumi runtime under mocks, as the engine does."""

    def run():
        pulumi.runtime.set_all_config(config or {})
        monitor = _Recording(_Mocks())
        pulumi.runtime.set_mocks(_Mocks(), project="p", stack="s", preview=True, monitor=monitor)
        return func(monitor)

    return contextvars.Context().run(run)


class _Recording(pulumi_private.MockMonitor):
    def __init__(self, mock: pulumi.runtime.Mocks) -> None:
        super().__init__(mock)
        self.inputs: list[dict] = []

    def RegisterResource(self, request):  # noqa: N802 - the gRPC method name the SDK calls
        response = super().RegisterResource(request)
        self.inputs.append(pulumi_private.deserialize_properties(request.object))
        return response


def test_mock_monitor_registration_hook_and_run_program_function() -> None:
    def program() -> None:
        pulumi.CustomResource("test:index:Thing", "t", {"size": 2, "tags": {"a": "b"}})

    def body(monitor: _Recording):
        pulumi_private.run_program_function(program)
        return monitor.inputs

    assert {"size": 2, "tags": {"a": "b"}} in _in_fresh_runtime(body)


def test_sync_await_runs_a_coroutine_to_completion() -> None:
    async def seven() -> int:
        return 7

    assert _in_fresh_runtime(lambda _m: pulumi_private.sync_await(seven())) == 7


def test_root_resource_outputs_holds_exports() -> None:
    def body(_monitor):
        pulumi_private.run_program_function(lambda: pulumi.export("x", "y"))
        outputs = pulumi_private.root_resource_outputs()
        return {k: pulumi_private.sync_await(pulumi.Output.from_input(v).future()) for k, v in outputs.items()}

    assert _in_fresh_runtime(body) == {"x": "y"}


def test_deserialize_properties_decodes_a_struct() -> None:
    struct = struct_pb2.Struct()
    struct.update({"numWorkers": 2.0, "customTags": {"k": "v"}})
    assert pulumi_private.deserialize_properties(struct) == {"numWorkers": 2.0, "customTags": {"k": "v"}}


def test_all_config_sees_in_process_config() -> None:
    config = _in_fresh_runtime(lambda _m: pulumi_private.all_config(), {"dbx-ai-infra:cloud": "aws"})
    assert config["dbx-ai-infra:cloud"] == "aws"


def test_unknown_value_error_is_what_the_policy_proxy_raises() -> None:
    from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

    with pytest.raises(pulumi_private.UnknownValueError):
        unknown_checking_proxy({"instancePoolId": UNKNOWN_STRING_VALUE})["instancePoolId"]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_the_private_api_scan_sees_the_projects_modules_and_no_environment() -> None:
    seen = {p.relative_to(REPO).as_posix() for p in project_sources("tests", "bench", "dbx_ai_infra/pulumi_private")}
    assert {"dbx_ai_infra/engine/engine.py", "dbx_ai_infra/stackspec/__init__.py", "dbx_ai_infra/policies/registry.py"} <= seen
    assert not any(s.startswith(("tests/", "bench/", "dbx_ai_infra/pulumi_private/", ".venv")) or "site-packages" in s for s in seen)


def test_no_other_module_imports_pulumis_private_api() -> None:
    offenders = []
    for path in project_sources("tests", "bench", "dbx_ai_infra/pulumi_private"):
        relative = path.relative_to(REPO)
        used = {m for m in _imports(path) for private in PRIVATE_MODULES if m == private or m.startswith(private + ".")}
        used |= {m for m in _imports(path) if m.endswith("._sync_await")}
        if used:
            offenders.append(f"{relative}: {sorted(used)}")
    assert offenders == []


def test_secret_config_keys_reads_the_clis_list(monkeypatch) -> None:
    monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", '["dbx-ai-infra:dev", "databricks:token"]')
    assert _in_fresh_runtime(lambda _m: pulumi_private.secret_config_keys()) == ["dbx-ai-infra:dev", "databricks:token"]


# --- the provider SDK, imported as a subset (issue 23) --------------------------------------------------------------

_SUBSET_PROBE = """
import json, os, sys
from dbx_ai_infra import pulumi_private
from dbx_ai_infra.dbxtypes.vocabulary import PROGRAM_RESOURCE_TYPES

def classes(package):
    return {n: [getattr(package, n).__module__, getattr(package, n).__qualname__] for n in dir(package)
            if n[:1].isupper() and isinstance(getattr(package, n), type)}

subset = classes(pulumi_private.use_provider_subset("pulumi_databricks", PROGRAM_RESOURCE_TYPES))
loaded = sorted(m for m in sys.modules if m.startswith("pulumi_databricks."))
for name in [m for m in sys.modules if m.split(".")[0] == "pulumi_databricks"]:
    del sys.modules[name]
import pulumi_databricks  # now the whole package, as `pulumi up` imports it
whole = classes(pulumi_databricks)
print(json.dumps({"subset": subset, "whole": {n: whole.get(n) for n in subset}, "loaded": loaded}), flush=True)
os._exit(0)
"""


def test_the_provider_subset_binds_the_same_classes_as_the_whole_package() -> None:
    """The offline engine imports only the provider modules of the types the program creates; every name it binds
    is the very class the whole package (what `pulumi up` imports) binds under that name."""
    import json
    import subprocess
    import sys

    found = json.loads(subprocess.run([sys.executable, "-c", _SUBSET_PROBE], cwd=REPO, capture_output=True,
                                      text=True, check=True).stdout)
    assert found["whole"] == found["subset"]
    # the program's resource classes and their input types are there; the other resource modules are not loaded
    for name in ("Cluster", "Job", "InstancePool", "ClusterPolicy", "Catalog", "Schema", "Volume", "Grants",
                 "Permissions", "ModelServing", "File", "JobTaskArgs", "ClusterAwsAttributesArgs"):
        assert name in found["subset"], name
    assert "pulumi_databricks.access_control_rule_set" not in found["loaded"]
    assert len(found["loaded"]) < 20, found["loaded"]


def test_a_package_already_imported_is_returned_as_it_is() -> None:
    from dbx_ai_infra.dbxtypes.vocabulary import PROGRAM_RESOURCE_TYPES

    first = pulumi_private.use_provider_subset("pulumi_databricks", PROGRAM_RESOURCE_TYPES)
    assert pulumi_private.use_provider_subset("pulumi_databricks", ()) is first


def test_provider_module_of_a_type_token() -> None:
    assert pulumi_private.provider_module_of("databricks:index/instancePool:InstancePool") == "instance_pool"
    assert pulumi_private.provider_module_of("databricks:index/modelServing:ModelServing") == "model_serving"
    assert pulumi_private.provider_module_of("databricks:index/cluster:Cluster") == "cluster"


def test_the_program_creates_only_the_types_whose_modules_the_engine_imports(plan_of) -> None:
    from conftest import SHIPPED

    from dbx_ai_infra.dbxtypes.vocabulary import PROGRAM_RESOURCE_TYPES

    created = {r["type"] for stack in SHIPPED for r in plan_of(stack)["resources"] if r["type"].startswith("databricks:")}
    assert created <= set(PROGRAM_RESOURCE_TYPES), created - set(PROGRAM_RESOURCE_TYPES)


def test_without_source_positions_registers_no_stack_trace_and_restores_the_sdks_afterwards() -> None:
    class Traces(_Recording):
        def __init__(self, mock) -> None:
            super().__init__(mock)
            self.frames: dict[str, int] = {}

        def RegisterResource(self, request):  # noqa: N802 - the gRPC method name the SDK calls
            self.frames[request.type] = len(request.stackTrace.frames)
            return super().RegisterResource(request)

    class Thing(pulumi.CustomResource):  # a resource class of its own, as a provider SDK's are
        def __init__(self, name: str, size: int) -> None:
            super().__init__("test:index:Thing", name, {"size": size})

    def body(quiet: bool) -> Traces:
        def run() -> Traces:
            pulumi.runtime.set_all_config({})
            monitor = Traces(_Mocks())
            pulumi.runtime.set_mocks(_Mocks(), project="p", stack="s", preview=True, monitor=monitor)
            with pulumi_private.without_source_positions() if quiet else contextlib.nullcontext():
                pulumi_private.run_program_function(lambda: Thing("t", 2))
            return monitor
        return contextvars.Context().run(run)

    import pulumi.runtime.resource as sdk_resource

    before = sdk_resource._get_stack_trace
    assert body(False).frames["test:index:Thing"] > 0  # the SDK sends where the program declared the resource ...
    quiet = body(True)
    assert quiet.frames["test:index:Thing"] == 0  # ... and without it, no frames
    assert {"size": 2} in quiet.inputs  # the same registration otherwise
    assert sdk_resource._get_stack_trace is before


# --- the provider's annotations, left unevaluated (issue 53, item 5) -----------------------------------------------

_ANNOTATIONS_PROBE = """
import importlib.machinery, json, os, sys
from dbx_ai_infra import pulumi_private
from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.vocabulary import PROGRAM_RESOURCE_TYPES
from dbx_ai_infra.engine import engine, pipeline  # noqa: F401 - imported with their own bytecode, as in any run

mode, prefix, out = sys.argv[1:4]
if mode == "plain":  # the provider imported the plain way: its modules with Python's own bytecode
    pulumi_private._LazyAnnotationsLoader.get_code = importlib.machinery.SourceFileLoader.get_code
else:  # the provider's bytecode looked up (and, unless it may not be written, cached) under prefix
    sys.pycache_prefix, sys.dont_write_bytecode = prefix, mode == "unwritable"
pulumi_private.use_provider_subset("pulumi_databricks", PROGRAM_RESOURCE_TYPES)
from pulumi_databricks import ClusterArgs, ClusterAwsAttributesArgs
from pulumi_databricks.outputs import ClusterAwsAttributes
kinds = {c.__name__: type(c.__init__.__annotations__[field]).__name__  # a resource's args, an input and an output type
         for c, field in ((ClusterArgs, "spark_version"), (ClusterAwsAttributesArgs, "availability"),
                          (ClusterAwsAttributes, "availability"))}
code = main(["preview", "--all", "--json", "--out", out]) if out else None
print(json.dumps({"kinds": kinds, "code": code}), flush=True)
os._exit(0)
"""


def _provider_run(tmp_path: Path, mode: str, *, plans: bool = True) -> tuple[dict, str]:
    """In a fresh process: the kind of the provider classes' annotations, and (``plans``) every shipped stack's
    previewed plan. ``mode``: ``lazy`` (the provider's bytecode cached under ``tmp_path/lazy``), ``plain`` (Python's
    own import), ``unwritable`` (no cache under ``tmp_path/unwritable`` and none may be written)."""
    import json
    import subprocess
    import sys

    out = tmp_path / f"{mode}.json" if plans else ""
    done = subprocess.run([sys.executable, "-c", _ANNOTATIONS_PROBE, mode, str(tmp_path / mode), str(out)], cwd=REPO,
                          capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["code"] in (0, 1, None), done.stderr  # 1: a shipped stack's advisory or expected violations
    return found["kinds"], out.read_text() if plans else ""


def test_the_offline_engine_leaves_the_providers_annotations_unevaluated_and_registers_the_same_plans(tmp_path) -> None:
    lazy_kinds, lazy_plans = _provider_run(tmp_path, "lazy")
    plain_kinds, plain_plans = _provider_run(tmp_path, "plain")
    assert set(lazy_kinds.values()) == {"str"}, lazy_kinds  # strings, built into types only when the SDK asks
    assert "str" not in plain_kinds.values(), plain_kinds
    assert lazy_plans == plain_plans  # every shipped stack: the same resources, inputs, findings and prices
    cached = sorted(p.name for p in (tmp_path / "lazy").rglob(f"*.opt-{pulumi_private.LAZY_ANNOTATIONS_TAG}.pyc"))
    assert any(name.startswith("_inputs.") for name in cached), cached


def test_where_no_bytecode_may_be_written_the_provider_is_imported_the_plain_way(tmp_path) -> None:
    """``PYTHONDONTWRITEBYTECODE`` (or a read-only install) and no cached lazy bytecode: compiling the provider at
    every run would cost more than the lazy annotations save, so its modules are imported as Python imports them."""
    kinds, _ = _provider_run(tmp_path, "unwritable", plans=False)
    assert "str" not in kinds.values(), kinds
    assert not list((tmp_path / "unwritable").rglob("*.pyc"))  # nothing written where bytecode may not be
