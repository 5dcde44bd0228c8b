"""Reading stacks: the stack YAML file (offline engine) or the Pulumi config (``pulumi up``).

This module is the only code that reads a stack's settings from stack YAML (where stack files are, and the line a
setting is on, are `dbx_ai_infra.dbxtypes.stack_files`). Both paths end in :func:`spec_from_config`, so a stack is
validated the same way whether ``python -m stackplan`` or the Pulumi CLI runs the program.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from dbx_ai_infra.dbxtypes.documents import parse_yaml, read_text
from dbx_ai_infra.dbxtypes.errors import InputError, Problem, problems_from_pydantic
from dbx_ai_infra.dbxtypes.stack_files import STACKS_DIR, display_path, stack_file_for
from dbx_ai_infra.dbxtypes.vocabulary import DEFAULT_RUNTIME, PROJECT

from .models import ExceptionSpec, StackSpec
from .resolve import ResolvedStack, resolve

#: Config namespaces other than the project's that a stack file may carry (provider and engine settings).
FOREIGN_NAMESPACES = ("databricks", "pulumi")
#: Top-level keys Pulumi allows in a stack file besides ``config``.
STACK_FILE_KEYS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")
MAX_STACK_FILE_BYTES = 1024 * 1024
#: The stack the offline engine already read and validated (with the policy config's limits), handed to the program
#: it runs in the same context, so that a plan validates its spec once. Under `pulumi up` it is unset: the program
#: reads the Pulumi config, with the default limits (the policy pack's config does not reach the program).
PROGRAM_STACK: ContextVar[ResolvedStack | None] = ContextVar("PROGRAM_STACK", default=None)


@dataclass(frozen=True)
class LoadedStack:
    """A stack read from its file: its name, file, Pulumi config map and validated, resolved spec, and the policy
    limits it was validated against (the offline engine hands the resolved stack to the program, see
    `PROGRAM_STACK`)."""

    name: str
    path: Path
    config: dict[str, str]
    resolved: ResolvedStack
    limits: Mapping[str, Any] = field(default_factory=dict)
    #: The policy config the stack is judged by: ``--policy-config`` with the stack's own ``policy`` section over
    #: it (read by the policy layer; opaque here).
    policy_config: Any = None

    @property
    def spec(self) -> StackSpec:
        return self.resolved.spec


#: Stack names the Pulumi CLI takes: letters, digits, hyphens, underscores and periods, at most 100 characters
#: (Pulumi docs, "Stacks": stack names; read 2026-12).
_STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def stack_name_of(path: Path) -> str:
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        name = name[len("Pulumi."):].rsplit(".", 1)[0]
    else:
        name = path.stem
    if not _STACK_NAME.match(name):
        raise InputError.single(display_path(path), "", f"the stack name {name[:40]!r} (from the file name) is one "
                                f"the Pulumi CLI refuses.", "name the file Pulumi.<name>.yaml with a name of "
                                "letters, digits, -, _ and . only, at most 100 characters.")
    return name


def read_stack_file(path: Path) -> dict[str, Any]:
    """The ``config`` map of a Pulumi stack file, with every file-level problem as an InputError."""
    source = display_path(path)
    text = read_text(path, "stack file", max_bytes=MAX_STACK_FILE_BYTES)
    if not text.strip():
        raise InputError.single(source, "", "the file is empty.",
                                "add a config: map with dbx-ai-infra:cloud, dbx-ai-infra:gpu_family, ...")
    doc = parse_yaml(text, source)
    if not isinstance(doc, dict):
        raise InputError.single(source, "", f"the file holds a {type(doc).__name__}, not a stack.",
                                    "write a mapping with a top-level config: key.")
    unknown = [k for k in doc if k not in STACK_FILE_KEYS]
    if unknown:
        raise InputError.single(source, str(unknown[0]), "is not a stack file key.",
                                    (f"stack files hold {', '.join(STACK_FILE_KEYS)}; project settings go under "
                                     f"config:."))
    config = doc.get("config")
    if not isinstance(config, dict):
        raise InputError.single(source, "config", "is missing or not a mapping.",
                                    "add config: with dbx-ai-infra:cloud, dbx-ai-infra:gpu_family, ...")
    return config


def _to_pulumi_value(value: Any) -> str:
    """Config values as the Pulumi CLI hands them to a program: strings, objects as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, default=_iso_date)


def _iso_date(value: Any) -> str:
    """An unquoted YAML date (``expires: 2027-01-31``) as the text the Pulumi CLI hands over (Go's YAML keeps it a
    string)."""
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a config value")


def _from_pulumi_value(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


_SECRET_FIX = ("store the value in a Databricks secret scope and write '{{secrets/<scope>/<key>}}' in its place "
               "(spark_env_vars take such references); keep Pulumi secrets for provider settings (databricks:token).")


def _secure_paths(value: Any, path: str = "") -> list[str]:
    """Where a stack file value holds an encrypted ``secure:`` value (which only the Pulumi CLI can decrypt)."""
    if isinstance(value, Mapping):
        if set(value) == {"secure"}:
            return [path]
        return [p for k, v in value.items() for p in _secure_paths(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _secure_paths(v, f"{path}[{i}]")]
    return []


def _project_sections(config: Mapping[str, Any], source: str, secret_keys: Iterable[str] = ()) -> dict[str, Any]:
    """The project's sections of a config map. A bare key is the project's (the CLI namespaces it so). A secret,
    whether an encrypted ``secure:`` value of the file or a key the CLI lists as secret, is refused: its plain value
    would land in a cluster's settings."""
    sections: dict[str, Any] = {}
    problems: list[Problem] = []
    secret = set(secret_keys)
    for key, value in config.items():
        key = str(key)
        namespace, sep, name = key.partition(":")
        if not sep:
            namespace, name, key = PROJECT, key, f"{PROJECT}:{key}"
        if namespace == PROJECT and (key in secret or _secure_paths(value)):
            for path in _secure_paths(value) or [""]:
                how = ("is an encrypted secure: value; the offline engine cannot decrypt it, and"
                       if _secure_paths(value) else "is a Pulumi secret;")
                problems.append(Problem(f"{key}{path}", f"{how} the stack takes no secrets, since its values reach "
                                        f"cluster settings in plain text.", _SECRET_FIX))
            continue
        if namespace == PROJECT:
            if name in sections:
                problems.append(Problem(key, f"is given twice (as {name} and {PROJECT}:{name}; the CLI namespaces "
                                        f"a bare key).", "keep one of them."))
                continue
            sections[name] = _from_pulumi_value(value)
        elif namespace not in FOREIGN_NAMESPACES:
            problems.append(Problem(key, f"is outside the project namespace {PROJECT!r}.",
                                    f"write it as {PROJECT}:{name} (or use a provider namespace: "
                                    f"{', '.join(FOREIGN_NAMESPACES)})."))
    if problems:
        raise InputError(source, problems)
    return sections


def spec_from_config(config: Mapping[str, Any], source: str, limits: Mapping[str, Any] | None = None,
                     secret_keys: Iterable[str] = (), stack: str | None = None) -> StackSpec:
    """Validate a Pulumi config map (file values or CLI strings) into a StackSpec.

    ``limits`` are the policy thresholds that bound the spec (``max_workers_cap``, ...), from a policy config;
    absent ones keep their defaults. ``secret_keys`` are the keys the CLI marks secret (refused). ``stack``, the
    stack's name, gives the defaults derived from it (the catalog's:
    `dbx_ai_infra.stackspec.models.default_catalog`)."""
    sections = _project_sections(config, source, secret_keys)
    try:
        return StackSpec.model_validate(sections, context={"limits": dict(limits or {}), "stack": stack})
    except ValidationError as exc:
        problems = problems_from_pydantic(exc, root=StackSpec, prefix=f"{PROJECT}:")
        for i, problem in enumerate(problems):
            if problem.field == f"{PROJECT}:runtime" and "pattern" in problem.message:
                problems[i] = Problem(problem.field, problem.message,
                                      f"use a GPU ML runtime such as {DEFAULT_RUNTIME}.")
        raise InputError(source, problems) from None


class _PolicyConfig(Protocol):
    """What the policy layer's reading of a stack's ``policy`` section offers here: the limits that bound the spec."""

    def limits(self) -> Mapping[str, Any]: ...


def _policy_section(config: Mapping[str, Any]) -> Any:
    """A config map's ``dbx-ai-infra:policy`` section as data (None when absent): the policy layer validates it."""
    return _from_pulumi_value(config.get(f"{PROJECT}:policy", config.get("policy")))


def load_stack(stack: str, stacks_dir: Path = STACKS_DIR, *, limits: Mapping[str, Any] | None = None,
               policy_of: Callable[[Any, str], _PolicyConfig] | None = None) -> LoadedStack:
    """Read, validate and resolve a stack given by name or file path (``limits``: see `spec_from_config`).
    ``policy_of(section, source)`` reads the stack's own ``policy`` section (the policy layer's reading, read before
    the rest: its limits bound the spec); the file is read once."""
    path = stack_file_for(stack, stacks_dir)
    source = display_path(path)
    raw_config = read_stack_file(path)
    policy_config = None
    if policy_of is not None:
        policy_config = policy_of(_policy_section(raw_config), source)
        limits = policy_config.limits()
    spec = spec_from_config(raw_config, source, limits, stack=stack_name_of(path))
    resolved = resolve(spec, source, limits=limits)
    config = {str(k): _to_pulumi_value(v) for k, v in raw_config.items()}
    return LoadedStack(stack_name_of(path), path, config, resolved, dict(limits or {}), policy_config)


def load_from_pulumi(limits_of: Callable[[Any], Mapping[str, Any]] | None = None) -> ResolvedStack:
    """The program's entry: the stack spec from the running Pulumi config (`pulumi up`), or the stack the offline
    engine validated for this run (`PROGRAM_STACK`). ``limits_of`` turns the stack's ``policy`` section into the
    limits that bound the spec (the policy layer's reading; the program passes it)."""
    handed = PROGRAM_STACK.get()
    if handed is not None:
        return handed
    import pulumi

    from dbx_ai_infra import pulumi_private

    config = pulumi_private.all_config()
    secret_keys = pulumi_private.secret_config_keys()
    source = f"stacks/Pulumi.{pulumi.get_stack()}.yaml"
    limits = limits_of(_policy_section(config)) if limits_of is not None else None
    return resolve(spec_from_config(config, source, limits, secret_keys, stack=pulumi.get_stack()), source,
                   limits=limits)


def load_exceptions_file(path: str) -> list[ExceptionSpec]:
    """``check --exceptions FILE``: accepted findings of an export or a Terraform plan, in the stack's ``exceptions``
    shape (YAML or JSON: a list, or ``{exceptions: [...]}``), each naming a resource as the report does (a Terraform
    address, a cluster name)."""
    from pydantic import TypeAdapter

    source = display_path(Path(path))
    doc = parse_yaml(read_text(Path(path), "exceptions file"), source)
    entries = doc.get("exceptions") if isinstance(doc, dict) else doc
    if not isinstance(entries, list):
        raise InputError.single(source, "exceptions" if isinstance(doc, dict) else "",
                                "is not a list of exceptions.", "write a list of {rule, resource, reason, expires}.")
    try:
        return TypeAdapter(list[ExceptionSpec]).validate_python(entries)
    except ValidationError as exc:
        raise InputError(source, problems_from_pydantic(exc, prefix="exceptions")) from None
