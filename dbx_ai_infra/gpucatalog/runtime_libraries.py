"""The libraries of each GPU ML runtime and the pins the stack gives a workload (data file ``runtime_libraries.yaml``,
issue 52 item 9): one home for "which transformers, peft, accelerate and vllm go with runtime X".

A workload's ``libraries`` entry is ``pkg==x.y.z`` (its own pin, kept) or a bare ``pkg`` (the runtime's pin from the
table). `resolve_libraries` turns one workload's list into what the cluster installs and says what is wrong with it:
a bare name the runtime's row does not pin (exit 2), a pin whose release the runtime's Python cannot install (exit 2:
pip refuses it), and, as notes, a pin that needs another torch than the runtime ships (vllm pins torch exactly: pip
replaces the runtime's torch, and its CUDA build with it) or a pin the table cannot judge (unknown, named).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml, read_text
from dbx_ai_infra.dbxtypes.pip import is_bare_pip, pip_project

from .runtimes import release_of

LIBRARIES_FILE = Path(__file__).resolve().parent / "runtime_libraries.yaml"


@dataclass(frozen=True)
class RuntimeRow:
    """One GPU ML runtime: its Python, CUDA and preinstalled libraries (``None``: not preinstalled), the pins the stack
    gives a bare library name, and where the facts come from. ``unknown`` (a reason) when its release notes were not
    found: then nothing else is known."""

    version: str
    source: str
    read: str
    python: str | None = None
    cuda: str | None = None
    preinstalled: dict[str, str | None] = field(default_factory=dict)
    pins: dict[str, str] = field(default_factory=dict)
    unknown: str | None = None

    @property
    def label(self) -> str:
        release = release_of(f"{self.version}.x-gpu-ml-scala2.13")
        return f"{release.label if release else self.version} ML"

    @property
    def torch(self) -> str | None:
        return self.preinstalled.get("torch")

    def describe(self) -> str:
        """``17.3 LTS ML (Python 3.12, CUDA 12.6, torch 2.7.0)``."""
        return f"{self.label} (Python {self.python}, CUDA {self.cuda}, torch {self.torch})"


@dataclass(frozen=True)
class Release:
    """What PyPI's metadata says of one release of a library the table knows: the Pythons it installs on
    (``requires_python``), the torch it needs (``torch``: a specifier, e.g. ``==2.7.0`` for vllm's exact pin,
    ``>=2.5`` for transformers' floor) and, for vllm, the CUDA major its torch's PyPI wheel is built for."""

    python: str
    torch: str | None = None
    cuda: str | None = None


@dataclass(frozen=True)
class LibraryTable:
    runtimes: dict[str, RuntimeRow]
    releases: dict[str, dict[str, Release]]

    def row_of(self, spark_version: str) -> RuntimeRow | None:
        """The row of the release a runtime key names (``17.3.x-gpu-ml-scala2.13`` -> 17.3, ``18.x-...`` -> 18)."""
        release = release_of(spark_version)
        return self.runtimes.get(release.version) if release is not None else None


def _row(raw: dict[str, Any]) -> RuntimeRow:
    return RuntimeRow(str(raw["version"]), str(raw["source"]), str(raw["read"]),
                      python=_text(raw.get("python")), cuda=_text(raw.get("cuda")),
                      preinstalled={str(k): _text(v) for k, v in (raw.get("preinstalled") or {}).items()},
                      pins={str(k): str(v) for k, v in (raw.get("pins") or {}).items()},
                      unknown=_text(raw.get("unknown")))


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


@functools.cache
def library_table() -> LibraryTable:
    data = parse_packaged_yaml(read_text(str(LIBRARIES_FILE), "runtime library table"), str(LIBRARIES_FILE))
    releases = {str(name): {str(v): Release(str(r["python"]), _text(r.get("torch")), _text(r.get("cuda")))
                            for v, r in rows.items()}
                for name, rows in data["releases"].items()}
    return LibraryTable({str(r["version"]): _row(r) for r in data["runtimes"]}, releases)


@dataclass
class Resolved:
    """One workload's libraries as the cluster installs them, and what the table says of them: ``problems`` (the
    library as written, what is wrong, the fix: exit 2) and ``notes`` (the preview's)."""

    libraries: list[str] = field(default_factory=list)
    problems: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _split(lib: str) -> tuple[str, str] | None:
    """``vllm==0.9.2`` -> (``vllm``, ``0.9.2``); None for a URL, a marker or an extra-laden name the table does not
    judge (its own pin, kept as written)."""
    name = pip_project(lib) or ""
    version = lib.split("==", 1)[1].split(";", 1)[0].strip() if "==" in lib else ""
    return (name, version.lstrip("=")) if name and version else None


def _contains(spec: str, version: str | None) -> bool | None:
    """Whether ``version`` is in ``spec``; None when either cannot be read (unknown, not passed)."""
    if version is None:
        return None
    try:
        return SpecifierSet(spec).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None


def _python_fits(python: str | None, spec: str) -> bool | None:
    """Whether a runtime's Python (``3.12``: a minor, any patch) installs a release of ``requires_python`` ``spec``:
    judged on its first patch and its last, so ``>=3.12.3`` is not refused a runtime the table knows as ``3.12``."""
    if python is None:
        return None
    fits = [_contains(spec, f"{python}.{patch}") for patch in (0, 99)]
    return None if None in fits else any(fits)


def _pin_problem(row: RuntimeRow, name: str, version: str, release: Release) -> tuple[str, str] | None:
    """A pinned release the runtime's Python cannot install: pip refuses it (the message, the fix)."""
    if _python_fits(row.python, release.python) is not False:
        return None
    instead = f"{name}=={row.pins[name]} (the runtime's pin) or the bare name {name}" if name in row.pins \
        else f"a {name} release for Python {row.python}"
    return (f"{name}=={version} needs Python {release.python} (PyPI's requires_python), but runtime "
            f"{row.describe()} runs Python {row.python}: pip refuses it and the cluster's library install fails.",
            f"pin {instead}.")


def _torch_note(row: RuntimeRow, name: str, version: str, release: Release) -> str | None:
    """A pinned release that needs another torch than the runtime ships, as the preview says it."""
    if release.torch is None or _contains(release.torch, row.torch) is not False:
        return None
    if release.torch.startswith("=="):  # vllm: pip installs the torch it pins in place of the runtime's
        build = f" (a CUDA {release.cuda} build)" if release.cuda else ""
        effect = (f"pip replaces the runtime's torch {row.torch} (CUDA {row.cuda}) with torch{release.torch}{build}, "
                  f"under the runtime's own torchvision, flash-attn and deepspeed, built for torch {row.torch}")
    else:
        effect = f"{name} does not run on it (pip keeps the runtime's torch)"
    instead = f"{name}=={row.pins[name]} (the runtime's pin) or the bare name {name}" if name in row.pins \
        else f"a {name} release for torch {row.torch}, or a runtime whose torch it fits"
    return (f"{name}=={version} needs torch{release.torch} (PyPI's requires_dist), but runtime {row.describe()} "
            f"ships torch {row.torch}: {effect}. Fix: {instead}.")


def _judge(row: RuntimeRow, lib: str, out: Resolved, unchecked: list[str]) -> None:
    """One pinned library against the runtime's row: a problem, a note, or unchecked (a release the table lacks)."""
    split = _split(lib)
    known = library_table().releases
    if split is None or split[0] not in known:
        return
    name, version = split
    release = known[name].get(version)
    if release is None:
        unchecked.append(lib)
        return
    if problem := _pin_problem(row, name, version, release):
        out.problems.append((lib, *problem))
    elif note := _torch_note(row, name, version, release):
        out.notes.append(note)


def resolve_libraries(libraries: list[str], spark_version: str | None) -> Resolved:
    """A workload's libraries on a runtime (``spark_version``; None: serverless GPU, which has no runtime row): each
    bare name replaced by the runtime's pin, each pin judged against the runtime (`Resolved`)."""
    row = library_table().row_of(spark_version) if spark_version else None
    out, unchecked = Resolved(), list[str]()
    for lib in libraries:
        if not is_bare_pip(lib):
            out.libraries.append(lib)
            if row is not None and row.unknown is None:
                _judge(row, lib, out, unchecked)
            continue
        name = pip_project(lib) or lib
        pin = row.pins.get(name) if row is not None and row.unknown is None else None
        if pin is None:
            out.problems.append((lib, _no_pin(lib, row, spark_version), f"write it as {lib}==x.y.z."))
            continue
        out.libraries.append(f"{lib}=={pin}")
    if unchecked and row is not None:
        out.notes.append(f"{', '.join(unchecked)}: not in the runtime library table (dbx_ai_infra/gpucatalog/"
                         f"runtime_libraries.yaml), so whether {'they fit' if len(unchecked) > 1 else 'it fits'} "
                         f"runtime {row.describe()} is unknown here.")
    if row is not None and row.unknown is not None and libraries:
        out.notes.append(f"runtime {row.label}: its Python, CUDA and libraries are unknown here ({row.unknown}): the "
                         f"workload's own pins are kept, unchecked.")
    return out


def _no_pin(lib: str, row: RuntimeRow | None, spark_version: str | None) -> str:
    """Why a bare library name gets no pin."""
    if spark_version is None:
        return f"{lib!r} names no version, and a serverless GPU workload has no runtime whose pin it could take."
    if row is None:
        return (f"{lib!r} names no version, and runtime {spark_version} has no row in the runtime library table "
                f"(dbx_ai_infra/gpucatalog/runtime_libraries.yaml) to take a pin from.")
    if row.unknown is not None:
        return f"{lib!r} names no version, and runtime {row.label}'s libraries are unknown here ({row.unknown})."
    name = pip_project(lib) or lib
    why = f": no {name} release it knows fits that runtime" if name in library_table().releases else ""
    return (f"{lib!r} names no version, and the runtime library table has no {name} pin for runtime "
            f"{row.describe()} (it pins {', '.join(sorted(row.pins))}){why}.")
