"""The one input error type, and the one formatter of pydantic validation errors.

Every invalid input (a stack file, a price override file, a policy config, a plan or cluster JSON, the packaged
data files) raises `InputError`: the source (a file, or what the value is), and one `Problem` per thing wrong,
each with its field path and its fix. ``str()`` is the whole user-facing message; the CLI prints it and exits 2.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

#: Quoted input is cut to this many characters in messages.
MAX_QUOTED = 80


def cut(text: str, limit: int = MAX_QUOTED) -> str:
    """``text`` cut to ``limit`` characters (ending ``...`` when cut), so a message never echoes a whole document."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clip(value: Any, limit: int = MAX_QUOTED) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    return cut(repr(value), limit)


def field_path(loc: Sequence[Any]) -> str:
    """A pydantic location as a field path: ``node_types[3].gpu_count``, ``tags.cost_center``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).isascii() and str(part).isidentifier():
            out += ("." if out else "") + str(part)
        else:  # escaped: a key with a look-alike letter (Cyrillic a for a) shows as what it is
            out += f"[{ascii(str(part))}]"
    return out


def did_you_mean(word: str, options: Sequence[str]) -> str:
    """`` (did you mean 'spot_factor'?)`` when an option is close to ``word``, else ``""``."""
    by_lower = {o.lower(): o for o in options}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.7)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where (field path), what, and how to fix it."""

    field: str
    message: str
    fix: str = ""

    def render(self) -> str:
        text = f"{self.field}: {self.message}" if self.field else self.message
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


class InputError(ValueError):
    """Invalid input. ``source`` names the file (or the kind of value); ``problems`` say what and how to fix it."""

    def __init__(self, source: str, problems: Sequence[Problem] | str) -> None:
        self.source = source
        self.problems: list[Problem] = [Problem("", problems)] if isinstance(problems, str) else list(problems)
        super().__init__(str(self))

    @classmethod
    def single(cls, source: str, field: str, message: str, fix: str = "") -> InputError:
        return cls(source, [Problem(field, message, fix)])

    def __str__(self) -> str:
        prefix = f"{self.source}: " if self.source else ""
        if len(self.problems) == 1:
            return prefix + self.problems[0].render()
        lines = [f"{prefix}{len(self.problems)} problems"]
        lines += [f"  - {p.render()}" for p in self.problems]
        return "\n".join(lines)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.source, self.problems))


_FIXES = {
    "missing": "add it.",
    "literal_error": "use one of the values listed.",
    "enum": "use one of the values listed.",
    "string_pattern_mismatch": "see the pattern above.",
    "int_parsing": "write a whole number.",
    "int_type": "write a whole number.",
    "int_from_float": "write a whole number.",
    "float_parsing": "write a number.",
    "float_type": "write a number.",
    "finite_number": "write a finite number.",
    "bool_parsing": "write true or false.",
    "bool_type": "write true or false.",
    "dict_type": "write a mapping (key: value).",
    "list_type": "write a list.",
    "model_type": "write a mapping (key: value).",
    "model_attributes_type": "write a mapping (key: value).",
    "string_type": "write a string.",
    "date_from_datetime_parsing": "write a real date, YYYY-MM-DD.",
    "date_parsing": "write a real date, YYYY-MM-DD.",
    "date_type": "write a real date, YYYY-MM-DD.",
    "greater_than_equal": "raise the value.",
    "greater_than": "raise the value.",
    "less_than_equal": "lower the value.",
    "less_than": "lower the value.",
    "too_short": "add at least one item.",
}


class ProgramError(Exception):
    """The Pulumi program failed for a reason other than invalid stack input (raised by the offline engine; here so
    that the CLI can catch it without importing the engine, which imports Pulumi)."""


def _unwrap(annotation: Any) -> Any:
    for arg in getattr(annotation, "__args__", ()) or ():
        inner = _unwrap(arg)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return inner
    return annotation


def _members(annotation: Any) -> list[type[BaseModel]]:
    """Every model an annotation names (a union's members, a dict's or a list's value model), in order."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in getattr(annotation, "__args__", ()) or () for m in _members(arg)]


def _tag(model: type[BaseModel]) -> str | None:
    """The value a discriminated union tags ``model`` by: its one field typed as a single literal (``role``)."""
    for field in model.model_fields.values():
        args = typing.get_args(field.annotation)
        if typing.get_origin(field.annotation) is typing.Literal and len(args) == 1:
            return str(args[0])
    return None


def _extra_model(model: type[BaseModel]) -> type[BaseModel] | None:
    """The model of a model's extra entries (``__pydantic_extra__: dict[str, Model]``), when it declares one."""
    hints = typing.get_type_hints(model) if model.model_config.get("extra") == "allow" else {}
    args = typing.get_args(hints.get("__pydantic_extra__"))
    value = args[1] if len(args) == 2 else None
    return value if isinstance(value, type) and issubclass(value, BaseModel) else None


def model_at(root: type[BaseModel] | None, loc: Sequence[Any]) -> type[BaseModel] | None:
    """The pydantic model that owns the field at ``loc`` under ``root`` (to list the keys allowed there); through a
    discriminated union, the member its tag in ``loc`` names (``workloads.x.dev.num_workers``: the dev workload)."""
    model: Any = root
    candidates: list[type[BaseModel]] = []
    for part in loc[:-1]:
        tagged = [m for m in candidates if _tag(m) == str(part)]
        if tagged:
            model, candidates = tagged[0], []
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        found = model.model_fields.get(str(part))
        if found is None:
            extra = _extra_model(model) if isinstance(part, str) else None
            if extra is not None:  # a key of the model's own extra entries (usage.<workload>): their model
                model = extra
            continue  # a dict key or a list index: the value type is the same model
        members = _members(found.annotation)
        model = members[0] if members else found.annotation
        candidates = members if len(members) > 1 else []
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


#: What a validator's message puts before the fix it knows (`problem_from_pydantic` shows it as the fix).
FIX_MARK = " Fix: "


def _extra_key(err: Mapping[str, Any], root: type[BaseModel] | None, message: str, hint: str) -> tuple[str, str]:
    """A key the model does not know: the allowed keys here and the closest of them, or whose key it is when it
    belongs to another place (a serving figure under a workload)."""
    loc = tuple(err.get("loc") or ())
    model = model_at(root, loc)
    allowed = ", ".join(_own_fields_first(model)) if model else ""
    message = "is not a known key" + ("" if str(loc[-1]).isascii() else " (it holds characters that are not "
                                                                       "ASCII: a look-alike letter?)")
    guess = did_you_mean(str(loc[-1]), list(model.model_fields)) if model and loc else ""
    hint = f"remove it or correct its spelling{guess}; allowed keys here: {allowed}." if allowed else "remove it."
    elsewhere = getattr(model, "belongs_elsewhere", None) if model and loc else None
    where = elsewhere(str(loc[-1])) if callable(elsewhere) else None
    return (f"is not a key of this place: {where[0]}", where[1]) if where else (message, hint)


def _no_tag(err: Mapping[str, Any], root: type[BaseModel] | None, message: str, hint: str) -> tuple[str, str]:
    """A workloads entry with no role."""
    tag = str((err.get("ctx") or {}).get("discriminator", "")).strip("'")
    return f"has no {tag}", f"add {tag}: training, inference or dev (which role's keys the entry holds)."


def _bad_tag(err: Mapping[str, Any], root: type[BaseModel] | None, message: str, hint: str) -> tuple[str, str]:
    """A role that is none of the roles."""
    ctx = err.get("ctx") or {}
    tag = str(ctx.get("discriminator", "")).strip("'")
    return (f"{tag} {ctx.get('tag', err.get('input'))!r} is not one of {ctx.get('expected_tags', '')}",
            f"set {tag} to one of {ctx.get('expected_tags', '')}.")


#: The error types whose message and fix are said in the project's words: (err, root, message, hint) -> both.
_KIND_WORDS: dict[str, Callable[[Mapping[str, Any], type[BaseModel] | None, str, str], tuple[str, str]]] = {
    "extra_forbidden": _extra_key, "union_tag_not_found": _no_tag, "union_tag_invalid": _bad_tag}


def _mapping_key(err: Mapping[str, Any], message: str, kind: str) -> tuple[str, str]:
    """A mapping key outside a Literal (an unknown cloud, say), or not of a pattern (an endpoint's name)."""
    loc = tuple(err.get("loc") or ())
    expected = str((err.get("ctx") or {}).get("expected", ""))
    options = [o.strip(" '") for o in expected.replace(" or ", ",").split(",") if o.strip(" '")]
    if expected:
        return f"unknown key {ascii(str(loc[-2]))}", f"use {expected}{did_you_mean(str(loc[-2]), options)}."
    # a key of a pattern: the message says what it must be
    return f"key {ascii(str(loc[-2]))}: {message[:1].lower()}{message[1:]}", _FIXES.get(kind, "") or "rename the key."


def _message_and_own_fix(err: Mapping[str, Any], kind: str) -> tuple[str, str]:
    """The error's message without pydantic's ``Value error,`` and with the value given (cut short), and the fix a
    validator wrote after `FIX_MARK` ("<what is wrong> Fix: <fix>"), if any."""
    message = str(err.get("msg", "is invalid")).removeprefix("Value error, ")
    own_fix = ""
    if kind == "value_error" and FIX_MARK in message:
        message, own_fix = message.split(FIX_MARK, 1)
        message = message.rstrip(". ")
    value = err.get("input")
    if kind != "missing" and isinstance(value, (str, int, float, bool)) and "got " not in message:
        message += f", got {clip(value)}"
    return message, own_fix


def problem_from_pydantic(err: Mapping[str, Any], *, root: type[BaseModel] | None = None, prefix: str = "",
                          fix: str = "") -> Problem:
    """One pydantic error as a `Problem`: ``prefix`` + the dotted field path, the message with the value given
    (cut short), and a fix (``fix`` when the error type has none of its own)."""
    loc = tuple(err.get("loc") or ())
    dotted = field_path(loc)
    path = f"{prefix}{dotted}" if dotted else prefix.rstrip(":.")
    kind = str(err.get("type", ""))
    message, own_fix = _message_and_own_fix(err, kind)
    hint = _FIXES.get(kind, "")
    if kind in _KIND_WORDS:
        message, hint = _KIND_WORDS[kind](err, root, message, hint)
    if loc and loc[-1] == "[key]":
        path = f"{prefix}{field_path(loc[:-2])}"
        message, hint = _mapping_key(err, message, kind)
    if kind == "value_error" and not hint:
        hint = own_fix or fix or "change the values so the rule above holds."
    return Problem(path, message.rstrip(".") + ".", hint or fix)


def _own_fields_first(model: type[BaseModel]) -> list[str]:
    """A model's keys as a reader of its section expects them: those it declares first, then those a base class
    gives every section of its kind (a workload's gpu_family, node_type_id, ...)."""
    own = [name for name in vars(model).get("__annotations__", {}) if name in model.model_fields]
    return own + [name for name in model.model_fields if name not in own]


def problems_from_pydantic(exc: ValidationError, *, root: type[BaseModel] | None = None, prefix: str = "",
                           fix: str = "") -> list[Problem]:
    """Every error of a pydantic ``ValidationError`` as `Problem` s (see `problem_from_pydantic`)."""
    return [problem_from_pydantic(e, root=root, prefix=prefix, fix=fix) for e in exc.errors()]


def number_problem(exc: ValueError) -> tuple[str, str] | None:
    """A number Python will not read: (problem, fix), instead of its own limit text."""
    if "digits" in str(exc) and "limit" in str(exc):
        return ("holds a number of more than 4,300 digits", "write the number as it is meant (every number Databricks "
                "takes fits in 64 bits).")
    if "too large" in str(exc):
        return (str(exc), "write the number as it is meant.")
    return None
