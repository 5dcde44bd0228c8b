"""Price data: the packaged rates (``rates.yaml``), the node catalog's prices, and user overrides.

:func:`load_prices` builds a :class:`PriceBook` from

1. ``pricing/rates.yaml``: $/DBU per cloud, tier and compute kind, and the spot/on-demand VM price factor per cloud;
2. the GPU node catalog (``gpucatalog/node_types.yaml``): VM $/h on demand and DBU/h per node type. Those figures
   are not copied into ``rates.yaml``: the catalog is their one source of truth;
3. any number of :class:`PriceOverrides` (a ``--prices`` file, a stack's ``dbx-ai-infra:pricing`` config), applied
   in order, so a later override wins.

Every figure in the book carries where it came from (``PriceBook.sources``: ``figure``, ``value``, ``source``,
``date``, ``estimate``), so a report can cite what it used.
"""

from __future__ import annotations

import copy
import datetime as _dt
import difflib
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from .errors import PricingDataError, PricingInputError

__all__ = [
    "CLOUDS",
    "COMPUTE_KINDS",
    "TIERS",
    "NodePrice",
    "NodePriceOverride",
    "PriceBook",
    "PriceOverrides",
    "RATES_PATH",
    "load_overrides_file",
    "load_prices",
]

CLOUDS: tuple[str, ...] = ("aws", "azure", "gcp")
TIERS: tuple[str, ...] = ("premium", "enterprise")
COMPUTE_KINDS: tuple[str, ...] = ("jobs_compute", "all_purpose", "model_serving")

RATES_PATH = Path(__file__).with_name("rates.yaml")

Cloud = Literal["aws", "azure", "gcp"]
Tier = Literal["premium", "enterprise"]
ComputeKind = Literal["jobs_compute", "all_purpose", "model_serving"]
SpotFactor = Annotated[float, Field(strict=True, gt=0, le=1, allow_inf_nan=False)]
UsdPerDbu = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]

#: Source keys of the catalog that carry VM prices (the other keys of a node entry cover specs or DBU rates).
_VM_PRICE_SOURCES = ("karpenter_aws_price", "karpenter_azure_price", "cyclenerd_gcp", "skypilot_aws", "aws_price_cut")
_DBU_SOURCES = ("dbx_instance_xlsx", "overwatch")


# --------------------------------------------------------------------------------------------------------------------
# Overrides (user input)
# --------------------------------------------------------------------------------------------------------------------

class NodePriceOverride(BaseModel):
    """Prices of one node type, replacing the catalog's (or pricing a node type the catalog does not know)."""

    model_config = ConfigDict(extra="forbid")

    usd_per_hour_on_demand: NonNegative | None = Field(None, description="VM list price per node-hour, on demand.")
    dbu_per_hour: NonNegative | None = Field(None, description="Databricks DBUs per node-hour.")

    @model_validator(mode="after")
    def _something_set(self) -> "NodePriceOverride":
        if self.usd_per_hour_on_demand is None and self.dbu_per_hour is None:
            raise ValueError("set usd_per_hour_on_demand and/or dbu_per_hour")
        return self


class PriceOverrides(BaseModel):
    """The shape of a ``--prices`` file and of a stack's ``dbx-ai-infra:pricing`` config. Every key is optional.

    ``usd_per_dbu`` is the rate actually paid (a negotiated price, another region): it applies whatever the tier.
    """

    model_config = ConfigDict(extra="forbid")

    tier: Tier | None = None
    spot_factor: dict[Cloud, SpotFactor] = Field(default_factory=dict)
    usd_per_dbu: dict[Cloud, dict[ComputeKind, UsdPerDbu]] = Field(default_factory=dict)
    node_types: dict[str, NodePriceOverride] = Field(default_factory=dict)

    _origin: str | None = PrivateAttr(default=None)

    @property
    def origin(self) -> str | None:
        """Where these overrides came from (a file path), when known."""
        return self._origin

    def with_origin(self, origin: str | None) -> "PriceOverrides":
        self._origin = origin
        return self


_MODEL_AT: dict[str, type[BaseModel]] = {"": PriceOverrides, "node_types.*": NodePriceOverride}
_FIX_FOR_TYPE = {
    "float_type": "give a plain number (no quotes), e.g. 0.4",
    "float_parsing": "give a plain number (no quotes), e.g. 0.4",
    "finite_number": "give a finite number",
    "dict_type": "give a mapping (`key: value` lines under it)",
    "model_type": "give a mapping with usd_per_hour_on_demand and/or dbu_per_hour",
    "model_attributes_type": "give a mapping with usd_per_hour_on_demand and/or dbu_per_hour",
}


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        text = str(part)
        if isinstance(part, int):
            out += f"[{part}]"
        elif text.isidentifier():
            out += ("." if out else "") + text
        else:
            out += f"[{text!r}]"
    return out or "(top level)"


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    if len(loc) == 1:
        return list(PriceOverrides.model_fields)
    if len(loc) == 3 and loc[0] == "node_types":
        return list(NodePriceOverride.model_fields)
    return []


def _describe_error(err: Mapping[str, Any]) -> str:
    loc = tuple(err.get("loc") or ())
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    if loc and loc[-1] == "[key]":
        parent, key = loc[:-2], loc[-2]
        expected = ctx.get("expected", "")
        return (f"{_format_loc(parent)}: unknown key {key!r}. Fix: use {expected}"
                + _did_you_mean(str(key), [e.strip(" '") for e in expected.replace(" or ", ",").split(",")]))
    field = _format_loc(loc)
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc)
        hint = _did_you_mean(str(loc[-1]), allowed)
        return (f"{field}: unknown key. Fix: remove it or correct the spelling{hint}; "
                f"allowed here: {', '.join(allowed)}")
    if kind == "literal_error":
        return f"{field}: {err.get('msg')}. Fix: use {ctx.get('expected')}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        if loc and loc[0] == "spot_factor":
            rule = "a factor > 0 and <= 1 (spot VM price / on-demand VM price)"
        else:
            rule = "a number >= 0"
        return f"{field}: got {err.get('input')!r}; {err.get('msg')}. Fix: give {rule}"
    if kind in _FIX_FOR_TYPE:
        return f"{field}: got {err.get('input')!r}, {err.get('msg')}. Fix: {_FIX_FOR_TYPE[kind]}"
    msg = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    if kind == "value_error":
        return f"{field}: nothing to override. Fix: {msg}"
    return f"{field}: {msg}. Fix: correct this value"


def _did_you_mean(word: str, options: list[str]) -> str:
    close = [o for o in options if o.startswith(word) or word.startswith(o)] \
        or difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _validate_overrides(raw: Any, where: str) -> PriceOverrides:
    if raw is None:
        return PriceOverrides().with_origin(where)
    if isinstance(raw, PriceOverrides):
        return raw
    if not isinstance(raw, Mapping):
        raise PricingInputError(f"{where}: expected a mapping of price overrides (tier, spot_factor, usd_per_dbu, "
                                f"node_types), got {type(raw).__name__}. Fix: write `key: value` lines at the top.")
    try:
        return PriceOverrides.model_validate(dict(raw)).with_origin(where)
    except ValidationError as exc:
        problems = [_describe_error(e) for e in exc.errors()]
        raise PricingInputError(f"{where}: invalid price overrides: " + "; ".join(problems)) from None


def load_overrides_file(path: str | Path) -> PriceOverrides:
    """Read and validate a YAML ``--prices`` file.

    Raises :class:`PricingInputError` naming the file, the field path and the fix when the file is missing, is not
    UTF-8 YAML, or holds an unknown key or a value of the wrong type. An empty file means "no overrides".
    """
    p = Path(path)
    where = str(path)
    if not p.is_file():
        raise PricingInputError(f"{where}: price overrides file not found. Fix: pass an existing YAML file.")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PricingInputError(f"{where}: not UTF-8 text. Fix: save the price overrides as UTF-8 YAML.") from None
    except OSError as exc:
        raise PricingInputError(f"{where}: cannot read the file ({exc.strerror or exc}). Fix: check the path and "
                                f"its permissions.") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PricingInputError(f"{where}: not valid YAML{at}: {problem}. Fix: correct the YAML there.") from None
    return _validate_overrides(raw, where)


# --------------------------------------------------------------------------------------------------------------------
# The packaged rates
# --------------------------------------------------------------------------------------------------------------------

def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise ValueError(f"not a date like '2026-04-10': {value!r}")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@functools.lru_cache(maxsize=4)
def _read_rates(path: Path) -> dict[str, Any]:
    """``rates.yaml``, validated, as plain data: ``{"currency", "default_tier", "usd_per_dbu": {cloud: {tier: {kind:
    figure}}}, "regions": {cloud: region}, "spot_factor": {cloud: figure}, "sources": {key: text}}`` where a figure
    is ``{"value", "source", "date", "estimate", ...}``."""

    def fail(problem: str) -> PricingDataError:
        return PricingDataError(f"{path}: {problem}")

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise fail(f"cannot read the rates file ({exc})") from exc
    if not isinstance(data, dict):
        raise fail("expected a mapping at the top")
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        raise fail("'sources' must map source keys to descriptions")

    def check_sources(value: Any, where: str) -> str:
        keys = [value] if isinstance(value, str) else value
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise fail(f"{where}.source must be a source key or a list of them")
        unknown = [k for k in keys if k not in sources]
        if unknown:
            raise fail(f"{where}.source: key(s) {', '.join(unknown)} not defined under 'sources'")
        return ", ".join(keys)

    def figure(raw: Any, where: str, *, lo: float, hi: float | None, estimate_ok: bool) -> dict[str, Any]:
        if not isinstance(raw, dict) or not _number(raw.get("value")):
            raise fail(f"{where} must be a mapping with a numeric 'value'")
        value = float(raw["value"])
        if value < lo or (hi is not None and value > hi):
            raise fail(f"{where}.value {value} is out of range")
        try:
            date = _iso(raw.get("date"))
        except ValueError as exc:
            raise fail(f"{where}.date: {exc}") from None
        estimate = raw.get("estimate", False)
        if not isinstance(estimate, bool) or (estimate and not estimate_ok):
            raise fail(f"{where}.estimate must be true or false")
        return {"value": value, "source": check_sources(raw.get("source"), where), "date": date, "estimate": estimate}

    default_tier = data.get("default_tier")
    if default_tier not in TIERS:
        raise fail(f"default_tier must be one of {', '.join(TIERS)}")
    rates: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    regions: dict[str, str] = {}
    raw_rates = data.get("usd_per_dbu")
    if not isinstance(raw_rates, dict) or set(raw_rates) != set(CLOUDS):
        raise fail(f"usd_per_dbu must have exactly the clouds {', '.join(CLOUDS)}")
    for cloud in CLOUDS:
        block = raw_rates[cloud]
        if not isinstance(block, dict) or not isinstance(block.get("region"), str):
            raise fail(f"usd_per_dbu.{cloud} must be a mapping with a 'region'")
        regions[cloud] = block["region"]
        tiers = {k: v for k, v in block.items() if k != "region"}
        if not tiers or not set(tiers) <= set(TIERS):
            raise fail(f"usd_per_dbu.{cloud}: tiers must be among {', '.join(TIERS)}")
        rates[cloud] = {}
        for tier, kinds in tiers.items():
            if not isinstance(kinds, dict) or set(kinds) != set(COMPUTE_KINDS):
                raise fail(f"usd_per_dbu.{cloud}.{tier} must have exactly {', '.join(COMPUTE_KINDS)}")
            rates[cloud][tier] = {kind: figure(kinds[kind], f"usd_per_dbu.{cloud}.{tier}.{kind}",
                                               lo=0, hi=None, estimate_ok=False)
                                  for kind in COMPUTE_KINDS}
    if default_tier not in rates["aws"]:
        raise fail("the default tier must have AWS rates")

    raw_spot = data.get("spot_factor")
    if not isinstance(raw_spot, dict) or set(raw_spot) != set(CLOUDS):
        raise fail(f"spot_factor must have exactly the clouds {', '.join(CLOUDS)}")
    spot: dict[str, dict[str, Any]] = {}
    for cloud in CLOUDS:
        fig = figure(raw_spot[cloud], f"spot_factor.{cloud}", lo=0, hi=1, estimate_ok=True)
        if fig["value"] <= 0:
            raise fail(f"spot_factor.{cloud}.value must be > 0")
        rng = raw_spot[cloud].get("range")
        if not (isinstance(rng, list) and len(rng) == 2 and all(_number(x) for x in rng) and rng[0] <= fig["value"]
                <= rng[1]):
            raise fail(f"spot_factor.{cloud}: 'range' must be [low, high] around the value")
        fig["range"] = (float(rng[0]), float(rng[1]))
        spot[cloud] = fig

    dbu_on_spot = data.get("dbu_on_spot")
    if not isinstance(dbu_on_spot, dict) or dbu_on_spot.get("discounted") is not False:
        raise fail("dbu_on_spot.discounted must be false: the model never discounts DBUs on spot nodes")
    check_sources(dbu_on_spot.get("source"), "dbu_on_spot")

    currency = data.get("currency")
    if currency != "USD":
        raise fail("currency must be USD")
    return {"currency": currency, "default_tier": default_tier, "usd_per_dbu": rates, "regions": regions,
            "spot_factor": spot, "dbu_on_spot_source": check_sources(dbu_on_spot["source"], "dbu_on_spot"),
            "sources": dict(sources)}


# --------------------------------------------------------------------------------------------------------------------
# The price book
# --------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NodePrice:
    """VM and DBU figures of one node type, with where each came from."""

    node_type_id: str
    cloud: str | None
    usd_per_hour_on_demand: float | None
    dbu_per_hour: float | None
    vm_source: str | None
    vm_date: str | None
    dbu_source: str | None
    dbu_date: str | None


def _source_entry(figure: str, value: Any, source: str | None, date: str | None, estimate: bool = False
                  ) -> dict[str, Any]:
    return {"figure": figure, "value": value, "source": source, "date": date, "estimate": estimate}


class PriceBook:
    """Every price the cost model uses, for one tier. Build it with :func:`load_prices`.

    Attributes: ``currency``; ``tier``; ``rates`` (``{cloud: {tier: {kind: $/DBU}}}`` from ``rates.yaml``);
    ``dbu_overrides`` (``{cloud: {kind: $/DBU}}``, any tier); ``spot_factors`` (``{cloud: factor}``); ``nodes``
    (``{node_type_id: NodePrice}``, catalog plus overrides); ``regions``; ``sources`` (a list of ``{figure, value,
    source, date, estimate}``, one per figure in the book).
    """

    def __init__(self, *, currency: str, tier: str, rates: dict[str, dict[str, dict[str, float]]],
                 dbu_overrides: dict[str, dict[str, float]], spot_factors: dict[str, float],
                 nodes: dict[str, NodePrice], regions: dict[str, str], sources: list[dict[str, Any]],
                 source_descriptions: dict[str, str]) -> None:
        self.currency = currency
        self.tier = tier
        self.rates = rates
        self.dbu_overrides = dbu_overrides
        self.spot_factors = spot_factors
        self.nodes = nodes
        self.regions = regions
        self.sources = sources
        self.source_descriptions = source_descriptions
        self._by_figure = {s["figure"]: s for s in sources}

    def __repr__(self) -> str:
        return f"PriceBook(tier={self.tier!r}, {len(self.nodes)} node types, spot={self.spot_factors})"

    # figure names, shared with the cost object's "sources"
    def rate_figure(self, cloud: str, kind: str) -> str:
        return f"usd_per_dbu.{cloud}.{self.tier}.{kind}"

    @staticmethod
    def spot_figure(cloud: str) -> str:
        return f"spot_factor.{cloud}"

    @staticmethod
    def node_figures(node_type_id: str) -> tuple[str, str]:
        return (f"node_types.{node_type_id}.usd_per_hour_on_demand", f"node_types.{node_type_id}.dbu_per_hour")

    def usd_per_dbu(self, cloud: str, kind: str) -> float | None:
        """$/DBU for ``kind`` on ``cloud`` at the book's tier (an override first); None when there is no rate
        (Azure has no Enterprise tier)."""
        if kind in self.dbu_overrides.get(cloud, {}):
            return self.dbu_overrides[cloud][kind]
        return self.rates.get(cloud, {}).get(self.tier, {}).get(kind)

    def spot_factor(self, cloud: str) -> float:
        return self.spot_factors[cloud]

    def node(self, node_type_id: str) -> NodePrice | None:
        return self.nodes.get(node_type_id)

    def source_of(self, figure: str) -> dict[str, Any] | None:
        """The ``{figure, value, source, date, estimate}`` entry of a figure name, or None."""
        return self._by_figure.get(figure)


def _catalog_nodes(catalog: Any) -> dict[str, NodePrice]:
    out: dict[str, NodePrice] = {}
    for node in catalog:
        vm_keys = [s for s in node.sources if s in _VM_PRICE_SOURCES] or list(node.sources)
        dbu_keys = [s for s in node.sources if s in _DBU_SOURCES] or list(node.sources)
        out[node.node_type_id] = NodePrice(
            node_type_id=node.node_type_id, cloud=node.cloud,
            usd_per_hour_on_demand=node.usd_per_hour_on_demand, dbu_per_hour=node.dbu_per_hour,
            vm_source="gpucatalog: " + ", ".join(vm_keys), vm_date=node.price_date,
            dbu_source="gpucatalog: " + ", ".join(dbu_keys), dbu_date=node.dbu_date,
        )
    return out


def load_prices(overrides: PriceOverrides | Mapping[str, Any] | None = None,
                *more: PriceOverrides | Mapping[str, Any] | None, catalog: Any = None) -> PriceBook:
    """The price book: ``rates.yaml`` plus the node catalog, then each override in order (later ones win).

    ``None`` overrides are skipped; a plain mapping is validated as :class:`PriceOverrides` (raising
    :class:`PricingInputError`). ``catalog`` defaults to ``gpucatalog.load_catalog()``.
    """
    if catalog is None:
        from gpucatalog import load_catalog

        catalog = load_catalog()
    data = _read_rates(RATES_PATH)
    layers = [_validate_overrides(o, f"price overrides #{i + 1}") for i, o in enumerate((overrides, *more))
              if o is not None]

    tier = data["default_tier"]
    tier_source = "rates.yaml default_tier"
    spot = {cloud: fig["value"] for cloud, fig in data["spot_factor"].items()}
    spot_src = {cloud: (fig["source"], fig["date"], fig["estimate"]) for cloud, fig in data["spot_factor"].items()}
    dbu_overrides: dict[str, dict[str, float]] = {}
    dbu_src: dict[tuple[str, str], str] = {}
    nodes = _catalog_nodes(catalog)

    for layer in layers:
        origin = f"override ({layer.origin})" if layer.origin else "override"
        if layer.tier is not None:
            tier, tier_source = layer.tier, origin
        for cloud, value in layer.spot_factor.items():
            spot[cloud] = value
            spot_src[cloud] = (origin, None, False)
        for cloud, kinds in layer.usd_per_dbu.items():
            for kind, value in kinds.items():
                dbu_overrides.setdefault(cloud, {})[kind] = value
                dbu_src[(cloud, kind)] = origin
        for node_type_id, price in layer.node_types.items():
            base = nodes.get(node_type_id) or NodePrice(node_type_id, None, None, None, None, None, None, None)
            changes: dict[str, Any] = {}
            if price.usd_per_hour_on_demand is not None:
                changes.update(usd_per_hour_on_demand=price.usd_per_hour_on_demand, vm_source=origin, vm_date=None)
            if price.dbu_per_hour is not None:
                changes.update(dbu_per_hour=price.dbu_per_hour, dbu_source=origin, dbu_date=None)
            nodes[node_type_id] = NodePrice(**{**base.__dict__, **changes})

    rates = {cloud: {t: {k: fig["value"] for k, fig in kinds.items()} for t, kinds in tiers.items()}
             for cloud, tiers in data["usd_per_dbu"].items()}

    sources: list[dict[str, Any]] = [_source_entry("tier", tier, tier_source, None)]
    for cloud in CLOUDS:
        for kind in COMPUTE_KINDS:
            figure = f"usd_per_dbu.{cloud}.{tier}.{kind}"
            if (cloud, kind) in dbu_src:
                sources.append(_source_entry(figure, dbu_overrides[cloud][kind], dbu_src[(cloud, kind)], None))
            elif tier in data["usd_per_dbu"][cloud]:
                fig = data["usd_per_dbu"][cloud][tier][kind]
                sources.append(_source_entry(figure, fig["value"], fig["source"], fig["date"]))
    for cloud in CLOUDS:
        src, date, estimate = spot_src[cloud]
        sources.append(_source_entry(f"spot_factor.{cloud}", spot[cloud], src, date, estimate))
    sources.append(_source_entry("dbu_discount_on_spot", 0.0, data["dbu_on_spot_source"], None))
    for node in nodes.values():
        vm_fig, dbu_fig = PriceBook.node_figures(node.node_type_id)
        sources.append(_source_entry(vm_fig, node.usd_per_hour_on_demand, node.vm_source, node.vm_date))
        sources.append(_source_entry(dbu_fig, node.dbu_per_hour, node.dbu_source, node.dbu_date))

    descriptions = dict(getattr(catalog, "sources", {}) or {})
    descriptions.update(data["sources"])
    return PriceBook(currency=data["currency"], tier=tier, rates=copy.deepcopy(rates), dbu_overrides=dbu_overrides,
                     spot_factors=spot, nodes=nodes, regions=dict(data["regions"]), sources=sources,
                     source_descriptions=descriptions)
