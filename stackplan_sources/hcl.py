"""Terraform code as written (``check --terraform PATH``, ``cost --terraform PATH``): a ``.tf`` file or a module
directory read with python-hcl2, and made into the plan ``terraform plan`` would show of it, so that the one plan
reader (`stackplan_sources.exports.terraform_items`) judges and prices it.

What is evaluated, as Terraform evaluates it: variables (their defaults, then ``terraform.tfvars``, then
``*.auto.tfvars`` in name order, then each ``--var-file`` in order; ``TF_VAR_<name>`` in the environment first, as
Terraform reads it), locals, references to them, ``each.key`` /
``each.value`` / ``count.index``, string templates, a conditional and ``==``/``!=`` on known values, the functions
``merge``, ``concat``, ``lookup``, ``coalesce``, ``length``, ``lower``, ``upper``, ``tostring``, ``tonumber``;
``count`` and ``for_each`` instances, addressed as Terraform addresses them (``module.serving["chat"]
.databricks_cluster.this[0]``); local module calls (``source = "./..."``) with their inputs. A resource's ``.id``
referenced by another (a cluster's ``instance_pool_id``, a permission's ``cluster_id``) is that resource's address,
as the plan reader gives an id known only after apply.

What is not, and stays unknown (``after_unknown``), never guessed and never an error: a data source's attributes (a
``databricks_spark_version``'s ``id``, read at apply), a module's outputs, any other attribute of a resource, a
variable with no value, an undeclared reference, a function this reader does not evaluate. A resource whose
``count`` or ``for_each`` is unknown, a remote module and a module directory that does not exist are skipped, each
with a note. Only a file that is not HCL is invalid input.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbxtypes.errors import InputError
from stackplan_sources import tfexpand, tfload
from stackplan_sources.exports import terraform_items
from stackplan_sources.tf_references import DATA_ADDRESS, SELECTED_BY
from stackplan_sources.tfload import Module
from stackplan_sources.tfload import hcl_loads as _loads

#: A value this reader does not know (Terraform's "known after apply", or something it does not evaluate).
UNKNOWN: Any = type("Unknown", (), {"__repr__": lambda self: "<unknown>"})()
#: Where a resource block is written: ``(file, line)`` by its configuration address.
Locations = dict[str, tuple[str, int]]

#: The key of the plan document read from code that lists the blocks not evaluated (`tfexpand.Skipped`): no
#: Terraform plan has it, and the plan reader reads nothing of it.
NOT_EVALUATED_KEY = "stackplan_not_evaluated"
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_TRAVERSAL = re.compile(r'^[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[[^\[\]]*\])*$')


def read_module(directory: Path, files: Sequence[Path] | None = None) -> Module:
    """The blocks of a module as Terraform loads them (`stackplan_sources.tfload`), its variables' defaults
    (`UNKNOWN`: none)."""
    module = tfload.read_module(directory, files)
    module.variables = {name: body.get("default", UNKNOWN) for name, body in module.declared.items()}
    return module


def read_tfvars(path: Path) -> dict[str, Any]:
    """A ``.tfvars`` (HCL) or ``.tfvars.json`` file's values."""
    return tfload.read_values(path)


# --------------------------------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------------------------------

@dataclass
class Scope:
    """What an expression of one module instance may name."""

    prefix: str  # the module instance's address prefix: "" or 'module.serving["chat"].'
    variables: Mapping[str, Any]
    locals_raw: Mapping[str, Any]
    notes: list[str]
    each: tuple[Any, Any] | None = None
    count: int | None = None
    _locals: dict[str, Any] = field(default_factory=dict)

    def local(self, name: str) -> Any:
        if name not in self._locals:
            self._locals[name] = UNKNOWN  # a local that names itself stays unknown
            self._locals[name] = value(self.locals_raw[name], self) if name in self.locals_raw else UNKNOWN
        return self._locals[name]


def _split_top(text: str, separators: str) -> list[str]:
    """``text`` split at the separators that are outside brackets and strings."""
    parts, depth, quote, start, i = [], 0, False, 0, 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and c in separators:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _interpolations(text: str) -> list[tuple[int, int]]:
    """The ``${...}`` spans of a template, outermost, as (start, end) with ``end`` after the closing brace."""
    spans, i = [], 0
    while (start := text.find("${", i)) >= 0:
        if start > 0 and text[start - 1] == "$":  # $${ is a literal ${
            i = start + 2
            continue
        depth, j, quote = 0, start + 1, False
        while j < len(text):
            c = text[j]
            if quote:
                quote = not (c == '"' and text[j - 1] != "\\")
            elif c == '"':
                quote = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        spans.append((start, j + 1))
        i = j + 1
    return spans


def value(raw: Any, scope: Scope) -> Any:
    """A value as python-hcl2 gives it (literals, lists, dicts, strings holding ``${...}``), evaluated."""
    if isinstance(raw, str):
        return _string(raw, scope)
    if isinstance(raw, list):
        return [value(v, scope) for v in raw]
    if isinstance(raw, dict):
        return {k: value(v, scope) for k, v in raw.items() if not k.startswith("__")}
    return raw


def _string(text: str, scope: Scope) -> Any:
    spans = _interpolations(text)
    if len(spans) == 1 and spans[0] == (0, len(text)):
        return expression(text[2:-1], scope)
    out, last = [], 0
    for start, end in spans:
        got = expression(text[start + 2:end - 1], scope)
        if got is UNKNOWN or isinstance(got, (dict, list)):
            return UNKNOWN
        out.append(text[last:start] + ("true" if got is True else "false" if got is False else str(got)))
        last = end
    return "".join(out) + text[last:]


_FUNCTIONS: dict[str, Callable[[list[Any]], Any]] = {
    "merge": lambda a: {k: v for m in a for k, v in m.items()} if all(isinstance(m, dict) for m in a) else UNKNOWN,
    "concat": lambda a: [v for m in a for v in m] if all(isinstance(m, list) for m in a) else UNKNOWN,
    "lookup": lambda a: (a[0].get(a[1], a[2] if len(a) > 2 else UNKNOWN) if isinstance(a[0], dict) else UNKNOWN),
    "coalesce": lambda a: next((v for v in a if v not in (None, "")), UNKNOWN),
    "length": lambda a: len(a[0]) if isinstance(a[0], (list, dict, str)) else UNKNOWN,
    "lower": lambda a: a[0].lower() if isinstance(a[0], str) else UNKNOWN,
    "upper": lambda a: a[0].upper() if isinstance(a[0], str) else UNKNOWN,
    "tostring": lambda a: str(a[0]) if isinstance(a[0], (str, int, float)) else UNKNOWN,
    "tonumber": lambda a: float(a[0]) if isinstance(a[0], str) and _NUMBER.match(a[0]) else a[0],
}


def expression(text: str, scope: Scope) -> Any:
    """One HCL expression (the inside of ``${...}``), evaluated where it is known; else `UNKNOWN`."""
    text = text.strip()
    if not text:
        return UNKNOWN
    if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        return expression(text[1:-1], scope)
    question = _split_top(text, "?")
    if len(question) == 2:
        branches = _split_top(question[1], ":")
        if len(branches) == 2:
            condition = expression(question[0], scope)
            if condition is UNKNOWN:
                return UNKNOWN
            return expression(branches[0] if condition else branches[1], scope)
    for operator in ("==", "!="):
        parts = text.split(f" {operator} ")
        if len(parts) == 2:
            left, right = expression(parts[0], scope), expression(parts[1], scope)
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            return (left == right) is (operator == "==")
    return _operand(text, scope)


def _balanced(text: str) -> bool:
    """Brackets outside strings close in order (``a) == (b`` does not: its parentheses are not one pair)."""
    depth, quote, escaped = 0, False, False
    for c in text:
        if quote:
            quote, escaped = (escaped or c != '"'), (not escaped and c == "\\")
            continue
        quote = c == '"'
        depth += (c in "([{") - (c in ")]}")
        if depth < 0:
            return False
    return depth == 0


def _operand(text: str, scope: Scope) -> Any:
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if _NUMBER.match(text):
        return float(text) if "." in text else int(text)
    if text.startswith('"') and text.endswith('"'):
        return _string(text[1:-1].replace('\\"', '"'), scope)
    call = re.match(r"^([a-z_][a-z0-9_]*)\((.*)\)$", text, re.S)
    if call:
        function = _FUNCTIONS.get(call.group(1))
        if function is None:
            scope.notes.append(f"function {call.group(1)}() is not evaluated here: its value is unknown")
            return UNKNOWN
        args = [expression(a, scope) for a in _split_top(call.group(2), ",") if a.strip()]
        if not args or any(a is UNKNOWN for a in args):
            return UNKNOWN
        try:
            return function(args)
        except (IndexError, TypeError, ValueError):
            return UNKNOWN
    if text[0] in "{[":
        return _literal(text, scope)
    if _TRAVERSAL.match(text):
        return _reference(text, scope)
    return UNKNOWN


def _literal(text: str, scope: Scope) -> Any:
    """An object or tuple literal, read by the HCL parser as the value of an attribute."""
    try:
        parsed = _loads(f"v = {text}\n")
    except Exception:  # noqa: BLE001 - an expression the parser does not take: unknown, never an error
        return UNKNOWN
    return value(parsed.get("v", UNKNOWN), scope)


def _steps(text: str, scope: Scope) -> list[Any]:
    """``a.b["k"][0]`` -> ``["a", "b", "k", 0]``; an index that is an expression (``[each.key]``,
    ``[count.index]``) is evaluated (`UNKNOWN` when it is not known)."""
    out: list[Any] = []
    for name, index in re.findall(r'\.?([A-Za-z_][A-Za-z0-9_-]*)|\[([^\[\]]*)\]', text):
        if name:
            out.append(name)
            continue
        index = index.strip()
        if index.isdigit():
            out.append(int(index))
        elif index.startswith('"') and index.endswith('"'):
            out.append(index[1:-1])
        else:
            got = expression(index, scope)
            out.append(got if isinstance(got, (str, int)) and not isinstance(got, bool) else UNKNOWN)
    return out


def _walk(found: Any, steps: Sequence[str | int]) -> Any:
    for step in steps:
        if isinstance(found, dict) and step in found:
            found = found[step]
        elif isinstance(found, list) and isinstance(step, int) and step < len(found):
            found = found[step]
        else:
            return UNKNOWN
    return found


def _reference(text: str, scope: Scope) -> Any:
    steps = _steps(text, scope)
    if any(step is UNKNOWN for step in steps):
        return UNKNOWN
    root = steps[0]
    if root == "var" and len(steps) > 1:
        if str(steps[1]) not in scope.variables:
            scope.notes.append(f"{scope.prefix}var.{steps[1]} is not declared: its value is unknown")
        return _walk(scope.variables.get(str(steps[1]), UNKNOWN), steps[2:])
    if root == "local" and len(steps) > 1:
        return _walk(scope.local(str(steps[1])), steps[2:])
    if root == "each" and scope.each is not None and len(steps) > 1:
        return _walk(scope.each[0] if steps[1] == "key" else scope.each[1], steps[2:]) \
            if steps[1] in ("key", "value") else UNKNOWN
    if root == "count" and steps[1:] == ["index"]:
        return scope.count if scope.count is not None else UNKNOWN
    if root in ("data", "module", "path", "terraform", "self"):
        return UNKNOWN
    # a resource: its ``.id`` is its address (an id known after apply, as the plan reader names it)
    if len(steps) >= 3 and isinstance(steps[1], str) and steps[-1] == "id":
        key = steps[2] if len(steps) == 4 else None
        suffix = "" if key is None else f"[{key}]" if isinstance(key, int) else f'["{key}"]'
        return f"{scope.prefix}{root}.{steps[1]}{suffix}"
    return UNKNOWN


# --------------------------------------------------------------------------------------------------------------------
# A module tree as a plan
# --------------------------------------------------------------------------------------------------------------------

def _instances(body: Mapping[str, Any], scope: Scope, what: str, walk: _Walk,
               at: tuple[str, str, int]) -> list[tuple[str, Scope]]:
    """The instances of a block with ``count`` or ``for_each`` (address suffix and scope each), counted against the
    limits (`stackplan_sources.tfexpand`); none, and the block listed as not evaluated, when they are not known.
    ``at``: the block's configured address (no keys), its file and its line."""
    configured, file, line = at
    where = f"{file}:{line}" if line else file
    if "count" in body and "for_each" in body:
        raise InputError.single(where, what, "sets both count and for_each: Terraform refuses it (\"Invalid "
                                "combination of count and for_each\").", "keep one of them.")
    if "count" in body:
        count = tfexpand.count_of(value(body["count"], scope), what, where)
        if count is None:
            scope.notes.append(f"{what}: count is not known here, so it is skipped")
            walk.skip(what, "its count is not known here (known only at apply)", file, line)
            return []
        walk.expansion.add(configured, what, count, where)
        return [(f"[{i}]", Scope(scope.prefix, scope.variables, scope.locals_raw, scope.notes, count=i))
                for i in range(count)]
    if "for_each" in body:
        each = tfexpand.for_each_of(value(body["for_each"], scope), what, where)
        if each is None:
            scope.notes.append(f"{what}: for_each is not known here, so it is skipped")
            walk.skip(what, "its for_each is not known here (known only at apply)", file, line)
            return []
        walk.expansion.add(configured, what, len(each), where)
        return [(f'["{k}"]', Scope(scope.prefix, scope.variables, scope.locals_raw, scope.notes, each=(k, v)))
                for k, v in each.items()]
    walk.expansion.add(configured, what, 1, where)
    return [("", scope)]


def _after(evaluated: Any) -> tuple[Any, Any]:
    """A plan's ``after`` and ``after_unknown`` of an evaluated value."""
    if evaluated is UNKNOWN:
        return None, True
    if isinstance(evaluated, dict):
        pairs = {k: _after(v) for k, v in evaluated.items()}
        unknown = {k: u for k, (_, u) in pairs.items() if u}
        return {k: a for k, (a, _) in pairs.items()}, unknown or False
    if isinstance(evaluated, list):
        items = [_after(v) for v in evaluated]
        return [a for a, _ in items], ([u for _, u in items] if any(u for _, u in items) else False)
    return evaluated, False


_META = ("count", "for_each", "depends_on", "lifecycle", "provider", "provisioner", "connection")


_DATA_ID = re.compile(rf"^\$\{{({DATA_ADDRESS})\.id\}}$")


def _configure(module: Module, scope: Scope, config: dict[str, Any]) -> None:
    """The module's part of the plan's ``configuration``, as ``terraform show -json`` writes it, for what the plan
    reader follows there: the attributes a data source selects (``spark_version = data.x.y.id``) and the data
    source's arguments (each a ``constant_value``, or references when computed). Written once per module."""
    if "resources" in config:
        return
    resources: list[dict[str, Any]] = []
    for rtype, name, body in module.data:
        expressions = {}
        for key, raw in body.items():
            if key.startswith("__") or key in _META:
                continue
            known = value(raw, scope)
            expressions[key] = {"references": ["(computed)"]} if _has_unknown(known) else {"constant_value": known}
        resources.append({"address": f"data.{rtype}.{name}", "mode": "data", "type": rtype, "name": name,
                          "expressions": expressions})
    for rtype, name, body in module.resources:
        expressions = {}
        for key in SELECTED_BY:
            found = _DATA_ID.match(body.get(key, "")) if isinstance(body.get(key), str) else None
            if found:
                expressions[key] = {"references": [f"{found.group(1)}.id", found.group(1)]}
        if expressions:
            resources.append({"address": f"{rtype}.{name}", "mode": "managed", "type": rtype, "name": name,
                              "expressions": expressions})
    config["resources"] = resources
    config.setdefault("module_calls", {})


def _has_unknown(known: Any) -> bool:
    if known is UNKNOWN:
        return True
    if isinstance(known, dict):
        return any(_has_unknown(v) for v in known.values())
    if isinstance(known, list):
        return any(_has_unknown(v) for v in known)
    return False


@dataclass
class _Walk:
    """What one read of a module tree gathers: the resource instances to evaluate (evaluated once the whole tree is
    expanded within its limits), the plan's resource changes, where each is written, the types of other providers'
    resources (not read), each module directory read once (however many instances call it), and what was expanded
    and not evaluated."""

    pending: list[tuple[str, str, dict[str, Any], str, Scope]] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    lines: Locations = field(default_factory=dict)
    others: set[str] = field(default_factory=set)
    modules: dict[Path, Module] = field(default_factory=dict)
    expansion: tfexpand.Expansion = field(default_factory=tfexpand.Expansion)

    def module(self, directory: Path) -> Module:
        if directory not in self.modules:
            self.modules[directory] = read_module(directory)
        return self.modules[directory]

    def skip(self, address: str, reason: str, file: str | None, line: int | None) -> None:
        self.expansion.not_evaluated.append(tfexpand.Skipped(address, reason, file, line or None))

    def evaluate(self) -> None:
        """Each resource instance's ``after``, as the plan would show it."""
        for rtype, name, body, address, inner in self.pending:
            after, unknown = _after(value({k: v for k, v in body.items() if k not in _META}, inner))
            self.changes.append({"address": address, "mode": "managed", "type": rtype, "name": name,
                                 "change": {"actions": ["create"], "before": None, "after": after,
                                            "after_unknown": unknown or {}}})
        self.pending.clear()


def _evaluated(variables: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    """Variable values as given (defaults, tfvars): literals, evaluated with nothing in scope."""
    empty = Scope("", {}, {}, notes)
    return {k: value(v, empty) for k, v in variables.items()}


#: The chain of module calls that leads to a module: (call name, real directory), the root first.
Chain = list[tuple[str, Path]]


def _walk_module(module: Module, scope: Scope, walk: _Walk, config: dict[str, Any], chain: Chain,
                 path: str = "") -> None:
    """Expand a module instance: its resources' instances (evaluated later) and its module calls, recursively.
    ``path``: the module's address without instance keys (``module.a.module.b.``)."""
    _configure(module, scope, config)
    for rtype, name, body in module.resources:
        if not rtype.startswith("databricks_"):  # another provider's: not read (one note names the types)
            walk.others.add(rtype)
            continue
        configured = f"{scope.prefix}{rtype}.{name}"
        file, line = module.lines.get(f"{rtype}.{name}", (str(module.directory), 0))
        for suffix, inner in _instances(body, scope, configured, walk, (f"{path}{rtype}.{name}", file, line)):
            address = f"{configured}{suffix}"
            walk.pending.append((rtype, name, body, address, inner))
            if f"{rtype}.{name}" in module.lines:
                walk.lines[address] = module.lines[f"{rtype}.{name}"]
    for name, call in module.calls:
        _walk_call(module, scope, walk, config, chain, path, name, call)


def _walk_call(module: Module, scope: Scope, walk: _Walk, config: dict[str, Any], chain: Chain, path: str,
               name: str, call: dict[str, Any]) -> None:
    address = f"{scope.prefix}module.{name}"
    file, line = module.lines.get(f"module.{name}", (str(module.directory), 0))
    source = value(call.get("source"), scope)
    if not isinstance(source, str) or not source.startswith(("./", "../")):
        scope.notes.append(f"{address}: source {source!r} is not a local module, so it is skipped")
        walk.skip(address, f"its source {source!r} is not a local module (not read)", file, line)
        return
    directory = Path(os.path.normpath(module.directory / source))  # as written: findings name it so
    real = tfexpand.module_chain(chain, name, directory, f"{file}:{line}" if line else file)
    if not directory.is_dir():
        scope.notes.append(f"{address}: {source} is no directory here, so it is skipped")
        walk.skip(address, f"its source {source} is no directory here (not read)", file, line)
        return
    child = walk.module(directory)
    child_config = config["module_calls"].setdefault(name, {"source": source, "module": {}})["module"]
    for suffix, inner in _instances(call, scope, address, walk, (f"{path}module.{name}", file, line)):
        passed = {k: value(v, inner) for k, v in call.items() if k not in (*_META, "source", "version")
                  and not k.startswith("__")}
        variables = {**_evaluated(child.variables, scope.notes),
                     **{k: v for k, v in passed.items() if k in child.variables}}
        prefix = f"{address}{suffix}."
        _walk_module(child, Scope(prefix, variables, child.locals, scope.notes), walk, child_config,
                     [*chain, (name, real)], f"{path}module.{name}.")


def _environment_value(text: str) -> Any:
    """A ``TF_VAR_`` value: HCL when it parses as a literal (``8``, ``true``, ``["a"]``, ``{a = 1}``), else text."""
    if text.strip().startswith(("[", "{")) or _NUMBER.match(text.strip()) or text.strip() in ("true", "false"):
        known = _literal(text.strip(), Scope("", {}, {}, []))
        if known is not UNKNOWN:
            return known
    return text


def _root_module(path: str, allow_empty: bool) -> tuple[Module, Path]:
    """The module ``path`` names: a directory as Terraform loads it, or one configuration file alone."""
    root = Path(path)
    if root.is_dir():
        module = read_module(root)
        if not module.files and not allow_empty:
            raise InputError.single(path, "--terraform", "holds no file Terraform would load (no *.tf or *.tf.json; "
                                    "names starting with '.' or ending '~' are skipped, as Terraform skips them): "
                                    "there is nothing to check (Terraform: \"No configuration files\").",
                                    "pass the directory of a Terraform module (the one you run terraform plan in).")
        return module, root
    if root.is_file() and tfload.config_suffix(root.name):
        return read_module(root.parent, [root]), root.parent
    raise InputError.single(path, "--terraform", "is neither a .tf or .tf.json file nor a directory.",
                            "pass a Terraform module directory or one of its .tf files.")


def read_terraform(path: str, var_files: Sequence[str] = (), *,
                   allow_empty: bool = False) -> tuple[dict[str, Any], Locations, list[str]]:
    """``path`` (a ``.tf`` file or a module directory) as the JSON of the plan Terraform would make of it, where each
    resource block is written, and notes on what was not evaluated. A directory with nothing Terraform would load
    is invalid input, unless ``allow_empty`` (a cost diff's base before its first ``.tf``)."""
    module, directory = _root_module(path, allow_empty)
    variables = dict(module.variables)
    # Terraform's order: environment variables (TF_VAR_<name>), then terraform.tfvars, terraform.tfvars.json,
    # *.auto.tfvars(.json) in lexical order, each -var-file; an environment value is text, read as HCL where it
    # is a number, a bool, a list or a map
    for name in variables:
        given = os.environ.get(f"TF_VAR_{name}")
        if given is not None:
            variables[name] = _environment_value(given)
    for tfvars in tfload.tfvars_files(directory, var_files):
        variables.update({k: v for k, v in read_tfvars(tfvars).items() if k in variables})
    notes: list[str] = []
    scope = Scope("", {}, module.locals, notes)
    scope.variables = _evaluated(variables, notes)
    missing = sorted(k for k, v in scope.variables.items() if v is UNKNOWN)
    if missing:
        notes.append(f"variables with no value here (unknown): {', '.join(missing)}")
    walk = _Walk()
    root_config: dict[str, Any] = {}
    _walk_module(module, scope, walk, root_config, [("", directory.resolve())])
    walk.evaluate()
    others = sorted(walk.others)
    if others:
        notes.append(f"resources of other providers are not read: {', '.join(others[:8])}"
                     f"{' and more' if len(others) > 8 else ''}")
    doc = {"format_version": "1.2", "terraform_version": "(read from .tf by stackplan)",
           "resource_changes": walk.changes, "configuration": {"root_module": root_config},
           NOT_EVALUATED_KEY: walk.expansion.not_evaluated}
    return doc, walk.lines, sorted(set(notes))


@dataclass
class TerraformCode:
    """Terraform code read as its plan: the items the plan reader gives (each named by its address), where each is
    written, and the blocks not evaluated (listed by every format)."""

    items: list[Any]
    lines: Locations
    not_evaluated: list[tfexpand.Skipped]


def terraform_module_read(path: str, var_files: Sequence[str] = (), *, allow_empty: bool = False) -> TerraformCode:
    """``path``'s Terraform code as the plan reader reads it; what was not evaluated is also a note on stderr."""
    doc, lines, notes = read_terraform(path, var_files, allow_empty=allow_empty)
    for note in notes:
        print(f"note: {path}: {note}", file=sys.stderr)
    return TerraformCode(terraform_items(doc, path), lines, list(doc.get(NOT_EVALUATED_KEY, [])))


def terraform_module_items(path: str, var_files: Sequence[str] = (), *,
                           allow_empty: bool = False) -> tuple[list[Any], Locations]:
    """The items of ``path``'s Terraform code as the plan reader gives them, and where each is written."""
    code = terraform_module_read(path, var_files, allow_empty=allow_empty)
    return code.items, code.lines


def is_terraform_code(path: str) -> bool:
    """A ``.tf`` or ``.tf.json`` file, or a directory holding one Terraform would load (a module), rather than a
    plan's JSON or a directory of plans."""
    given = Path(path)
    return (given.is_file() and bool(tfload.config_suffix(given.name))) or (given.is_dir()
                                                                           and tfload.has_config(given))
