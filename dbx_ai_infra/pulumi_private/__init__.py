"""Every use of Pulumi's private (underscore or undocumented) API, in one place.

The offline engine runs the Pulumi program under Pulumi's mock runtime and needs a few things the SDK does not
publish: running a program function to completion outside the CLI, the mock monitor's registration hook, decoding
registered inputs, the root stack resource, the whole config map, and the policy SDK's unknown-value marker. Each
is wrapped here, and ``tests/test_pulumi_private.py`` has a test per symbol, so an SDK upgrade that moves one fails
loudly in one place. How the provider SDK itself is imported offline (a subset, lazily) is
`dbx_ai_infra.pulumi_private.provider`. Pinned SDKs: pulumi 3.272.0, pulumi-policy 1.21.0 (requirements.txt).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from pulumi.runtime import config as _runtime_config
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import resource as _runtime_resource
from pulumi.runtime import rpc as _rpc
from pulumi.runtime import stack as _runtime_stack
from pulumi.runtime.proto import source_pb2 as _source_pb2
from pulumi.runtime.sync_await import _sync_await
from pulumi_policy.proxy import UnknownValueError

from dbx_ai_infra.pulumi_private.provider import (
    LAZY_ANNOTATIONS_TAG,
    LAZY_TYPES_TAG,
    provider_module_of,
    use_provider_subset,
)

__all__ = ["LAZY_ANNOTATIONS_TAG", "LAZY_TYPES_TAG", "MockMonitor", "UnknownValueError", "all_config",
           "deserialize_properties", "provider_module_of", "root_resource_outputs", "run_program_function",
           "secret_config_keys", "sync_await", "use_provider_subset", "without_source_positions"]

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
