"""The provider SDK (``pulumi_databricks``), imported as the offline engine needs it: the resource modules of the types
the program creates, and of the shared input and output types only the classes those modules name.

Importing the whole SDK is most of the floor the benchmarks measure against (bench/RESULTS.md): its ``__init__``
star-imports 384 resource modules, and ``_inputs`` and ``outputs`` define some 7,400 classes, each with typed
annotations, when a stack uses a few hundred. Three loaders cut that, each keeping the SDK's own classes, so the
program registers exactly what it registers under ``pulumi up`` (tests/test_pulumi_private.py compares every
shipped stack's plan with the one the plain import gives):

- `use_provider_subset` binds the package without running its ``__init__``;
- `_LazyAnnotationsLoader` compiles a module as under ``from __future__ import annotations``;
- `_LazyTypesLoader` defines a class of ``_inputs`` or ``outputs`` when it is first named.

Each keeps what it compiles under its own name in ``__pycache__`` (an ``opt-`` tag, so it never takes the place of
the bytecode a plain ``import`` reads), checked against the source's modification time and size as Python checks
its own. Where that cache is missing and cannot be written (a read-only install, ``PYTHONDONTWRITEBYTECODE``), a
module is imported the plain way: compiling the source at every run would cost more than it saves.
"""

from __future__ import annotations
import __future__

import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from types import CodeType, ModuleType
from typing import Any, NamedTuple

from dbx_ai_infra import write_whole

#: The modules of a bridged provider SDK that hold its input and output types (every resource module names some).
TYPE_MODULES = ("_inputs", "outputs")

#: The cache tags: a module's bytecode with lazy annotations (``_inputs.cpython-311.opt-lazyannotations.pyc``), a
#: types module split into its classes, and the names a resource module's source mentions.
LAZY_ANNOTATIONS_TAG = "lazyannotations"
LAZY_TYPES_TAG = "lazytypes"
MENTIONS_TAG = "mentions"

_FLAGS = __future__.annotations.compiler_flag
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CLASS = re.compile(r"class\s+([A-Za-z_][A-Za-z0-9_]*)")


def provider_module_of(type_token: str) -> str:
    """The provider SDK module that defines a resource type: ``databricks:index/instancePool:InstancePool`` ->
    ``instance_pool`` (the layout every bridged Pulumi provider SDK is generated with)."""
    module = type_token.split(":")[1].split("/")[-1]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", module).lower()


def use_provider_subset(package: str, type_tokens: Iterable[str]) -> ModuleType:
    """Make ``import <package>`` give the provider SDK with only the resource modules of ``type_tokens`` (and the
    shared input and output types), without running the package's ``__init__``, which star-imports every one of its
    resources (384 modules for pulumi_databricks, about 60% of its import time).

    Where the package is already imported (whole or as a subset), it is returned as it is. An input type the subset
    did not define is defined when the package is asked for it, as the whole package binds every one; any other name
    of a module not in the subset is an ``AttributeError`` naming the package, as it would be for a name the SDK
    lacks."""
    if package in sys.modules:
        return sys.modules[package]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None or spec.origin is None:
        raise ModuleNotFoundError(f"no package named {package!r}", name=package)
    module = importlib.util.module_from_spec(spec)  # the package object; its __init__ is not executed
    sys.modules[package] = module
    resources = sorted({provider_module_of(t) for t in type_tokens})
    finder = _ProviderFinder(package, [os.path.join(os.path.dirname(spec.origin), f"{m}.py") for m in resources])
    sys.meta_path.insert(0, finder)
    try:
        for name in ("_utilities", *resources, "_inputs"):
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
    for name in TYPE_MODULES:
        loader = getattr(sys.modules.get(f"{package}.{name}"), "__loader__", None)
        if isinstance(loader, _LazyTypesLoader):
            loader.subset_only = False  # a module imported from now on star-imports every type: defined then
    module.__getattr__ = _input_types_of(package)  # type: ignore[method-assign]  # PEP 562
    return module


def _input_types_of(package: str) -> Callable[[str], Any]:
    """The package's ``__getattr__``: an input type ``_inputs`` has not defined yet, defined now."""
    def __getattr__(name: str) -> Any:
        inputs = sys.modules.get(f"{package}._inputs")
        loader = getattr(inputs, "__loader__", None)
        if inputs is not None and isinstance(loader, _LazyTypesLoader) and loader.define(inputs, (name,)):
            value = inputs.__dict__[name]
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


# --- the caches -------------------------------------------------------------------------------------------------------

def _cached(source_path: str, tag: str, build: Callable[[], Any]) -> Any | None:
    """What ``build`` makes of ``source_path``, kept in its ``__pycache__`` under ``tag``: read where the cache
    matches the source (modification time and size, as Python checks its own bytecode), else built and written.
    None where there is no cache and none may be written, or ``build`` gives None (the source does not split).
    Where none may be written, nothing is built: the caller then imports the plain way, and a build it could not keep
    would be paid again at every run (seconds for ``_inputs`` in a read-only install)."""
    cache = importlib.util.cache_from_source(source_path, optimization=tag)
    stat = os.stat(source_path)
    header = importlib.util.MAGIC_NUMBER + b"\0\0\0\0" + _u32(int(stat.st_mtime)) + _u32(stat.st_size)
    try:
        with open(cache, "rb") as handle:
            cached = handle.read()
    except OSError:
        cached = b""
    if cached[:16] == header:
        return marshal.loads(cached[16:])
    if sys.dont_write_bytecode or not _writable(os.path.dirname(cache)):
        return None
    value = build()
    if value is None or not write_whole(cache, header + marshal.dumps(value)):
        return None
    return value


def _writable(directory: str) -> bool:
    """Whether a cache may be written in ``directory`` (made if need be): not on a read-only install."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


def _u32(value: int) -> bytes:
    return (value & 0xFFFFFFFF).to_bytes(4, "little")


def _source(path: str) -> str:
    with open(path, "rb") as handle:
        return importlib.util.decode_source(handle.read())


def _compiled(source: str, path: str) -> CodeType:
    return compile(source, path, "exec", dont_inherit=True, flags=_FLAGS)


# --- lazy annotations -------------------------------------------------------------------------------------------------

class _LazyAnnotationsLoader(importlib.machinery.SourceFileLoader):
    """A provider module compiled as under ``from __future__ import annotations`` (PEP 563): its thousands of
    ``Optional[pulumi.Input[...]]`` annotations stay strings instead of being built as typing objects when the
    module runs, which was about a third of the offline engine's start-up. The SDK reads annotations only through
    ``typing.get_type_hints`` with the class's module globals (``pulumi._types``), which resolves the strings to the
    same types when, and if, it needs them; the classes, their names and what they register are unchanged."""

    def get_code(self, fullname: str) -> CodeType | None:
        source_path = self.get_filename(fullname)
        code = _cached(source_path, LAZY_ANNOTATIONS_TAG, lambda: _compiled(_source(source_path), source_path))
        return code if code is not None else super().get_code(fullname)


# --- lazy types -------------------------------------------------------------------------------------------------------

class _TypeIndex(NamedTuple):
    """A types module split into its classes: the statements before the first class (imports, ``__all__``), and
    each class's name, bytecode (marshalled) and the classes its source names (positions in ``names``)."""

    head: CodeType
    names: tuple[str, ...]
    codes: tuple[bytes, ...]
    needs: tuple[tuple[int, ...], ...]


def _split_types(source: str, path: str) -> tuple | None:
    """``source`` as a `_TypeIndex` (a plain tuple, for marshal), or None where it is not a header followed by
    top-level classes only (a statement among the classes would run at import, not when a class is named)."""
    lines = source.splitlines(keepends=True)
    starts: list[int] = []
    names: list[str] = []
    decorated = False
    for number, line in enumerate(lines):
        if line[:1] in ("", " ", "\t", "\r", "\n", "#"):
            continue
        if line.startswith("@"):
            if not decorated:
                starts.append(number)
            decorated = True
        elif match := _CLASS.match(line):
            if not decorated:
                starts.append(number)
            names.append(match.group(1))
            decorated = False
        elif starts:
            return None
    if not starts or len(starts) != len(names) or len(set(names)) != len(names):
        return None
    ends = [*starts[1:], len(lines)]
    segments = ["".join(lines[a:b]) for a, b in zip(starts, ends, strict=True)]
    try:
        head = _compiled("".join(lines[:starts[0]]), path)
        codes = tuple(marshal.dumps(_shifted(_compiled(text, path), first))
                      for first, text in zip(starts, segments, strict=True))
    except SyntaxError:  # a cut inside a string: not classes only
        return None
    position = {name: i for i, name in enumerate(names)}
    needs = tuple(tuple(sorted({position[w] for w in _IDENTIFIER.findall(text) if w in position} - {i}))
                  for i, text in enumerate(segments))
    return head, tuple(names), codes, needs


def _shifted(code: CodeType, by: int) -> CodeType:
    """``code`` compiled from a segment that starts ``by`` lines into its file, with the file's line numbers (for
    tracebacks and warnings), nested functions and classes included."""
    consts = tuple(_shifted(c, by) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_firstlineno=code.co_firstlineno + by, co_consts=consts)


@functools.cache
def _mentions(path: str) -> frozenset[str]:
    """Every identifier the source at ``path`` mentions (code, annotations and strings alike), cached between runs,
    and read once per process (both types modules ask for every resource module's)."""
    def build() -> frozenset[str]:
        return frozenset(_IDENTIFIER.findall(_source(path)))

    found = _cached(path, MENTIONS_TAG, build)
    return found if found is not None else build()


class _TypeModule(ModuleType):
    """A types module whose classes are defined when first named: as an attribute (``outputs.ClusterAutoscale``, how
    a resource module's annotations name them) or by a star-import, which takes every name in ``__all__``."""

    def __getattr__(self, name: str) -> Any:
        loader = self.__dict__.get("__loader__")
        if isinstance(loader, _LazyTypesLoader) and loader.define(self, (name,)):
            return self.__dict__[name]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    @property
    def __all__(self) -> list[str]:
        loader = self.__dict__.get("__loader__")
        if isinstance(loader, _LazyTypesLoader) and loader.index is not None:
            return loader.exported(self)
        try:
            return self.__dict__["__all__"]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute '__all__'") from None

    @__all__.setter
    def __all__(self, value: list[str]) -> None:
        self.__dict__["__all__"] = value


class _LazyTypesLoader(_LazyAnnotationsLoader):
    """``_inputs`` or ``outputs``: only the classes the subset's resource modules name are defined at import, with
    every class their sources name in turn (`_TypeIndex.needs`), so that ``typing.get_type_hints``, which resolves a
    class's annotations in a copy of its module's globals (``pulumi._types._globals_for_cls``), finds each one. Any
    other class is defined when it is named. While the subset is imported, a star-import takes what is defined;
    after it (``subset_only`` off), every class. A module that does not split into classes is imported whole."""

    def __init__(self, fullname: str, path: str, mentioned_by: Sequence[str]) -> None:
        super().__init__(fullname, path)
        self.mentioned_by = tuple(mentioned_by)
        self.index: _TypeIndex | None = None
        self.position: dict[str, int] = {}
        self.defined: set[int] = set()
        self.subset_only = True
        self._exported: list[str] | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return _TypeModule(spec.name)

    def exec_module(self, module: ModuleType) -> None:
        found = _cached(self.path, LAZY_TYPES_TAG, lambda: _split_types(_source(self.path), self.path))
        if found is None:
            super().exec_module(module)
            return
        self.index = _TypeIndex(*found)
        self.position = {name: i for i, name in enumerate(self.index.names)}
        exec(self.index.head, module.__dict__)  # noqa: S102 - the SDK's own module header, compiled from its source
        named: set[str] = set()
        for path in self.mentioned_by:
            named |= _mentions(path)
        self.define(module, named)

    def define(self, module: ModuleType, names: Iterable[str]) -> bool:
        """Define the classes ``names`` names (those this module has) and the classes they need; False when it has
        none of them."""
        if self.index is None:
            return False
        todo = [self.position[n] for n in names if n in self.position]
        found = bool(todo)
        new: set[int] = set()
        while todo:
            i = todo.pop()
            if i not in new and i not in self.defined:
                new.add(i)
                todo.extend(self.index.needs[i])
        namespace = module.__dict__
        for i in sorted(new):  # in the file's order, as a plain import defines them
            exec(marshal.loads(self.index.codes[i]), namespace)  # noqa: S102 - the SDK's own class, as above
            self.defined.add(i)
        if new:
            self._exported = None
        return found

    def exported(self, module: ModuleType) -> list[str]:
        """``__all__`` as a star-import sees it: what is defined while the subset is imported, then every class."""
        if not self.subset_only and len(self.defined) < len(self.position):
            self.define(module, self.position)
        if self._exported is None:
            everything = module.__dict__.get("__all__", ())
            self._exported = [n for n in everything if n in module.__dict__]
        return self._exported


class _ProviderFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of ``package`` as the path finder does, to be loaded by `_LazyTypesLoader` (the types
    modules, with the sources of the resource modules in the subset) or `_LazyAnnotationsLoader` (the others)."""

    def __init__(self, package: str, resource_sources: Sequence[str]) -> None:
        self.package = package
        self.resource_sources = tuple(resource_sources)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self.package + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader or spec.origin is None:
            return spec
        if fullname.rpartition(".")[2] in TYPE_MODULES:
            spec.loader = _LazyTypesLoader(fullname, spec.origin, self.resource_sources)
        else:
            spec.loader = _LazyAnnotationsLoader(fullname, spec.origin)
        return spec
