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
from dbx_ai_infra.pulumi_private import provider
from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.vocabulary import PROGRAM_RESOURCE_TYPES
from dbx_ai_infra.engine import engine, pipeline  # noqa: F401 - imported with their own bytecode, as in any run

mode, prefix, out = sys.argv[1:4]
if mode == "plain":  # the provider imported the plain way: its modules with Python's own bytecode, run whole
    provider._LazyAnnotationsLoader.get_code = importlib.machinery.SourceFileLoader.get_code
    provider._LazyTypesLoader.exec_module = importlib.machinery.SourceFileLoader.exec_module
else:  # the provider's bytecode looked up (and, unless it may not be written, cached) under prefix
    sys.pycache_prefix, sys.dont_write_bytecode = prefix, mode == "unwritable"
pulumi_private.use_provider_subset("pulumi_databricks", PROGRAM_RESOURCE_TYPES)
from pulumi_databricks import ClusterArgs, ClusterAwsAttributesArgs
from pulumi_databricks.outputs import ClusterAwsAttributes
kinds = {c.__name__: type(c.__init__.__annotations__[field]).__name__  # a resource's args, an input and an output type
         for c, field in ((ClusterArgs, "spark_version"), (ClusterAwsAttributesArgs, "availability"),
                          (ClusterAwsAttributes, "availability"))}
inputs = sys.modules["pulumi_databricks._inputs"]
defined = sum(isinstance(inputs.__dict__.get(n), type) for n in inputs.__dict__.get("__all__", ()))
code = main(["preview", "--all", "--json", "--out", out]) if out else None
print(json.dumps({"kinds": kinds, "code": code, "defined": defined, "listed": len(inputs.__dict__["__all__"])}),
      flush=True)
os._exit(0)
"""


def _provider_run(tmp_path: Path, mode: str, *, plans: bool = True) -> tuple[dict, str]:
    """In a fresh process: the kind of the provider classes' annotations, how many of ``_inputs``' classes the
    subset defined (``defined`` of ``listed``), and (``plans``) every shipped stack's
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
    return {**found["kinds"], "defined": found["defined"], "listed": found["listed"]}, out.read_text() if plans else ""


def test_the_offline_engine_leaves_the_providers_annotations_unevaluated_and_registers_the_same_plans(tmp_path) -> None:
    lazy, lazy_plans = _provider_run(tmp_path, "lazy")
    plain, plain_plans = _provider_run(tmp_path, "plain")
    lazy_kinds = {k: v for k, v in lazy.items() if k not in ("defined", "listed")}
    plain_kinds = {k: v for k, v in plain.items() if k not in ("defined", "listed")}
    assert set(lazy_kinds.values()) == {"str"}, lazy_kinds  # strings, built into types only when the SDK asks
    assert "str" not in plain_kinds.values(), plain_kinds
    assert lazy_plans == plain_plans  # every shipped stack: the same resources, inputs, findings and prices
    # the plain import defines every input type; the subset only those its resource modules name, and what they need
    assert plain["defined"] == plain["listed"] > 4000, plain
    assert 0 < lazy["defined"] < plain["listed"] / 2, lazy
    cached = sorted(p.name for p in (tmp_path / "lazy").rglob("*.pyc"))
    assert any(n.startswith("_inputs.") and f".opt-{pulumi_private.LAZY_TYPES_TAG}." in n for n in cached), cached
    assert any(n.startswith("cluster.") and f".opt-{pulumi_private.LAZY_ANNOTATIONS_TAG}." in n for n in cached), cached


def test_where_no_bytecode_may_be_written_the_provider_is_imported_the_plain_way(tmp_path) -> None:
    """``PYTHONDONTWRITEBYTECODE`` (or a read-only install) and no cached lazy bytecode: compiling the provider at
    every run would cost more than the lazy annotations save, so its modules are imported as Python imports them."""
    kinds, _ = _provider_run(tmp_path, "unwritable", plans=False)
    assert "str" not in kinds.values(), kinds
    assert kinds["defined"] == kinds["listed"], kinds  # run whole: every input type defined
    assert not list((tmp_path / "unwritable").rglob("*.pyc"))  # nothing written where bytecode may not be


# --- the types modules, their classes defined when named (issue 53, item 5) -----------------------------------------

_FAKE_PROVIDER = {
    "__init__.py": "raise RuntimeError('the subset never runs the package __init__')\n",
    "_utilities.py": "",
    "_inputs.py": '''import sys
__all__ = ["ThingSizeArgs", "ThingSizeLimitArgs", "OtherArgs", "UnusedArgs"]


def tagged(cls):
    cls.tagged = True
    return cls


@tagged
class ThingSizeArgs:
    def limit(self) -> "ThingSizeLimitArgs":
        return ThingSizeLimitArgs()


class ThingSizeLimitArgs:
    """A docstring whose lines are indented, as the SDK generates them.
    """
    def where(self) -> int:
        return sys._getframe().f_lineno


class OtherArgs:
    pass


class UnusedArgs:
    pass
''',
    "outputs.py": '''__all__ = ["ThingSize"]


class ThingSize:
    pass
''',
    "thing.py": '''from . import _utilities
from . import outputs
from ._inputs import *
__all__ = ["Thing"]


class Thing:
    def size(self) -> "ThingSizeArgs":
        pass

    def state(self) -> "outputs.ThingSize":
        pass
''',
    "other.py": '''from ._inputs import *
__all__ = ["Other"]


class Other:
    def spec(self) -> "OtherArgs":
        pass
''',
}

_FAKE_PROBE = """
import json, os, sys, typing
sys.pycache_prefix = sys.argv[2]
sys.path.insert(0, sys.argv[1])
from dbx_ai_infra import pulumi_private
fake = pulumi_private.use_provider_subset("fakeprov", ["fakeprov:index/thing:Thing"])
inputs = sys.modules["fakeprov._inputs"]
out = {"at_import": sorted(n for n in inputs.__dict__ if n.endswith("Args"))}
out["star_imported"] = sorted(n for n in vars(sys.modules["fakeprov.thing"]) if n.endswith("Args"))
out["hints"] = {k: v.__name__ for k, v in typing.get_type_hints(fake.Thing.size, vars(sys.modules["fakeprov.thing"])).items()}
limit = fake.ThingSizeArgs().limit()
out["line"] = limit.where()
out["tagged"] = getattr(fake.ThingSizeArgs, "tagged", False)
out["unused_by_name"] = fake.UnusedArgs.__name__
try:
    fake.NoSuchArgs
except AttributeError as exc:
    out["missing"] = str(exc)
import fakeprov.other  # a module outside the subset, imported after it: its star-import takes every class
out["other_hint"] = typing.get_type_hints(fakeprov.other.Other.spec, dict(vars(fakeprov.other)))["return"].__name__
out["after"] = sorted(n for n in inputs.__dict__ if n.endswith("Args"))
print(json.dumps(out), flush=True)
os._exit(0)
"""


def _fake_provider(tmp_path: Path, files: dict[str, str]) -> dict:
    import json
    import subprocess
    import sys

    root = tmp_path / "site"
    (root / "fakeprov").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / "fakeprov" / name
        if not path.exists():  # a second run reads the same files, and so what the first one cached of them
            path.write_text(text)
    done = subprocess.run([sys.executable, "-c", _FAKE_PROBE, str(root), str(tmp_path / "cache")], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_subset_defines_the_types_its_resource_modules_name_and_the_rest_when_named(tmp_path) -> None:
    for run in ("built", "cached"):  # the first run splits the module and keeps it; the second reads what it kept
        found = _fake_provider(tmp_path, _FAKE_PROVIDER)
        # thing.py names ThingSizeArgs, whose source names ThingSizeLimitArgs: both, and nothing else, at import
        assert found["at_import"] == ["ThingSizeArgs", "ThingSizeLimitArgs"], run
        assert found["star_imported"] == ["ThingSizeArgs", "ThingSizeLimitArgs"], run
        assert found["hints"] == {"return": "ThingSizeArgs"}, run
        assert found["tagged"] is True  # the class ran with its decorator
        # a class's code keeps its file's line numbers (tracebacks and warnings point at the SDK's source)
        assert found["line"] == _FAKE_PROVIDER["_inputs.py"].splitlines().index("        return sys._getframe().f_lineno") + 1
        assert found["unused_by_name"] == "UnusedArgs"  # named through the package: defined then
        assert found["missing"] == "module 'fakeprov' has no attribute 'NoSuchArgs'"
        assert found["other_hint"] == "OtherArgs"
        assert found["after"] == ["OtherArgs", "ThingSizeArgs", "ThingSizeLimitArgs", "UnusedArgs"]
    assert list((tmp_path / "cache").rglob(f"_inputs.*.opt-{pulumi_private.LAZY_TYPES_TAG}.pyc"))


def test_a_types_module_with_a_statement_among_its_classes_is_run_whole(tmp_path) -> None:
    """A statement between two classes runs at import in a plain import; split by class it would run only when the
    class before it is named, so such a module is not split: every class is defined at import."""
    statement = _FAKE_PROVIDER["_inputs.py"].replace("class OtherArgs:", "REGISTRY = {}\n\n\nclass OtherArgs:")
    # and a docstring line at column 0, which a split by lines cannot tell from a statement
    docstring = _FAKE_PROVIDER["_inputs.py"].replace("    \"\"\"A docstring whose", "    \"\"\"A docstring\nwhose")
    for case, inputs in (("statement", statement), ("docstring", docstring)):
        found = _fake_provider(tmp_path / case, {**_FAKE_PROVIDER, "_inputs.py": inputs})
        assert found["at_import"] == ["OtherArgs", "ThingSizeArgs", "ThingSizeLimitArgs", "UnusedArgs"], case
        assert found["hints"] == {"return": "ThingSizeArgs"}, case
        assert not list((tmp_path / case).rglob(f"_inputs.*.opt-{pulumi_private.LAZY_TYPES_TAG}.pyc")), case


def test_where_the_cache_cannot_be_written_nothing_is_built(tmp_path, monkeypatch) -> None:
    """A read-only install (bytecode allowed, its directory not writable): splitting or compiling a module that cannot
    be kept would be paid again at every run, so nothing is built and the caller imports the plain way; where it
    can be written, it is built once and read back."""
    import sys

    from dbx_ai_infra.pulumi_private import provider

    source = tmp_path / "mod.py"
    source.write_text("X = 1\n")
    blocked = tmp_path / "a-file"
    blocked.write_text("where the cache directory would be")
    built: list[str] = []

    def build() -> str:
        built.append("built")
        return "value"

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(blocked))
    assert provider._cached(str(source), "probe", build) is None
    assert built == []
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "cache"))
    assert provider._cached(str(source), "probe", build) == "value"
    assert provider._cached(str(source), "probe", build) == "value"
    assert built == ["built"]
