"""Reading stacks: the stack YAML file (offline engine) or the Pulumi config (``pulumi up``).

This module is the only code that reads stack YAML. Both paths end in :func:`spec_from_config`, so a stack
is validated the same way whether ``python -m stackplan`` or the Pulumi CLI runs the program.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .errors import Problem, StackSpecError
from .models import StackSpec
from .resolve import ResolvedStack, resolve

PROJECT = "dbx-ai-infra"
REPO_ROOT = Path(__file__).resolve().parent.parent
STACKS_DIR = REPO_ROOT / "stacks"
#: Config namespaces other than the project's that a stack file may carry (provider and engine settings).
FOREIGN_NAMESPACES = ("databricks", "pulumi")
#: Top-level keys Pulumi allows in a stack file besides ``config``.
STACK_FILE_KEYS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")
MAX_STACK_FILE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class LoadedStack:
    """A stack read from its file: its name, file, Pulumi config map and validated, resolved spec."""

    name: str
    path: Path
    config: dict[str, str]
    resolved: ResolvedStack

    @property
    def spec(self) -> StackSpec:
        return self.resolved.spec


def display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def available_stacks(stacks_dir: Path = STACKS_DIR) -> list[str]:
    return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in stacks_dir.glob("Pulumi.*.yaml"))


def stack_file_for(stack: str, stacks_dir: Path = STACKS_DIR) -> Path:
    """A stack name (``dev``) means ``stacks/Pulumi.dev.yaml``; anything path-like is a file."""
    looks_like_path = "/" in stack or stack.endswith((".yaml", ".yml")) or Path(stack).exists()
    path = Path(stack) if looks_like_path else stacks_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        names = ", ".join(available_stacks(stacks_dir)) or "none"
        what = "stack file" if looks_like_path else f"stack {stack!r}"
        raise StackSpecError.single(
            display_path(path), "", f"{what} not found.",
            f"pass a stack name ({names}) or the path of a stack YAML file.")
    return path


def stack_name_of(path: Path) -> str:
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        return name[len("Pulumi."):].rsplit(".", 1)[0]
    return path.stem


def read_stack_file(path: Path) -> dict[str, Any]:
    """The ``config`` map of a Pulumi stack file, with every file-level problem as a StackSpecError."""
    source = display_path(path)
    size = path.stat().st_size
    if size > MAX_STACK_FILE_BYTES:
        raise StackSpecError.single(source, "", f"the file is {size:,} bytes; a stack file is at most "
                                    f"{MAX_STACK_FILE_BYTES:,}.", "check that this is the stack file you meant.")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StackSpecError.single(source, "", f"the file is not UTF-8 text (byte {exc.start}).",
                                    "save it as UTF-8.") from None
    if not text.strip():
        raise StackSpecError.single(source, "", "the file is empty.",
                                    "add a config: map with dbx-ai-infra:cloud, dbx-ai-infra:gpu_family, ...")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise StackSpecError.single(source, "", f"YAML syntax error{where}: {problem}.",
                                    "correct the YAML there (indentation, a missing ':' or quote).") from None
    if not isinstance(doc, dict):
        raise StackSpecError.single(source, "", f"the file holds a {type(doc).__name__}, not a stack.",
                                    "write a mapping with a top-level config: key.")
    unknown = [k for k in doc if k not in STACK_FILE_KEYS]
    if unknown:
        raise StackSpecError.single(source, str(unknown[0]), "is not a stack file key.",
                                    f"stack files hold {', '.join(STACK_FILE_KEYS)}; project settings go under config:.")
    config = doc.get("config")
    if not isinstance(config, dict):
        raise StackSpecError.single(source, "config", "is missing or not a mapping.",
                                    "add config: with dbx-ai-infra:cloud, dbx-ai-infra:gpu_family, ...")
    return config


def _to_pulumi_value(value: Any) -> str:
    """Config values as the Pulumi CLI hands them to a program: strings, objects as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _from_pulumi_value(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _project_sections(config: Mapping[str, Any], source: str) -> dict[str, Any]:
    sections: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, value in config.items():
        key = str(key)
        namespace, sep, name = key.partition(":")
        if not sep:
            problems.append(Problem(key, "is not namespaced.", f"write it as {PROJECT}:{key}."))
        elif namespace == PROJECT:
            sections[name] = _from_pulumi_value(value)
        elif namespace not in FOREIGN_NAMESPACES:
            problems.append(Problem(key, f"is outside the project namespace {PROJECT!r}.",
                                    f"write it as {PROJECT}:{name} (or use a provider namespace: "
                                    f"{', '.join(FOREIGN_NAMESPACES)})."))
    if problems:
        raise StackSpecError(source, problems)
    return sections


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The pydantic model that owns the field at ``loc`` (to list allowed keys)."""
    model: Any = StackSpec
    for part in loc[:-1]:
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        field = model.model_fields.get(str(part))
        if field is None:
            # a dict key or list index: step into the value type
            continue
        model = _unwrap(field.annotation)
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model
    return None


def _unwrap(annotation: Any) -> Any:
    for arg in getattr(annotation, "__args__", ()) or ():
        inner = _unwrap(arg)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return inner
    return annotation


_FIXES = {
    "missing": "add it.",
    "literal_error": "use one of the values listed.",
    "string_pattern_mismatch": "see the pattern above.",
    "int_parsing": "write a whole number.",
    "int_type": "write a whole number.",
    "int_from_float": "write a whole number.",
    "float_parsing": "write a number.",
    "bool_parsing": "write true or false.",
    "dict_type": "write a mapping (key: value).",
    "list_type": "write a list.",
    "model_type": "write a mapping (key: value).",
    "string_type": "write a string.",
    "greater_than_equal": "raise the value.",
    "greater_than": "raise the value.",
    "less_than_equal": "lower the value.",
    "less_than": "lower the value.",
}


def _problem_from_pydantic(err: Mapping[str, Any]) -> Problem:
    loc = tuple(err["loc"])
    path = f"{PROJECT}:{'.'.join(str(p) for p in loc)}" if loc else f"{PROJECT}"
    kind = err["type"]
    message = str(err["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    if "input" in err and kind not in ("missing",) and isinstance(err["input"], (str, int, float, bool)):
        message += f", got {err['input']!r}"
    fix = _FIXES.get(kind, "")
    if kind == "extra_forbidden":
        model = _model_at(loc)
        allowed = ", ".join(model.model_fields) if model else ""
        message = "is not a known key"
        fix = f"remove it or correct its spelling; allowed keys here: {allowed}." if allowed else "remove it."
    if kind == "string_pattern_mismatch" and loc and loc[-1] == "runtime":
        fix = "use a GPU ML runtime such as 15.4.x-gpu-ml-scala2.12."
    if kind == "value_error" and not fix:
        fix = "change the values so the rule above holds."
    return Problem(path, message.rstrip(".") + ".", fix)


def spec_from_config(config: Mapping[str, Any], source: str) -> StackSpec:
    """Validate a Pulumi config map (file values or CLI strings) into a StackSpec."""
    sections = _project_sections(config, source)
    try:
        return StackSpec.model_validate(sections)
    except ValidationError as exc:
        raise StackSpecError(source, [_problem_from_pydantic(e) for e in exc.errors()]) from None


def load_stack(stack: str, stacks_dir: Path = STACKS_DIR) -> LoadedStack:
    """Read, validate and resolve a stack given by name or file path."""
    path = stack_file_for(stack, stacks_dir)
    source = display_path(path)
    raw_config = read_stack_file(path)
    spec = spec_from_config(raw_config, source)
    resolved = resolve(spec, source)
    config = {str(k): _to_pulumi_value(v) for k, v in raw_config.items()}
    return LoadedStack(stack_name_of(path), path, config, resolved)


def load_from_pulumi() -> ResolvedStack:
    """The program's entry: the stack spec from the running Pulumi config (CLI or mocks)."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    config = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    source = f"stacks/Pulumi.{pulumi.get_stack()}.yaml"
    return resolve(spec_from_config(config, source), source)
