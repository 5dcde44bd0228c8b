"""Terraform code as written (``check --terraform PATH``, ``cost --terraform PATH``): a ``.tf`` file or a module
directory read with python-hcl2, and made into the plan ``terraform plan`` would show of it, so that the one plan
reader (`dbx_ai_infra.sources.exports.terraform_items`) judges and prices it.

What is evaluated, as Terraform evaluates it: variables (their defaults, then ``TF_VAR_<name>`` in the
environment, then the tfvars files in Terraform's order, then each ``--var-file``), each converted to its declared
type (`dbx_ai_infra.sources.tfscope`); locals; every expression, template and function of HCL and Terraform
(`dbx_ai_infra.sources.tfexpr`, `dbx_ai_infra.sources.tfeval`, `dbx_ai_infra.sources.tffunctions`); ``dynamic`` blocks;
``count`` and ``for_each`` instances, addressed as Terraform addresses them (``module.serving["chat"]
.databricks_cluster.this[0]``); local module calls (``source = "./..."``) with their inputs. A resource's ``.id``
referenced by another (a cluster's ``instance_pool_id``, a permission's ``cluster_id``) is that resource's address,
as the plan reader gives an id known only after apply.

What is not, and stays unknown (``after_unknown``), carried through expressions as Terraform carries it, never
guessed and never an error: a data source's attributes (a ``databricks_spark_version``'s ``id``, read at apply), a
module's outputs, any other attribute of a resource, a variable with no value, an undeclared reference, a function
this reader does not evaluate. A resource whose ``count`` or ``for_each`` is unknown, a remote module and a module
directory that does not exist are skipped, each with a note. A file that is not HCL, and a variable's value that
its type refuses, are invalid input.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.sources import tf_providers, tfexpand, tfload
from dbx_ai_infra.sources.exports import terraform_items
from dbx_ai_infra.sources.tf_references import DATA_ADDRESS, SELECTED_BY
from dbx_ai_infra.sources.tfload import Module
from dbx_ai_infra.sources.tfscope import Scope, VariableError, declared_type, environment_value, typed_variable, value
from dbx_ai_infra.sources.tfvalues import Unknown, wholly_known

#: A variable declared with no default (its value, until a tfvars file or TF_VAR_ sets one).
NO_VALUE: Any = type("NoValue", (), {"__repr__": lambda self: "<no value>"})()
#: Where a resource block is written: ``(file, line)`` by its configuration address.
Locations = dict[str, tuple[str, int]]

#: The key of the plan document read from code that lists the blocks not evaluated (`tfexpand.Skipped`): no
#: Terraform plan has it, and the plan reader reads nothing of it.
NOT_EVALUATED_KEY = "stackplan_not_evaluated"


def read_module(directory: Path, files: Sequence[Path] | None = None) -> Module:
    """The blocks of a module as Terraform loads them (`dbx_ai_infra.sources.tfload`), its variables' defaults
    (`NO_VALUE`: none)."""
    module = tfload.read_module(directory, files)
    module.variables = {name: body.get("default", NO_VALUE) for name, body in module.declared.items()}
    return module


def read_tfvars(path: Path) -> dict[str, Any]:
    """A ``.tfvars`` (HCL) or ``.tfvars.json`` file's values."""
    return tfload.read_values(path)


# --------------------------------------------------------------------------------------------------------------------
# A module tree as a plan
# --------------------------------------------------------------------------------------------------------------------

def _skipped(scope: Scope, walk: _Walk, what: str, meta: str, at: tuple[str, str, int]) -> list[tuple[str, Scope]]:
    """No instances: the block's ``meta`` (count, for_each) is known only at apply; noted, and the block skipped."""
    _, file, line = at
    scope.notes.append(f"{what}: {meta} is not known here, so it is skipped")
    walk.skip(what, f"its {meta} is not known here (known only at apply)", file, line)
    return []


def _instances(body: Mapping[str, Any], scope: Scope, what: str, walk: _Walk,
               at: tuple[str, str, int]) -> list[tuple[str, Scope]]:
    """The instances of a block with ``count`` or ``for_each`` (address suffix and scope each), counted against the
    limits (`dbx_ai_infra.sources.tfexpand`); none, and the block listed as not evaluated, when they are not known.
    ``at``: the block's configured address (no keys), its file and its line."""
    configured, file, line = at
    where = f"{file}:{line}" if line else file
    if "count" in body and "for_each" in body:
        raise InputError.single(where, what, "sets both count and for_each: Terraform refuses it (\"Invalid "
                                "combination of count and for_each\").", "keep one of them.")
    if "count" in body:
        count = tfexpand.count_of(value(body["count"], scope), what, where)
        if count is None:
            return _skipped(scope, walk, what, "count", at)
        walk.expansion.add(configured, what, count, where)
        return [(f"[{i}]", scope.instance(count=i)) for i in range(count)]
    if "for_each" in body:
        each = tfexpand.for_each_of(value(body["for_each"], scope), what, where)
        if each is None:
            return _skipped(scope, walk, what, "for_each", at)
        walk.expansion.add(configured, what, len(each), where)
        return [(f'["{k}"]', scope.instance(each=(k, v))) for k, v in each.items()]
    walk.expansion.add(configured, what, 1, where)
    return [("", scope)]


def _after(evaluated: Any) -> tuple[Any, Any]:
    """A plan's ``after`` and ``after_unknown`` of an evaluated value."""
    if isinstance(evaluated, Unknown):
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
            expressions[key] = {"references": ["(computed)"]} if not wholly_known(known) else {"constant_value": known}
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
    clouds: dict[str, tuple[str, str]] = field(default_factory=dict)  # address -> its provider block's cloud hint

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


#: A variable's value as given: the value, where it comes from (for a message), and whether it is still written
#: as python-hcl2 gives it (a default, an HCL tfvars value: evaluated) or already a value (TF_VAR_, JSON, a module
#: call's argument).
Given = tuple[Any, str, bool]


def _variables(module: Module, given: Mapping[str, Given], notes: list[str]) -> dict[str, Any]:
    """The module's variables, each given value converted to its declared type (``optional()`` defaults applied)
    as Terraform sets it; a variable with no value is unknown (of its type). A value its type refuses is invalid
    input, as Terraform refuses it (exit 2, naming the variable and where its value comes from)."""
    empty = Scope("", {}, {}, notes, directory=module.directory, root=module.directory)
    out: dict[str, Any] = {}
    for name in module.variables:
        raw, source, written = given.get(name, (module.variables[name], f"variable {name!r}'s default", True))
        try:
            type_ = declared_type(module.declared.get(name, {}).get("type"), empty)
            if raw is NO_VALUE:
                out[name] = Unknown(type_, f"var.{name} has no value here")
                continue
            out[name] = typed_variable(value(raw, empty) if written else raw, type_)
        except VariableError as exc:
            raise InputError.single(str(module.directory), f"variable {name}",
                                    f"the value from {source} is not valid for it: {exc}.",
                                    f"give var.{name} a value of its declared type.") from None
    return out


def _blocks_of(module: Module) -> dict[str, dict[str, Any]]:
    """The module's resource blocks by ``type.name`` (what a whole resource named as a value reads)."""
    return {f"{rtype}.{name}": body for rtype, name, body in module.resources}


#: The chain of module calls that leads to a module: (call name, real directory), the root first.
Chain = list[tuple[str, Path]]


def _walk_module(module: Module, scope: Scope, walk: _Walk, config: dict[str, Any], chain: Chain,
                 path: str = "", providers: Mapping[str, tf_providers.Hint] | None = None) -> None:
    """Expand a module instance: its resources' instances (evaluated later) and its module calls, recursively.
    ``path``: the module's address without instance keys (``module.a.module.b.``); ``providers``: the provider
    configurations it inherits (`tf_providers`), each resource's cloud hint recorded."""
    _configure(module, scope, config)
    configurations = tf_providers.module_configurations(module.providers, providers or {}, scope)
    for rtype, name, body in module.resources:
        if not rtype.startswith("databricks_"):  # another provider's: not read (one note names the types)
            walk.others.add(rtype)
            continue
        configured = f"{scope.prefix}{rtype}.{name}"
        file, line = module.lines.get(f"{rtype}.{name}", (str(module.directory), 0))
        for suffix, inner in _instances(body, scope, configured, walk, (f"{path}{rtype}.{name}", file, line)):
            address = f"{configured}{suffix}"
            walk.pending.append((rtype, name, body, address, inner))
            hint = tf_providers.resource_hint(body, configurations)
            if hint is not None:
                walk.clouds[address] = hint
            if f"{rtype}.{name}" in module.lines:
                walk.lines[address] = module.lines[f"{rtype}.{name}"]
    for name, call in module.calls:
        _walk_call(module, scope, walk, config, chain, path, name, call, configurations)


def _walk_call(module: Module, scope: Scope, walk: _Walk, config: dict[str, Any], chain: Chain, path: str,
               name: str, call: dict[str, Any], configurations: Mapping[str, tf_providers.Hint]) -> None:
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
        where = f"the call module.{name} in {module.directory}"
        passed: dict[str, Given] = {k: (value(v, inner), where, False) for k, v in call.items()
                                    if k in child.variables}
        prefix = f"{address}{suffix}."
        child_scope = Scope(prefix, _variables(child, passed, scope.notes), child.locals, scope.notes,
                            directory=directory, root=scope.root, resources=_blocks_of(child))
        _walk_module(child, child_scope, walk, child_config, [*chain, (name, real)], f"{path}module.{name}.",
                     tf_providers.passed_configurations(call, configurations))


def _environment(name: str, text: str, module: Module) -> Any:
    """``TF_VAR_<name>``'s value, read as Terraform reads it for the variable's declared type."""
    try:
        type_ = declared_type(module.declared.get(name, {}).get("type"), Scope("", {}, {}, []))
        return environment_value(text, type_)
    except VariableError as exc:
        raise InputError.single(f"TF_VAR_{name}", f"variable {name}", f"is not valid for it: {exc}.",
                                f"set TF_VAR_{name} to a value of the variable's declared type.") from None


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
    given: dict[str, Given] = {}
    # Terraform's order: environment variables (TF_VAR_<name>), then terraform.tfvars, terraform.tfvars.json,
    # *.auto.tfvars(.json) in lexical order, each -var-file; an environment value is text for a variable of a
    # primitive type (or none), HCL for a collection or object type; a JSON file's values are values, not templates
    for name in module.variables:
        text = os.environ.get(f"TF_VAR_{name}")
        if text is not None:
            given[name] = (_environment(name, text, module), f"TF_VAR_{name}", False)
    for tfvars in tfload.tfvars_files(directory, var_files):
        written = not tfvars.name.endswith(".json")
        given.update({k: (v, str(tfvars), written) for k, v in read_tfvars(tfvars).items()
                      if k in module.variables})
    notes: list[str] = []
    scope = Scope("", _variables(module, given, notes), module.locals, notes, directory=directory, root=directory,
                  resources=_blocks_of(module))
    missing = sorted(k for k, v in scope.variables.items() if isinstance(v, Unknown))
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
           NOT_EVALUATED_KEY: walk.expansion.not_evaluated, tf_providers.PROVIDER_CLOUDS_KEY: walk.clouds}
    return doc, walk.lines, sorted(set(notes))


@dataclass
class TerraformCode:
    """Terraform code read as its plan: the items the plan reader gives (each named by its address), where each is
    written, and the blocks not evaluated (listed by every format)."""

    items: list[Any]
    lines: Locations
    not_evaluated: list[tfexpand.Skipped]
    #: Each resource address's cloud as its provider block tells it (`tf_providers`): (cloud, what tells it).
    clouds: dict[str, tuple[str, str]] = field(default_factory=dict)


def terraform_module_read(path: str, var_files: Sequence[str] = (), *, allow_empty: bool = False) -> TerraformCode:
    """``path``'s Terraform code as the plan reader reads it; what was not evaluated is also a note on stderr."""
    doc, lines, notes = read_terraform(path, var_files, allow_empty=allow_empty)
    for note in notes:
        print(f"note: {path}: {note}", file=sys.stderr)
    return TerraformCode(terraform_items(doc, path), lines, list(doc.get(NOT_EVALUATED_KEY, [])),
                         dict(doc.get(tf_providers.PROVIDER_CLOUDS_KEY, {})))


def is_terraform_code(path: str) -> bool:
    """A ``.tf`` or ``.tf.json`` file, or a directory holding one Terraform would load (a module), rather than a
    plan's JSON or a directory of plans."""
    given = Path(path)
    return (given.is_file() and bool(tfload.config_suffix(given.name))) or (given.is_dir()
                                                                           and tfload.has_config(given))
