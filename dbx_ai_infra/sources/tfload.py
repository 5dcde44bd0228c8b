"""Terraform's loading rules: which files of a module directory Terraform reads, in which order, and how they make
one module (``check --terraform``, ``cost --terraform``).

As Terraform 1.11 loads a directory (``internal/configs/parser_config_dir.go``, checked against the ``terraform``
binary, see docs/terraform.md):

- configuration: every ``*.tf`` (HCL) and ``*.tf.json`` (Terraform's JSON syntax, read into the same shape) of the
  directory, not its sub-directories; a name starting with ``.`` or ending ``~`` (editor swap and lock files,
  ``.#main.tf``), or ``#...#`` (emacs), is skipped as Terraform skips it (``IsIgnoredFile``);
- ``override.tf``, ``override.tf.json`` and ``*_override.tf(.json)`` are merged after the others, in name order,
  with Terraform's override semantics (``module_merge.go``, ``module_merge_body.go``): a resource's, data source's
  or module call's arguments replace the base's one by one, a nested block type given in the override replaces
  every block of that type (``dynamic`` ones too), a local or a variable's field replaces the base's; an override
  of a block that no primary file declares is refused, as Terraform refuses it;
- a UTF-8 byte-order mark is accepted;
- the same resource, data source, module call, variable or local declared twice is refused naming both places
  (Terraform: ``Duplicate resource "T" configuration``);
- variable values: ``terraform.tfvars``, ``terraform.tfvars.json``, then ``*.auto.tfvars`` and
  ``*.auto.tfvars.json`` in lexical order (hidden ones too: Terraform filters these by suffix only), then each
  ``--var-file`` in order, read as JSON when its name ends ``.json`` and as HCL otherwise.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.sources import tfcache
from dbx_ai_infra.sources.exports import TERRAFORM_LISTS

#: What a module's configuration is written in: Terraform's native syntax and its JSON syntax.
CONFIG_SUFFIXES = (".tf", ".tf.json")
#: The value files Terraform reads from the working directory before the ``-var-file``s.
DEFAULT_TFVARS = ("terraform.tfvars", "terraform.tfvars.json")
AUTO_TFVARS = (".auto.tfvars", ".auto.tfvars.json")
#: Set (not ``0``): every ``.tf`` file is read by python-hcl2, none by the fast reader (`quick_text`).
NO_FAST_ENV = "STACKPLAN_NO_FAST_HCL"

_HEADER = re.compile(r'^[ \t]*(resource|data|module|variable)[ \t]+"?([A-Za-z0-9_.-]+)"?'
                     r'(?:[ \t]+"?([A-Za-z0-9_.-]+)"?)?[ \t]*\{', re.M)
_TERRAFORM_SAYS = {"resource": 'Duplicate resource "{type}" configuration', "data": 'Duplicate data "{type}" '
                   "configuration", "module": "Duplicate module call", "variable": "Duplicate variable declaration",
                   "locals": "Duplicate local value definition"}


def ignored(name: str) -> bool:
    """A file Terraform does not load (``IsIgnoredFile``): hidden, a vim backup, an emacs autosave or lock file."""
    return name.startswith(".") or name.endswith("~") or (name.startswith("#") and name.endswith("#"))


def config_suffix(name: str) -> str:
    return next((s for s in CONFIG_SUFFIXES if name.endswith(s)), "")


def is_override(name: str) -> bool:
    """``override.tf``, ``override.tf.json``, ``*_override.tf``, ``*_override.tf.json``."""
    stem = name[:-len(config_suffix(name))] if config_suffix(name) else name
    return stem == "override" or stem.endswith("_override")


def config_files(directory: Path) -> tuple[list[Path], list[Path]]:
    """The primary and the override files Terraform loads from ``directory``, each in name order."""
    try:
        entries = sorted(directory.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise InputError.single(str(directory), "--terraform", f"cannot be read: {exc.strerror or exc}.",
                                "pass a readable Terraform module directory.") from None
    loaded = [p for p in entries if config_suffix(p.name) and not ignored(p.name) and not p.is_dir()]
    return [p for p in loaded if not is_override(p.name)], [p for p in loaded if is_override(p.name)]


def has_config(directory: Path) -> bool:
    """Terraform's ``IsConfigDir``: the directory holds a file Terraform would load."""
    try:
        return any(sum(config_files(directory), []))
    except InputError:
        return False


def tfvars_files(directory: Path, var_files: Sequence[str]) -> list[Path]:
    """The value files in Terraform's order: the two defaults, the auto files in lexical order, the ``--var-file``s."""
    found = [directory / name for name in DEFAULT_TFVARS if (directory / name).exists()]
    try:
        found += sorted((p for p in directory.iterdir() if p.name.endswith(AUTO_TFVARS)), key=lambda p: p.name)
    except OSError:
        pass
    return found + [Path(f) for f in var_files]


# --------------------------------------------------------------------------------------------------------------------
# One file
# --------------------------------------------------------------------------------------------------------------------

def read_bytes(path: Path, flag: str = "--terraform") -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise InputError.single(str(path), flag, "is a directory, not a file Terraform reads (Terraform: "
                                f"\"read {path.name}: is a directory\").",
                                "pass the file (a .tfvars or .tfvars.json file for --var-file).") from None
    except OSError as exc:
        raise InputError.single(str(path), flag, f"cannot be read: {exc.strerror or exc}.",
                                "pass a readable file (a symlink loop, a missing target or no permission is not "
                                "one).") from None


def hcl_loads(text: str) -> dict[str, Any]:
    """HCL text as python-hcl2 reads it (strings unquoted, no comments); raises what the parser raises. (Plain
    HCL is read before, by `quick_text`, where `read_files` parses.)"""
    import hcl2  # noqa: PLC0415 - only the Terraform reader needs the HCL parser
    from hcl2.utils import SerializationOptions  # noqa: PLC0415

    return hcl2.load(io.StringIO(text), serialization_options=SerializationOptions(
        with_comments=False, strip_string_quotes=True))


def parse_text(text: str, syntax: str, path: str) -> dict[str, Any]:
    """A file's text in the shape python-hcl2 gives (``syntax``: ``hcl``, ``json`` configuration or ``json-values``
    for a ``.tfvars.json``); `InputError` naming the file and the line for one Terraform would refuse."""
    if syntax != "hcl":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError.single(path, "", f"is not JSON (line {exc.lineno}): {exc.msg}.",
                                    "pass Terraform's JSON syntax (an object), as terraform validate accepts it.") \
                from None
        if not isinstance(doc, dict):
            raise InputError.single(path, "", "is not a JSON object (Terraform: \"Root value must be object\").",
                                    "write the file as one JSON object.")
        return doc if syntax == "json-values" else json_config(doc)
    try:
        return hcl_loads(text)
    except Exception as exc:  # noqa: BLE001 - lark raises many kinds; each means the file is not HCL
        line = getattr(exc, "line", None)
        where = f" (line {line})" if isinstance(line, int) and line > 0 else ""
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError.single(path, "", f"is not HCL{where}: {first[:160]}",
                                "pass Terraform code (.tf) that terraform validate accepts.") from None


def quick_text(text: str, syntax: str) -> dict[str, Any] | None:
    """A ``.tf`` file's parse by `dbx_ai_infra.sources.hclfast` where it reads it exactly as python-hcl2 would, else
    None (`parse_text` reads it)."""
    if syntax != "hcl" or os.environ.get(NO_FAST_ENV, "") not in ("", "0"):
        return None
    from dbx_ai_infra.sources import hclfast  # noqa: PLC0415 - it imports python-hcl2's helpers

    return hclfast.loads(text) if hclfast.serializes_as_installed() else None


def syntax_of(path: Path, values: bool = False) -> str:
    """How Terraform reads a file: by its name's ending (a ``-var-file`` ending ``.json`` is JSON)."""
    if path.name.endswith(".json"):
        return "json-values" if values else "json"
    return "hcl"


def _text(path: Path, data: bytes, flag: str) -> str:
    try:
        return data.decode("utf-8-sig")  # a byte-order mark is accepted, as Terraform accepts it
    except UnicodeDecodeError as exc:
        raise InputError.single(str(path), flag, f"is not UTF-8 text (byte {exc.start}).",
                                "save the file as UTF-8, as Terraform reads it.") from None


def read_files(paths: Sequence[Path], *, values: bool = False,
               flag: str = "--terraform") -> dict[Path, tuple[str, dict[str, Any]]]:
    """Files: each one's text (a byte-order mark dropped) and parse, from the parse cache where its bytes were parsed
    before (`dbx_ai_infra.sources.tfcache`)."""
    jobs = []
    for path in paths:
        data = read_bytes(path, flag)
        jobs.append((data, syntax_of(path, values), _text(path, data, flag), str(path)))
    docs = tfcache.parse_all(jobs, parse_text, quick_text)
    return {path: (job[2], doc) for path, job, doc in zip(paths, jobs, docs, strict=True)}


def read_file(path: Path, *, values: bool = False, flag: str = "--terraform") -> tuple[str, dict[str, Any]]:
    """One file's text and parse."""
    return read_files([path], values=values, flag=flag)[path]


# --------------------------------------------------------------------------------------------------------------------
# JSON configuration syntax, into python-hcl2's shape
# --------------------------------------------------------------------------------------------------------------------

_LABELS = {"resource": 2, "data": 2, "module": 1, "variable": 1, "output": 1, "provider": 1}


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    """A JSON block value: one object, or an array of objects (JSON syntax allows both at every label level)."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            yield item


def _json_body(body: dict[str, Any]) -> dict[str, Any]:
    """A block body: ``//`` comments dropped; ``dynamic`` blocks and their ``content``, and the repeated blocks
    the plan reader renames (``library``, ``task``, ...), as python-hcl2 gives them: lists of objects."""
    out: dict[str, Any] = {}
    for key, val in body.items():
        if key == "//":
            continue
        if key == "dynamic":
            out[key] = [{label: {**_json_body(inner), "content": [_json_body(c) for c in
                                                                   _objects(inner.get("content"))]}}
                        for block in _objects(val) for label, d in block.items() for inner in _objects(d)]
        elif key in TERRAFORM_LISTS and isinstance(val, (dict, list)) and all(isinstance(v, dict) for v in
                                                                              _list(val)):
            out[key] = [_json_body(v) for v in _list(val)]
        elif isinstance(val, dict):
            out[key] = _json_body(val)
        else:
            out[key] = val
    return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def json_config(doc: dict[str, Any]) -> dict[str, Any]:
    """A ``.tf.json`` document in the shape python-hcl2 gives a ``.tf`` file: each block type a list of blocks,
    each labelled block ``{label: {label: body}}``; strings stay templates (``"${var.x}"``), as in HCL's reading."""
    out: dict[str, list[Any]] = {}
    for kind, value in doc.items():
        if kind == "//":
            continue
        labels = _LABELS.get(kind, 0)
        for block in _objects(value):
            if labels == 0:
                out.setdefault(kind, []).append(_json_body(block))
            elif labels == 1:
                out.setdefault(kind, []).extend({name: _json_body(body)} for name, bodies in block.items()
                                                if name != "//" for body in _objects(bodies))
            else:
                out.setdefault(kind, []).extend({rtype: {name: _json_body(body)}} for rtype, named in block.items()
                                                if rtype != "//" for item in _objects(named)
                                                for name, bodies in item.items() if name != "//"
                                                for body in _objects(bodies))
    return out


# --------------------------------------------------------------------------------------------------------------------
# A module
# --------------------------------------------------------------------------------------------------------------------

@dataclass
class Module:
    """One module directory: its blocks, merged over its files as Terraform merges them, and where each is written."""

    directory: Path
    variables: dict[str, Any] = field(default_factory=dict)  # name -> default: filled by the evaluator
    declared: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> the variable block as written
    locals: dict[str, Any] = field(default_factory=dict)
    resources: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    data: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    lines: dict[str, tuple[str, int]] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    #: The ``provider`` blocks as parsed (``{name: body}`` each), read only for the cloud they tell (`tf_providers`).
    providers: list[Any] = field(default_factory=list)


def _blocks(value: Any) -> Iterator[dict[str, Any]]:
    for block in value if isinstance(value, list) else [value]:
        if isinstance(block, dict):
            yield block


def _clean(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if not k.startswith("__")}


def _entries(doc: dict[str, Any]) -> Iterator[tuple[str, str, str, Any]]:
    """Every declaration of a file as (kind, address in the module, name, body): ``resource``/``data`` (body keyed
    by type and name), ``module``, ``variable``, ``locals`` (one entry per local)."""
    yield from _resource_entries(doc)
    yield from _named_entries(doc)
    yield from _local_entries(doc)


def _resource_entries(doc: dict[str, Any]) -> Iterator[tuple[str, str, str, Any]]:
    for kind in ("resource", "data"):
        for block in _blocks(doc.get(kind)):
            for rtype, named in block.items():
                for name, body in (named.items() if isinstance(named, dict) else ()):
                    if isinstance(body, dict):
                        address = f"{rtype}.{name}" if kind == "resource" else f"data.{rtype}.{name}"
                        yield kind, address, rtype, _clean(body)


def _named_entries(doc: dict[str, Any]) -> Iterator[tuple[str, str, str, Any]]:
    for kind in ("module", "variable"):
        for block in _blocks(doc.get(kind)):
            for name, body in block.items():
                if isinstance(body, dict):
                    yield kind, f"{kind if kind == 'module' else 'var'}.{name}", name, _clean(body)


def _local_entries(doc: dict[str, Any]) -> Iterator[tuple[str, str, str, Any]]:
    for block in _blocks(doc.get("locals")):
        for name, expr in block.items():
            if not name.startswith("__"):
                yield "locals", f"local.{name}", name, expr


def _header_lines(text: str, path: Path) -> dict[str, list[int]]:
    """The line of each block header of a file, by address, in file order (a ``.tf.json``: the line of its name)."""
    out: dict[str, list[int]] = {}
    if path.name.endswith(".json"):
        return out
    for match in _HEADER.finditer(text):
        kind, first, second = match.groups()
        if kind in ("resource", "data") and not second:
            continue
        address = {"resource": f"{first}.{second}", "data": f"data.{first}.{second}", "module": f"module.{first}",
                   "variable": f"var.{first}"}[kind]
        out.setdefault(address, []).append(text.count("\n", 0, match.start()) + 1)
    return out


def _json_line(text: str, kind: str, rtype: str, name: str) -> int:
    """Best effort for a ``.tf.json``: the line of the block's name after its type's first mention."""
    start = text.find(f'"{kind}"')
    start = text.find(f'"{rtype}"', max(start, 0)) if kind in ("resource", "data") else start
    at = text.find(f'"{name}"', max(start, 0))
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


@dataclass
class _Place:
    file: Path
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def _place(text: str, path: Path, headers: dict[str, list[int]], seen: dict[str, int], kind: str, address: str,
           rtype: str) -> _Place:
    index = seen.get(address, 0)
    seen[address] = index + 1
    lines = headers.get(address, [])
    if lines:
        return _Place(path, lines[min(index, len(lines) - 1)])
    name = address.rsplit(".", 1)[-1]
    return _Place(path, _json_line(text, kind, rtype, name) if path.name.endswith(".json") else 1)


def read_module(directory: Path, files: Sequence[Path] | None = None) -> Module:
    """The module of ``directory`` as Terraform loads it (or of just ``files``: one file given on the command line,
    with no overrides)."""
    primary, overrides = (list(files), []) if files is not None else config_files(directory)
    module = Module(directory, files=[*primary, *overrides])
    parsed = read_files([*primary, *overrides])
    places: dict[str, _Place] = {}
    for path in primary:
        text, doc = parsed[path]
        headers, seen = _header_lines(text, path), dict[str, int]()
        for kind, address, rtype, body in _entries(doc):
            place = _place(text, path, headers, seen, kind, address, rtype)
            if address in places:
                _duplicate(kind, address, rtype, places[address], place)
            places[address] = place
            _add(module, kind, address, rtype, body, place)
        blocks = doc.get("provider")
        module.providers.extend(blocks if isinstance(blocks, list) else [blocks] if blocks else [])
    for path in overrides:
        _, doc = parsed[path]
        for kind, address, rtype, body in _entries(doc):
            _override(module, kind, address, rtype, body, path)
    return module


def _duplicate(kind: str, address: str, rtype: str, first: _Place, again: _Place) -> None:
    said = _TERRAFORM_SAYS[kind].format(type=rtype)
    raise InputError.single(str(again.file), address, f"is declared twice: at {first} and at {again} (Terraform "
                            f"refuses it: \"{said}\").",
                            "keep one declaration (an override.tf or *_override.tf file is the way to change a "
                            "block declared elsewhere).")


def _add(module: Module, kind: str, address: str, rtype: str, body: Any, place: _Place) -> None:
    if kind == "resource":
        module.resources.append((rtype, address.split(".", 1)[1], body))
    elif kind == "data":
        module.data.append((rtype, address.split(".", 2)[2], body))
    elif kind == "module":
        module.calls.append((rtype, body))
    elif kind == "variable":
        module.declared[rtype] = body
    else:
        module.locals[rtype] = body
    if kind in ("resource", "data", "module"):
        module.lines.setdefault(address, (str(place.file), place.line))


def merge_body(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Terraform's ``MergeBodies``: the override's arguments replace the base's by name; a block type the override
    gives (statically or as ``dynamic "T"``) replaces every block of that type in the base, ``dynamic`` ones too."""
    over_dynamic = [d for d in _blocks(over.get("dynamic")) if isinstance(d, dict)]
    replaced = {k for k in over if k != "dynamic"} | {label for d in over_dynamic for label in d}
    out = {k: v for k, v in base.items() if k not in replaced}
    kept = [d for d in _blocks(base.get("dynamic")) if not set(d) & replaced]
    out.update({k: v for k, v in over.items() if k != "dynamic"})
    if kept or over_dynamic:
        out["dynamic"] = kept + over_dynamic
    else:
        out.pop("dynamic", None)
    return out


def _override(module: Module, kind: str, address: str, rtype: str, body: Any, path: Path) -> None:
    """One declaration of an override file merged into the module, as ``Module.mergeFile`` does."""
    if kind in ("resource", "data"):
        into = module.resources if kind == "resource" else module.data
        name = address.rsplit(".", 1)[1]
        found = next((i for i, (t, n, _) in enumerate(into) if t == rtype and n == name), None)
        if found is not None and "depends_on" in body:
            raise InputError.single(str(path), address, "overrides depends_on (Terraform: \"Unsupported "
                                    "override: The depends_on argument may not be overridden\").",
                                    "set depends_on in the primary file's block.")
        if found is not None:
            into[found] = (rtype, name, merge_body(into[found][2], body))
            return
    elif kind == "module":
        found = next((i for i, (n, _) in enumerate(module.calls) if n == rtype), None)
        if found is not None:
            module.calls[found] = (rtype, {**module.calls[found][1], **body})
            return
    elif kind == "variable" and rtype in module.declared:
        module.declared[rtype] = {**module.declared[rtype], **{k: v for k, v in body.items() if k != "validation"}}
        return
    elif kind == "locals" and rtype in module.locals:
        module.locals[rtype] = body
        return
    what = {"resource": "resource", "data": "data resource", "module": "module call", "variable": "variable",
            "locals": "local value"}[kind]
    raise InputError.single(str(path), address, f"overrides a {what} that no primary file of {module.directory} "
                            f"declares (Terraform: \"Missing {what} to override\").",
                            "declare the block in a .tf file of the module, or remove it from the override file.")


def read_values(path: Path, flag: str = "--var-file") -> dict[str, Any]:
    """A variable-values file (``.tfvars``: HCL; ``.tfvars.json`` or any ``.json``: a JSON object)."""
    if not path.exists() and not path.is_symlink():
        raise InputError.single(str(path), flag, "does not exist.", "pass a .tfvars or .tfvars.json file.")
    _, doc = read_file(path, values=True, flag=flag)
    return {k: v for k, v in doc.items() if not k.startswith("__")}
