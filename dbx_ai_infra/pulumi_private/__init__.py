"""Every use of Pulumi's private (underscore or undocumented) API, in one place.

The offline engine runs the Pulumi program under Pulumi's mock runtime and needs a few things the SDK does not
publish: running a program function to completion outside the CLI, the mock monitor's registration hook, decoding
registered inputs, the root stack resource, the whole config map, and the policy SDK's unknown-value marker. Each
is wrapped here, and ``tests/test_pulumi_private.py`` has a test per symbol, so an SDK upgrade that moves one fails
loudly in one place. Pinned SDKs: pulumi 3.272.0, pulumi-policy 1.21.0 (requirements.txt).
"""

from __future__ import annotations
import __future__

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import re
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator
from types import CodeType, ModuleType
from typing import Any, TypeVar

from pulumi.runtime import config as _runtime_config
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import resource as _runtime_resource
from pulumi.runtime import rpc as _rpc
from pulumi.runtime import stack as _runtime_stack
from pulumi.runtime.proto import source_pb2 as _source_pb2
from pulumi.runtime.sync_await import _sync_await
from pulumi_policy.proxy import UnknownValueError

from dbx_ai_infra import write_whole

__all__ = ["MockMonitor", "UnknownValueError", "all_config", "deserialize_properties", "provider_module_of",
           "root_resource_outputs", "run_program_function", "secret_config_keys", "sync_await", "use_provider_subset",
           "without_source_positions"]

T = TypeVar("T")

#: The mock runtime's monitor; subclasses override ``RegisterResource`` (its gRPC method name) to record.
MockMonitor = _mocks.MockMonitor


def sync_await(awaitable: Awaitable[T]) -> T:
    """Run an awaitable to completion on Pulumi's event loop (``pulumi.runtime.sync_await._sync_await``)."""
    return _sync_await(awaitable)


def run_program_function(func: Callable[[], Any]) -> None:
    """Run a Pulumi program function under the current (mock) runtime and wait for every registration
    (``pulumi.runtime.stack.run_pulumi_func``)."""
    _sync_await(_runtime_stack.run_pulumi_func(func))


@contextlib.contextmanager
def without_source_positions() -> Iterator[None]:
    """While the block runs, resources register without the caller's stack trace and source position
    (``pulumi.runtime.resource._get_stack_trace``). The SDK walks the whole Python stack, reading every frame's
    source line, at each registration, only to tell the engine where in the program a resource was declared;
    the mock monitor ignores it, and it was about a quarter of the offline engine's program run (issue 23). Only the
    offline engine uses this: under ``pulumi up`` the engine gets its source positions as before."""
    original = _runtime_resource._get_stack_trace
    _runtime_resource._get_stack_trace = _source_pb2.StackTrace  # a trace without frames: no source position
    try:
        yield
    finally:
        _runtime_resource._get_stack_trace = original


def root_resource_outputs() -> dict[str, Any]:
    """The outputs the program exported on the root stack resource (``get_root_resource().outputs``)."""
    root = _runtime_stack.get_root_resource()
    outputs = getattr(root, "outputs", None) or {}
    return dict(outputs)


def deserialize_properties(struct: Any) -> Any:
    """A registration's protobuf ``Struct`` of inputs as Python values (``pulumi.runtime.rpc``)."""
    return _rpc.deserialize_properties(struct)


def secret_config_keys() -> list[str]:
    """The config keys the CLI marks secret (``PULUMI_CONFIG_SECRET_KEYS``, a JSON list), decrypted in the config."""
    in_process = sorted(_runtime_config._SECRET_KEYS.get() or ())
    return list(_runtime_config.get_config_secret_keys_env()) + in_process


def all_config() -> dict[str, Any]:
    """The whole config map of the running program: ``PULUMI_CONFIG`` from the environment (the CLI's way),
    overlaid by values set in-process (``pulumi.runtime.set_all_config``, the offline engine's way)."""
    return {**_runtime_config.get_config_env(), **_runtime_config.CONFIG.get()}


def provider_module_of(type_token: str) -> str:
    """The provider SDK module that defines a resource type: ``databricks:index/instancePool:InstancePool`` ->
    ``instance_pool`` (the layout every bridged Pulumi provider SDK is generated with)."""
    module = type_token.split(":")[1].split("/")[-1]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", module).lower()


def use_provider_subset(package: str, type_tokens: Iterable[str]) -> ModuleType:
    """Make ``import <package>`` give the provider SDK with only the resource modules of ``type_tokens`` (and the
    shared input and output types), without running the package's ``__init__``, which star-imports every one of its
    resources (384 modules for pulumi_databricks, about 60% of its import time). The classes are the SDK's own, so
    the program registers exactly what it registers under ``pulumi up``, where the whole package is imported.

    Where the package is already imported (whole or as a subset), it is returned as it is. A name of a module that
    is not in the subset is an ``AttributeError`` naming the package, as it would be for a name the SDK lacks."""
    if package in sys.modules:
        return sys.modules[package]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None:
        raise ModuleNotFoundError(f"no package named {package!r}", name=package)
    module = importlib.util.module_from_spec(spec)  # the package object; its __init__ is not executed
    sys.modules[package] = module
    finder = _LazyAnnotationsFinder(package)
    sys.meta_path.insert(0, finder)
    try:
        for name in ("_utilities", *sorted({provider_module_of(t) for t in type_tokens}), "_inputs"):
            sub = importlib.import_module(f"{package}.{name}")
            for attr in getattr(sub, "__all__", ()):  # what the package's ``from .<name> import *`` would bind
                setattr(module, attr, getattr(sub, attr))
        importlib.import_module(f"{package}.outputs")
    except BaseException:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
        raise
    finally:
        sys.meta_path.remove(finder)
    return module


#: The name a module's bytecode with lazy annotations is cached under, beside the interpreter's own:
#: ``__pycache__/_inputs.cpython-311.opt-lazyannotations.pyc`` (an ``opt-`` tag, so it never takes the place of the
#: bytecode a plain ``import`` reads).
LAZY_ANNOTATIONS_TAG = "lazyannotations"


class _LazyAnnotationsLoader(importlib.machinery.SourceFileLoader):
    """A provider module compiled as under ``from __future__ import annotations`` (PEP 563): its thousands of
    ``Optional[pulumi.Input[...]]`` annotations stay strings instead of being built as typing objects when the
    module runs, which was about a third of the offline engine's start-up (`_inputs` and `outputs` define some 7,400
    classes; a stack uses a few dozen). The SDK reads annotations only through ``typing.get_type_hints`` with the
    class's module globals (``pulumi._types``), which resolves the strings to the same types when, and if, it needs
    them; the classes, their names and what they register are unchanged (tests/test_pulumi_private.py compares each
    shipped stack's plan with the one the plain import gives).

    Its bytecode is cached under its own name (`LAZY_ANNOTATIONS_TAG`), checked against the source's modification
    time and size as Python checks its own. Where the cache is missing and cannot be written (a read-only install,
    ``PYTHONDONTWRITEBYTECODE``), the module is imported the plain way: compiling the source at every run would cost
    more than it saves."""

    def get_code(self, fullname: str) -> CodeType | None:
        source_path = self.get_filename(fullname)
        cache = importlib.util.cache_from_source(source_path, optimization=LAZY_ANNOTATIONS_TAG)
        stat = os.stat(source_path)
        header = importlib.util.MAGIC_NUMBER + b"\0\0\0\0" + _u32(int(stat.st_mtime)) + _u32(stat.st_size)
        try:
            with open(cache, "rb") as handle:
                cached = handle.read()
        except OSError:
            cached = b""
        if cached[:16] == header:
            return marshal.loads(cached[16:])
        if sys.dont_write_bytecode:
            return super().get_code(fullname)
        code = compile(self.get_data(source_path), source_path, "exec", dont_inherit=True,
                       flags=__future__.annotations.compiler_flag)
        if not write_whole(cache, header + marshal.dumps(code)):
            return super().get_code(fullname)
        return code


def _u32(value: int) -> bytes:
    return (value & 0xFFFFFFFF).to_bytes(4, "little")


class _LazyAnnotationsFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of ``package`` as the path finder does, to be loaded by `_LazyAnnotationsLoader`."""

    def __init__(self, package: str) -> None:
        self.package = package

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self.package + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader or spec.origin is None:
            return spec
        spec.loader = _LazyAnnotationsLoader(fullname, spec.origin)
        return spec
