"""The policy config: each rule's enforcement level and thresholds, in Pulumi's ``--policy-pack-config`` shape,
read and validated once (`load_policy_config`), a stack's own ``policy`` section over a file
(`merged_policy_config`), and the ``advise`` section's settings."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from dbx_ai_infra.dbxtypes.advise_thresholds import ADVISE_ORDER, ADVISE_THRESHOLDS
from dbx_ai_infra.dbxtypes.documents import read_document
from dbx_ai_infra.dbxtypes.errors import InputError, Problem, clip, problems_from_pydantic
from dbx_ai_infra.dbxtypes.shape import as_number
from dbx_ai_infra.policies.rule import Rule
from dbx_ai_infra.policies.ruleset import ALL_RULES, RETIRED, RULES_BY_NAME

#: Default thresholds (each belongs to one rule, see ``Rule.thresholds``).
DEFAULT_CONFIG: Mapping[str, Any] = MappingProxyType({k: v for r in ALL_RULES for k, v in r.thresholds.items()})

ENFORCEMENT_LEVELS = ("advisory", "mandatory", "disabled")


# --------------------------------------------------------------------------------------------------------------------
# Policy config
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PolicyConfig:
    """Validated policy config: enforcement overrides and threshold overrides, keyed by policy name."""

    enforcement: Mapping[str, str] = field(default_factory=dict)
    thresholds: Mapping[str, Mapping[str, int | float]] = field(default_factory=dict)
    #: The ``advise`` section's overrides (`dbx_ai_infra.dbxtypes.advise_thresholds.ADVISE_THRESHOLDS` names).
    advise: Mapping[str, float | None] = field(default_factory=dict)
    #: Retired rules the config still names (`dbx_ai_infra.policies.ruleset.RETIRED`): read, without effect, each
    #: with a note.
    retired: tuple[str, ...] = ()

    def notes(self, where: str = "policy config") -> list[str]:
        """One note per retired rule this config names: its setting has no effect, and why."""
        return [f"{where}: {name} has no effect: {RETIRED[name]}; remove it." for name in self.retired]

    def as_document(self) -> dict[str, Any]:
        """This config in the policy config file's shape (what `load_policy_config` reads back)."""
        doc: dict[str, Any] = {name: {"enforcementLevel": level} for name, level in self.enforcement.items()}
        for name, values in self.thresholds.items():
            doc.setdefault(name, {}).update(values)
        if self.advise:
            doc["advise"] = dict(self.advise)
        return doc

    def level(self, rule: Rule) -> str:
        """The effective enforcement level of a rule: ``mandatory``, ``advisory`` or ``disabled``."""
        return self.enforcement.get(rule.name, rule.enforcement)

    def thresholds_for(self, rule: Rule) -> dict[str, int | float]:
        """The rule's thresholds: defaults overlaid by this config."""
        return {**rule.thresholds, **self.thresholds.get(rule.name, {})}

    def limits(self) -> dict[str, int | float]:
        """Every threshold by name, defaults overlaid by this config: the limits the stack spec validates against
        (``stackspec.spec_from_config(..., limits=...)``), so one policy config moves the spec and the rules. The
        spec refuses only what a mandatory policy would: an advisory or disabled policy's limits are infinite."""
        out: dict[str, int | float] = {}
        for rule in ALL_RULES:
            thresholds = self.thresholds_for(rule)
            out.update(thresholds if self.level(rule) == "mandatory" else dict.fromkeys(thresholds, math.inf))
        return out


Level = Literal["advisory", "mandatory", "disabled"]


def validate_threshold(rule: Rule, key: str, value: Any, where: str = "policy config") -> int | float:
    """A threshold value checked against the rule's schema (a number, an integer where the schema says so, and no
    smaller than its minimum), then against its typed field where the rule declares `Thresholds` (any further bound
    the field states); raises `InputError` naming the rule, the setting and the fix."""
    result = _threshold_in_form(rule, key, value, where)
    message = rule.settings_check({key: result}) if rule.settings_check is not None else None
    if rule.settings is not None:
        try:
            rule.settings.model_validate({key: result})
        except ValidationError as exc:
            message = exc.errors()[0]["msg"]
    if message:
        raise InputError.single(where, f"{rule.name}.{key}", f"{message[:1].lower()}{message[1:]}, got "
                                f"{clip(value)}.", "write a value the setting allows (see the policy index).")
    return result


def _threshold_in_form(rule: Rule, key: str, value: Any, where: str) -> int | float:
    """The checks of `validate_threshold` on the schema's form, each with its own wording."""
    if key not in rule.thresholds:
        known = ", ".join(sorted(rule.thresholds)) or "none"
        raise InputError.single(where, f"{rule.name}.{key}", "is not a setting of this policy.",
                                f"use one of: {known}.")
    schema = rule.threshold_schema.get(key, {})
    if schema.get("type") == "array":  # a list of names (production_stacks)
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise InputError.single(where, f"{rule.name}.{key}", f"must be a list of names, got {clip(value)}.",
                                    f"write e.g. {json.dumps(list(rule.thresholds[key]) or ['prod'])}.")
        return tuple(value)  # type: ignore[return-value]
    if schema.get("type") == "string":  # a date (require-supported-runtime's as_of)
        if not isinstance(value, str):
            raise InputError.single(where, f"{rule.name}.{key}", f"must be text, got {clip(value)}.",
                                    "write it in quotes.")
        if key == "as_of" and value:
            try:
                date.fromisoformat(value)
            except ValueError:
                raise InputError.single(where, f"{rule.name}.{key}", f"is not a date: {clip(value)}.",
                                        "write YYYY-MM-DD, or leave it empty for today.") from None
        return value  # type: ignore[return-value]
    integer = schema.get("type") == "integer"
    number = as_number(value) if not isinstance(value, str) else None
    if number is None or (integer and not float(number).is_integer()):
        raise InputError.single(where, f"{rule.name}.{key}", f"must be {'an integer' if integer else 'a number'}, "
                                f"got {clip(value)}.", "write a number.")
    if "minimum" in schema and number < schema["minimum"]:
        raise InputError.single(where, f"{rule.name}.{key}", f"must be at least {schema['minimum']}, got "
                                f"{clip(value)}.", "raise the value.")
    return int(number) if float(number).is_integer() else number


class _Settings(BaseModel):
    """A policy's settings: its level and its thresholds (checked by `validate_threshold`)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    enforcementLevel: Level | None = None  # noqa: N815 - Pulumi's key

    @model_validator(mode="before")
    @classmethod
    def _level_alone(cls, value: Any) -> Any:
        """A policy's value may be just its level: ``"disabled"`` means ``{"enforcementLevel": "disabled"}``."""
        return {"enforcementLevel": value} if isinstance(value, str) else value


@functools.cache
def _config_model(names: tuple[str, ...]) -> type[BaseModel]:
    """A pydantic model of the policy config: one optional field per policy of ``names`` (a level or its settings),
    and ``all``; one model per set of rules (the team's rules of a run add theirs)."""
    fields: dict[str, Any] = {"all": (_Settings | None, Field(None)),
                              "advise": (dict[str, Any] | None, Field(None))}
    for name in names:
        fields[name.replace("-", "_")] = (_Settings | None, Field(None, alias=name))
    return create_model("PolicyConfigFile", __config__=ConfigDict(extra="forbid", populate_by_name=False), **fields)


def merged_policy_config(base: str | Path | Mapping[str, Any] | PolicyConfig | None, section: Any, where: str
                         ) -> dict[str, Any]:
    """A stack's ``policy`` section (checked on its own first, so a problem names the stack file) over a
    ``--policy-config``: per policy, the section's level and thresholds win; ``advise`` settings merge; ``all``
    is the section's when it sets one."""
    load_policy_config(section, where)  # a problem names the stack file and its policy section
    raw: Any = read_document(base, "policy config") if isinstance(base, (str, Path)) else \
        base.as_document() if isinstance(base, PolicyConfig) else dict(base or {})
    if not isinstance(raw, Mapping):
        load_policy_config(base)  # raises the file's own error
        raw = {}

    def settings(value: Any) -> dict[str, Any]:
        return {"enforcementLevel": value} if isinstance(value, str) else dict(value or {})

    merged = {k: (settings(v) if k != "advise" else dict(v or {})) for k, v in raw.items()}
    for key, value in section.items():
        merged[key] = {**merged.get(key, {}), **settings(value)} if key not in ("all",) else settings(value)
    return merged


def load_policy_config(path_or_dict: str | Path | Mapping[str, Any] | PolicyConfig | None = None,
                       where: str = "policy config") -> PolicyConfig:
    """Read a policy config in Pulumi's shape, from a dict or a JSON (or YAML) file.

    ``{"<policy-name>": {"enforcementLevel": "advisory"|"mandatory"|"disabled", "<threshold>": N}}``; a policy's value
    may also be just the level (``{"<policy-name>": "disabled"}``), and the key ``all`` sets the level of every
    policy (named policies still win). A policy given without ``enforcementLevel`` keeps its own level. Validated by
    a pydantic model of the pack; an unknown policy name, setting or level raises `InputError` naming it.
    """
    if path_or_dict is None:
        return PolicyConfig()
    if isinstance(path_or_dict, PolicyConfig):
        return path_or_dict
    if isinstance(path_or_dict, (str, Path)):
        where = str(path_or_dict)
        data = read_document(path_or_dict, "policy config")
    else:
        data = path_or_dict
    retired = tuple(k for k in data if k in RETIRED) if isinstance(data, Mapping) else ()
    parsed = _parsed_config(data, where)
    enforcement = _level_of_all(parsed.all, where)  # type: ignore[attr-defined]
    thresholds: dict[str, dict[str, int | float]] = {}
    for rule in RULES_BY_NAME.values():
        value = getattr(parsed, rule.name.replace("-", "_"))
        if value is not None:
            _read_settings(rule, value, where, enforcement, thresholds)
    return PolicyConfig(enforcement=MappingProxyType(enforcement),
                        thresholds=MappingProxyType({k: MappingProxyType(v) for k, v in thresholds.items()}),
                        advise=MappingProxyType(_advise_settings(parsed.advise, where)),  # type: ignore[attr-defined]
                        retired=retired)


def _parsed_config(data: Any, where: str) -> BaseModel:
    """The config document (retired rules left out) validated by the pack's model; `InputError` naming what is
    wrong."""
    if isinstance(data, Mapping):
        data = {k: v for k, v in data.items() if k not in RETIRED}
    else:
        raise InputError.single(where, "", f"expected an object keyed by policy name, got {type(data).__name__}.",
                                f"write {{\"<policy-name>\": {{\"enforcementLevel\": \"advisory\"}}}}; policies: "
                                f"{', '.join(RULES_BY_NAME)}.")
    try:
        return _config_model(tuple(RULES_BY_NAME)).model_validate(data)
    except ValidationError as exc:
        problems = problems_from_pydantic(exc, fix="use a level (advisory, mandatory, disabled) or an object.")
        raise InputError(where, [_named_policy(problem) for problem in problems]) from None


def _named_policy(problem: Problem) -> Problem:
    """An unknown key of the config said as what it is: not a policy of this pack."""
    if problem.message.startswith("is not a known key"):
        return Problem(problem.field, "is not a policy of this pack.", f"use one of: {', '.join(RULES_BY_NAME)}.")
    return problem


def _level_of_all(everything: _Settings | None, where: str) -> dict[str, str]:
    """The level ``all`` gives every policy (named policies still win); ``all`` takes no threshold."""
    if everything is None:
        return {}
    if everything.model_extra:
        raise InputError.single(where, "all", f"accepts only enforcementLevel, got "
                                f"{sorted(everything.model_extra)}.",
                                "set thresholds per policy.")
    if everything.enforcementLevel is None:
        return {}
    return {r.name: everything.enforcementLevel for r in RULES_BY_NAME.values()}


def _read_settings(rule: Rule, value: _Settings, where: str, enforcement: dict[str, str],
                   thresholds: dict[str, dict[str, int | float]]) -> None:
    """One policy's settings: its level into ``enforcement``, each threshold (validated) into ``thresholds``."""
    if value.enforcementLevel is not None:
        enforcement[rule.name] = value.enforcementLevel
    for key, setting in (value.model_extra or {}).items():
        thresholds.setdefault(rule.name, {})[key] = validate_threshold(rule, key, setting, where)


def _advise_settings(raw: Mapping[str, Any] | None, where: str) -> dict[str, float | None]:
    """The ``advise`` section: each key one of `ADVISE_THRESHOLDS`, a number no smaller than its minimum (``null``
    only for the SLA, which has no default)."""
    out: dict[str, float | None] = {}
    for key, value in (raw or {}).items():
        spec = ADVISE_THRESHOLDS.get(key)
        if spec is None:
            raise InputError.single(where, f"advise.{key}", "is not a setting of stackplan advise.",
                                    f"use one of: {', '.join(ADVISE_THRESHOLDS)}.")
        if value is None and spec.default is None:
            out[key] = None
            continue
        number = as_number(value) if not isinstance(value, (str, bool)) else None
        if number is None or not math.isfinite(number) or (spec.integer and not float(number).is_integer()):
            raise InputError.single(where, f"advise.{key}", f"must be {'an integer' if spec.integer else 'a number'},"
                                    f" got {clip(value)}.", f"write a number ({spec.description})")
        if number < spec.minimum:
            raise InputError.single(where, f"advise.{key}", f"must be at least {spec.minimum:g}, got {clip(value)}.",
                                    "raise the value.")
        if spec.maximum is not None and number > spec.maximum:
            raise InputError.single(where, f"advise.{key}", f"must be at most {spec.maximum:g}, got {clip(value)}.",
                                    "lower the value.")
        out[key] = float(number)
    effective = {**{k: t.default for k, t in ADVISE_THRESHOLDS.items()}, **out}
    for low, high in ADVISE_ORDER:
        below, above = effective[low], effective[high]
        if below is not None and above is not None and below >= above:
            given = low if low in out else high
            raise InputError.single(where, f"advise.{given}", f"puts {low} ({below:g}) at or above {high} "
                                    f"({above:g}).", f"keep {low} below {high}.")
    return out
