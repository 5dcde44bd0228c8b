"""Price data: the packaged rates (``rates.yaml``), the node catalog's prices, and user overrides.

:func:`load_prices` builds a :class:`PriceBook` from

1. ``dbx_ai_infra/pricing/rates.yaml``: $/DBU per cloud, tier and compute kind, and the spot/on-demand VM price factor
   per cloud;
2. the GPU node catalog (``dbx_ai_infra/gpucatalog/node_types.yaml``): VM $/h on demand and DBU/h per node type. Those
   figures are not copied into ``rates.yaml``: the catalog is their one source of truth;
3. any number of :class:`PriceOverrides` (a ``--prices`` file, a stack's ``dbx-ai-infra:pricing`` config), applied
   in order, so a later override wins.

Every figure in the book carries where it came from (``PriceBook.sources``: ``figure``, ``value``, ``source``,
``date``, ``estimate``), so a report can cite what it used.
"""

from __future__ import annotations

import copy
import datetime as _dt
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from dbx_ai_infra.dbxtypes.clouds import profile
from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml, parse_yaml, read_text
from dbx_ai_infra.dbxtypes.errors import InputError, did_you_mean, problems_from_pydantic
from dbx_ai_infra.dbxtypes.prices import NodePriceOverride, PriceOverrides, Tier
from dbx_ai_infra.dbxtypes.vocabulary import CLOUDS, COMPUTE_KINDS, MODEL_SERVING, Cloud
from dbx_ai_infra.gpucatalog import load_catalog

from .regions import Regional, check_region, load_regions, vm_sources

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

TIERS: tuple[str, ...] = ("premium", "enterprise")

RATES_PATH = Path(__file__).with_name("rates.yaml")


#: Source keys of the catalog that carry VM prices (the other keys of a node entry cover specs or DBU rates).
_VM_PRICE_SOURCES = ("karpenter_aws_price", "karpenter_azure_price", "cyclenerd_gcp", "skypilot_aws", "aws_price_cut")
_DBU_SOURCES = ("dbx_instance_xlsx", "overwatch")
#: The overrides' fields that price serverless GPU accelerators and provisioned-throughput models.
_SERVERLESS_OVERRIDES = ("serverless_gpu_usd_per_gpu_hour", "serverless_gpu_dbu_per_gpu_hour",
                         "provisioned_throughput_dbu_per_model_unit_hour")


# --------------------------------------------------------------------------------------------------------------------
# Overrides (user input)
# --------------------------------------------------------------------------------------------------------------------

def _validate_overrides(raw: Any, where: str, prefix: str = "") -> PriceOverrides:
    if raw is None:
        return PriceOverrides().with_origin(where)
    if isinstance(raw, PriceOverrides):
        return raw
    if not isinstance(raw, Mapping):
        raise InputError.single(where, prefix.rstrip("."), f"expected a mapping of price overrides (tier, "
                                f"spot_factor, usd_per_dbu, node_types), got {type(raw).__name__}.",
                                "write `key: value` lines at the top.")
    try:
        return PriceOverrides.model_validate(dict(raw)).with_origin(where)
    except ValidationError as exc:
        raise InputError(where, problems_from_pydantic(exc, root=PriceOverrides, prefix=prefix)) from None


def load_overrides_file(path: str | Path) -> PriceOverrides:
    """Read and validate a YAML ``--prices`` file.

    Raises `InputError` naming the file, the field path and the fix when the file is missing, is not UTF-8 YAML, or
    holds an unknown key or a value of the wrong type. An empty file means "no overrides".
    """
    where = str(path)
    raw = parse_yaml(read_text(path, "price overrides file", fix_missing="pass an existing YAML file."), where)
    return _validate_overrides(raw, where)


# --------------------------------------------------------------------------------------------------------------------
# The packaged rates (rates.yaml), validated by pydantic models
# --------------------------------------------------------------------------------------------------------------------

def _iso(value: Any) -> Any:
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
        raise ValueError(f"not a date like '2026-04-10': {value!r}")
    return value


_Number = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]


class _Figure(BaseModel):
    """A figure with its source keys (defined under ``sources``), date and whether it is an estimate."""

    model_config = ConfigDict(extra="forbid")

    value: _Number
    source: str | list[str]
    date: Annotated[str, BeforeValidator(_iso)] | None = None
    estimate: Literal[False] = False

    @property
    def source_keys(self) -> list[str]:
        return [self.source] if isinstance(self.source, str) else list(self.source)


class _SpotFigure(_Figure):
    value: Annotated[float, Field(strict=True, gt=0, le=1, allow_inf_nan=False)]
    range: tuple[_Number, _Number]
    observed: str | None = None
    estimate: bool = False  # type: ignore[assignment]

    @model_validator(mode="after")
    def _range_around_value(self) -> _SpotFigure:
        if not self.range[0] <= self.value <= self.range[1]:
            raise ValueError(f"range must be [low, high] around the value {self.value}")
        return self


class _KindRates(BaseModel):
    model_config = ConfigDict(extra="forbid")

    jobs_compute: _Figure
    all_purpose: _Figure
    model_serving: _Figure


class _CloudRates(BaseModel):
    model_config = ConfigDict(extra="forbid")

    region: Annotated[str, Field(min_length=1)]
    premium: _KindRates | None = None
    enterprise: _KindRates | None = None

    def tiers(self) -> dict[str, _KindRates]:
        return {t: r for t in TIERS if (r := getattr(self, t)) is not None}


class _DbuOnSpot(BaseModel):
    model_config = ConfigDict(extra="forbid")

    discounted: Literal[False]
    source: str | list[str]
    note: str | None = None


class _RatesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    currency: Literal["USD"]
    default_tier: Tier
    usd_per_dbu: dict[Cloud, _CloudRates]
    spot_factor: dict[Cloud, _SpotFigure]
    dbu_on_spot: _DbuOnSpot
    sources: dict[str, Annotated[str, Field(min_length=1)]] = Field(min_length=1)

    @model_validator(mode="after")
    def _complete(self) -> _RatesFile:
        for name in ("usd_per_dbu", "spot_factor"):
            missing = [c for c in CLOUDS if c not in getattr(self, name)]
            if missing:
                raise ValueError(f"{name} lacks the cloud(s) {', '.join(missing)}")
        if self.default_tier not in self.usd_per_dbu["aws"].tiers():
            raise ValueError("the default tier must have AWS rates")
        figures: list[tuple[str, _Figure | _DbuOnSpot]] = [("dbu_on_spot", self.dbu_on_spot)]
        figures += [(f"spot_factor.{c}", f) for c, f in self.spot_factor.items()]
        for cloud, rates in self.usd_per_dbu.items():
            for tier, kinds in rates.tiers().items():
                figures += [(f"usd_per_dbu.{cloud}.{tier}.{k}", getattr(kinds, k)) for k in _KindRates.model_fields]
        for where, fig in figures:
            keys = [fig.source] if isinstance(fig.source, str) else fig.source
            unknown = [k for k in keys if k not in self.sources]
            if unknown or not keys:
                raise ValueError(f"{where}.source: key(s) {', '.join(unknown) or '(none)'} not defined under "
                                 f"'sources'")
        return self


def _figure(fig: _Figure) -> dict[str, Any]:
    out: dict[str, Any] = {"value": float(fig.value), "source": ", ".join(fig.source_keys), "date": fig.date,
                           "estimate": fig.estimate}
    if isinstance(fig, _SpotFigure):
        out["range"] = (float(fig.range[0]), float(fig.range[1]))
    return out


@functools.lru_cache(maxsize=4)
def _read_rates(path: Path) -> dict[str, Any]:
    """``rates.yaml``, validated by `_RatesFile`, as plain data: ``{"currency", "default_tier", "usd_per_dbu":
    {cloud: {tier: {kind: figure}}}, "regions": {cloud: region}, "spot_factor": {cloud: figure}, "sources": {key:
    text}}`` where a figure is ``{"value", "source", "date", "estimate", ...}``. Raises `InputError`."""
    text = read_text(path, "rates file", fix_missing="restore pricing/rates.yaml.")
    data = parse_packaged_yaml(text, str(path)) if path == RATES_PATH else parse_yaml(text, str(path))
    try:
        parsed = _RatesFile.model_validate(data)
    except ValidationError as exc:
        raise InputError(str(path), problems_from_pydantic(exc, root=_RatesFile,
                                                           fix="correct the figure in rates.yaml.")) from None
    rates = {cloud: {tier: {k: _figure(getattr(kinds, k)) for k in _KindRates.model_fields}
                     for tier, kinds in parsed.usd_per_dbu[cloud].tiers().items()} for cloud in CLOUDS}
    return {"currency": parsed.currency, "default_tier": parsed.default_tier, "usd_per_dbu": rates,
            "regions": {cloud: parsed.usd_per_dbu[cloud].region for cloud in CLOUDS},
            "spot_factor": {cloud: _figure(parsed.spot_factor[cloud]) for cloud in CLOUDS},
            "dbu_on_spot_source": ", ".join([parsed.dbu_on_spot.source] if isinstance(parsed.dbu_on_spot.source, str)
                                            else parsed.dbu_on_spot.source),
            "sources": dict(parsed.sources)}


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


def rate_figure_name(cloud: str, tier: str, kind: str) -> str:
    """The name of a $/DBU figure in a cost's ``sources`` (``usd_per_dbu.aws.premium.all_purpose``)."""
    return f"usd_per_dbu.{cloud}.{tier}.{kind}"


class PriceBook:
    """Every price the cost model uses, for one tier. Build it with :func:`load_prices`.

    Attributes: ``currency``; ``tier``; ``rates`` (``{cloud: {tier: {kind: $/DBU}}}`` from ``rates.yaml``);
    ``dbu_overrides`` (``{cloud: {kind: $/DBU}}``, any tier); ``spot_factors`` (``{cloud: factor}``); ``nodes``
    (``{node_type_id: NodePrice}``, catalog plus overrides); ``regions``; ``sources`` (a list of ``{figure, value,
    source, date, estimate}``, one per rate and cloud figure; a node type's figures come from `source_of`).
    """

    def __init__(self, *, currency: str, tier: str, rates: dict[str, dict[str, dict[str, float]]],
                 dbu_overrides: dict[str, dict[str, float]], spot_factors: dict[str, float],
                 nodes: dict[str, NodePrice], regions: dict[str, str], sources: list[dict[str, Any]],
                 source_descriptions: dict[str, str],
                 serving_overrides: dict[str, dict[str, tuple[float, str]]] | None = None,
                 regional: Regional | None = None, spot_overridden: frozenset[str] = frozenset(),
                 serverless_overrides: dict[str, dict[str, dict[str, tuple[float, str]]]] | None = None) -> None:
        self.currency = currency
        self.tier = tier
        self.rates = rates
        self.dbu_overrides = dbu_overrides
        self.spot_factors = spot_factors
        self.nodes = nodes
        self.regions = regions
        self.sources = sources
        self.source_descriptions = source_descriptions
        #: ``{cloud: {workload_type: (serving DBU/h, where it came from)}}``: the overrides' serving rates.
        self.serving_overrides = serving_overrides or {}
        #: The region priced per cloud and its tables (`dbx_ai_infra.pricing.regions`); None: the reference regions
        #: only.
        self.regional = regional
        #: Clouds whose spot factor an override sets: it prices every node type of the cloud, over the per-type rows.
        self.spot_overridden = spot_overridden
        self._by_figure = {s["figure"]: s for s in sources}
        #: ``{field: {cloud: {name: (value, where it came from)}}}``: the overrides' serverless GPU $/GPU-hour
        #: (``serverless_gpu_usd_per_gpu_hour``) and provisioned-throughput DBU/model unit-hour rates.
        self.serverless_overrides = serverless_overrides or {}

    def serverless_override(self, field: str, cloud: str, name: str) -> tuple[float, str] | None:
        """An override's rate for a serverless GPU accelerator or a provisioned-throughput model; None: none."""
        return self.serverless_overrides.get(field, {}).get(cloud, {}).get(name)

    def __repr__(self) -> str:
        return f"PriceBook(tier={self.tier!r}, {len(self.nodes)} node types, spot={self.spot_factors})"

    # figure names, shared with the cost object's "sources"
    def rate_figure(self, cloud: str, kind: str) -> str:
        return rate_figure_name(cloud, self.tier, kind)

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

    def serving_override(self, cloud: str, workload_type: str) -> tuple[float, str] | None:
        """An override's serving DBU/h of ``workload_type`` on ``cloud`` and its origin; None when none gives one."""
        return self.serving_overrides.get(cloud, {}).get(workload_type)

    def spot_factor(self, cloud: str) -> float:
        return self.spot_factors[cloud]

    @staticmethod
    def node_spot_figure(cloud: str, node_type_id: str) -> str:
        return f"spot_factor.{cloud}.{node_type_id}"

    def node_spot(self, cloud: str, node_type_id: str) -> tuple[float, str, str]:
        """(spot factor, what it is, its figure name) for a spot node of ``node_type_id``: an override's cloud
        factor; else the node type's own row (the priced region's, else the reference region's); else the cloud
        factor of ``rates.yaml``."""
        row = None if cloud in self.spot_overridden or self.regional is None else \
            self.regional.spot(cloud, node_type_id)
        if row is not None and row.factor is not None:
            return row.factor, f"{node_type_id}: {row.label} ({row.spot_date or row.date})", \
                self.node_spot_figure(cloud, node_type_id)
        what = "the override's factor" if cloud in self.spot_overridden else "the cloud's factor (an estimate)"
        return self.spot_factors[cloud], f"{node_type_id}: {what}", self.spot_figure(cloud)

    def region(self, cloud: str) -> str:
        """The region whose figures price ``cloud``."""
        return self.regional.region(cloud) if self.regional is not None else profile(cloud).reference_region

    def node(self, node_type_id: str) -> NodePrice | None:
        return self.nodes.get(node_type_id)

    def source_of(self, figure: str) -> dict[str, Any] | None:
        """The ``{figure, value, source, date, estimate}`` entry of a figure name, or None. A node type's figures and
        its own spot factor are made when first asked for (a cost names the few it used, of the catalog's 320 node
        types and thousands of regional rows: making them all cost more than pricing a stack)."""
        found = self._by_figure.get(figure)
        if found is None:
            found = self._node_source(figure)
            if found is not None:
                self._by_figure[figure] = found
        return found

    def _node_source(self, figure: str) -> dict[str, Any] | None:
        parts = figure.split(".")
        if figure.startswith("node_types.") and parts[-1] in ("usd_per_hour_on_demand", "dbu_per_hour"):
            node = self.nodes.get(".".join(parts[1:-1]))
            if node is None:
                return None
            if parts[-1] == "dbu_per_hour":
                return _source_entry(figure, node.dbu_per_hour, node.dbu_source, node.dbu_date)
            return _source_entry(figure, node.usd_per_hour_on_demand, node.vm_source, node.vm_date)
        if figure.startswith("spot_factor.") and len(parts) > 2 and self.regional is not None \
                and parts[1] in self.regional.tables:
            row = self.regional.spot(parts[1], ".".join(parts[2:]))
            return None if row is None else _spot_entry(figure, row)
        return None


def _catalog_nodes(catalog: Any) -> dict[str, NodePrice]:
    out: dict[str, NodePrice] = {}
    for node in [*catalog, *getattr(catalog, "cpu_nodes", ())]:
        vm_keys = [s for s in node.sources if s in _VM_PRICE_SOURCES] or list(node.sources)
        dbu_keys = [s for s in node.sources if s in _DBU_SOURCES] or list(node.sources)
        out[node.node_type_id] = NodePrice(
            node_type_id=node.node_type_id, cloud=node.cloud,
            usd_per_hour_on_demand=node.usd_per_hour_on_demand, dbu_per_hour=node.dbu_per_hour,
            vm_source="gpucatalog: " + ", ".join(vm_keys), vm_date=node.price_date,
            dbu_source="gpucatalog: " + ", ".join(dbu_keys), dbu_date=node.dbu_date,
        )
    return out


def _override_nodes(nodes: dict[str, NodePrice], layer: PriceOverrides, origin: str, known: set[str]) -> None:
    """An override layer's node prices over the book's (over the catalog's and the region's); a node type the catalog
    does not know is refused."""
    unknown = [n for n in layer.node_types if n not in known]
    if unknown:
        first = unknown[0]
        raise InputError.single(layer.origin or "price overrides", f"node_types[{first!r}]",
                                f"is not a node type of the node catalog{did_you_mean(first, sorted(known))}.",
                                "name a node type of dbx_ai_infra/gpucatalog/node_types.yaml (case matters).")
    for node_type_id, price in layer.node_types.items():
        base = nodes.get(node_type_id) or NodePrice(node_type_id, None, None, None, None, None, None, None)
        changes: dict[str, Any] = {}
        if price.usd_per_hour_on_demand is not None:
            changes.update(usd_per_hour_on_demand=price.usd_per_hour_on_demand, vm_source=origin, vm_date=None)
        if price.dbu_per_hour is not None:
            changes.update(dbu_per_hour=price.dbu_per_hour, dbu_source=origin, dbu_date=None)
        nodes[node_type_id] = NodePrice(**{**base.__dict__, **changes})


def _regional_nodes(nodes: dict[str, NodePrice], regional: Regional) -> None:
    """The priced regions' on-demand VM prices over the catalog's (the reference regions'), where the regional data
    has a row; a node type without one has no VM price there (None: the cost names it unpriced), never the reference
    region's."""
    for node_id, node in list(nodes.items()):
        if node.cloud is None or regional.is_reference(node.cloud):
            continue
        row = regional.vm(node.cloud, node_id)
        region = regional.region(node.cloud)
        if row is not None:
            nodes[node_id] = NodePrice(**{**node.__dict__, "usd_per_hour_on_demand": row.on_demand,
                                          "vm_source": f"{row.file}: {row.source} ({row.region})",
                                          "vm_date": row.date})
        else:
            nodes[node_id] = NodePrice(**{**node.__dict__, "usd_per_hour_on_demand": None,
                                          "vm_source": f"no {region} price in the regional data",
                                          "vm_date": None})


def _spot_entry(figure: str, row: Any) -> dict[str, Any]:
    """The ``sources`` entry of a node type's own spot factor (`Regional.spot`'s row)."""
    source = row.source if row.spot_source == row.source else f"{row.source}, spot {row.spot_source}"
    return _source_entry(figure, row.factor, f"{row.file}: {source} ({row.region}, spot {row.basis} {row.spot:g} / "
                         f"on demand {row.on_demand:g} $/h)", row.spot_date or row.date)


def _serverless_layer(serverless: dict[str, dict[str, dict[str, tuple[float, str]]]], layer: PriceOverrides,
                      origin: str) -> None:
    """An override layer's serverless GPU and provisioned-throughput rates, over the earlier layers'."""
    for name in _SERVERLESS_OVERRIDES:
        for cloud, rates_of in getattr(layer, name).items():
            for key, value in rates_of.items():
                serverless.setdefault(name, {}).setdefault(cloud, {})[key] = (value, origin)


@dataclass
class _Layered:
    """rates.yaml's tier and spot factors, and what the override layers set over them, each figure with where it came
    from (an override's origin)."""

    tier: str
    tier_source: str
    spot: dict[str, float]
    #: ``{cloud: (source, date, estimate)}`` of each spot factor.
    spot_src: dict[str, tuple[str, str | None, bool]]
    dbu_overrides: dict[str, dict[str, float]]
    dbu_src: dict[tuple[str, str], str]
    serving: dict[str, dict[str, tuple[float, str]]]
    serverless: dict[str, dict[str, dict[str, tuple[float, str]]]]

    @classmethod
    def of_rates(cls, data: Mapping[str, Any]) -> _Layered:
        """rates.yaml's figures, no override yet (`_read_rates`' data)."""
        return cls(tier=data["default_tier"], tier_source="rates.yaml default_tier",
                   spot={cloud: fig["value"] for cloud, fig in data["spot_factor"].items()},
                   spot_src={cloud: (fig["source"], fig["date"], fig["estimate"])
                             for cloud, fig in data["spot_factor"].items()},
                   dbu_overrides={}, dbu_src={}, serving={}, serverless={})

    def spot_overridden(self) -> frozenset[str]:
        """The clouds whose spot factor an override sets."""
        return frozenset(c for c, (src, _, _) in self.spot_src.items() if src.startswith("override"))


def _tier_layer(state: _Layered, layer: PriceOverrides, origin: str) -> None:
    """An override layer's tier, over the earlier ones'."""
    if layer.tier is not None:
        state.tier, state.tier_source = layer.tier, origin


def _spot_layer(state: _Layered, layer: PriceOverrides, origin: str) -> None:
    """An override layer's spot factors per cloud, over the earlier ones' (not an estimate, undated)."""
    for cloud, value in layer.spot_factor.items():
        state.spot[cloud] = value
        state.spot_src[cloud] = (origin, None, False)


def _dbu_layer(state: _Layered, layer: PriceOverrides, origin: str) -> None:
    """An override layer's $/DBU per cloud and compute kind, over the earlier ones' (for any tier)."""
    for cloud, kinds in layer.usd_per_dbu.items():
        for kind, value in kinds.items():
            state.dbu_overrides.setdefault(cloud, {})[kind] = value
            state.dbu_src[(cloud, kind)] = origin


def _serving_layer(state: _Layered, layer: PriceOverrides, origin: str) -> None:
    """An override layer's serving DBU/h per cloud and workload type, over the earlier ones'."""
    for cloud, types in layer.serving_dbu_per_hour.items():
        for workload_type, value in types.items():
            state.serving.setdefault(cloud, {})[workload_type] = (value, origin)


def _serverless_part(state: _Layered, layer: PriceOverrides, origin: str) -> None:
    _serverless_layer(state.serverless, layer, origin)


#: What each override layer sets besides node prices, one function a field group.
_LAYER_PARTS = (_tier_layer, _spot_layer, _dbu_layer, _serving_layer, _serverless_part)


def _apply_layers(state: _Layered, nodes: dict[str, NodePrice], layers: list[PriceOverrides], known: set[str]
                  ) -> None:
    """Each override layer in order over the book's figures (a later one wins)."""
    for layer in layers:
        origin = f"override ({layer.origin})" if layer.origin else "override"
        _override_nodes(nodes, layer, origin, known)
        for part in _LAYER_PARTS:
            part(state, layer, origin)


def _regional_serving(regional: Regional, cloud: str, tier: str) -> tuple[float, str, str] | None:
    """The priced region's model-serving $/DBU on ``cloud`` (value, source, date); None: it is a reference region,
    or the regional data has no such rate."""
    found = regional.serving_rate(cloud, tier)
    if found is None or regional.is_reference(cloud):
        return None
    return found


def _rate_source(cloud: str, kind: str, state: _Layered, data: Mapping[str, Any], regional: Regional,
                 rates: dict[str, dict[str, dict[str, float]]]) -> dict[str, Any] | None:
    """The ``sources`` entry of the $/DBU of ``kind`` on ``cloud`` at the book's tier: an override's; else the priced
    region's model-serving rate (which then replaces rates.yaml's in ``rates``); else rates.yaml's; None: the cloud has
    no rate at that tier."""
    tier = state.tier
    figure = f"usd_per_dbu.{cloud}.{tier}.{kind}"
    if (cloud, kind) in state.dbu_src:
        return _source_entry(figure, state.dbu_overrides[cloud][kind], state.dbu_src[(cloud, kind)], None)
    found = _regional_serving(regional, cloud, tier) if kind == MODEL_SERVING else None
    if found is not None:
        value, source, date = found
        rates[cloud][tier][kind] = value
        return _source_entry(figure, value, f"regions.yaml: {source} ({regional.region(cloud)})", date)
    if tier in data["usd_per_dbu"][cloud]:
        fig = data["usd_per_dbu"][cloud][tier][kind]
        return _source_entry(figure, fig["value"], fig["source"], fig["date"])
    return None


def _book_sources(state: _Layered, data: Mapping[str, Any], regional: Regional,
                  rates: dict[str, dict[str, dict[str, float]]]) -> list[dict[str, Any]]:
    """The book's ``sources``: the tier, each cloud's $/DBU per compute kind, spot factor, and the DBU on spot."""
    sources: list[dict[str, Any]] = [_source_entry("tier", state.tier, state.tier_source, None)]
    for cloud in CLOUDS:
        for kind in COMPUTE_KINDS:
            entry = _rate_source(cloud, kind, state, data, regional, rates)
            if entry is not None:
                sources.append(entry)
    sources += [_source_entry(f"spot_factor.{cloud}", state.spot[cloud], *state.spot_src[cloud]) for cloud in CLOUDS]
    sources.append(_source_entry("dbu_discount_on_spot", 0.0, data["dbu_on_spot_source"], None))
    return sources


def _rates_of(data: Mapping[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """rates.yaml's $/DBU values: ``{cloud: {tier: {kind: $/DBU}}}``."""
    return {cloud: {t: {k: fig["value"] for k, fig in kinds.items()} for t, kinds in tiers.items()}
            for cloud, tiers in data["usd_per_dbu"].items()}


def _descriptions(catalog: Any, data: Mapping[str, Any]) -> dict[str, str]:
    """What each source key stands for: the catalog's, rates.yaml's and the VM price tables'."""
    descriptions = dict(getattr(catalog, "sources", {}) or {})
    descriptions.update(data["sources"])
    descriptions.update(vm_sources())
    return descriptions


def load_prices(overrides: PriceOverrides | Mapping[str, Any] | None = None,
                *more: PriceOverrides | Mapping[str, Any] | None, catalog: Any = None,
                region: str | None = None) -> PriceBook:
    """The price book: ``rates.yaml`` plus the node catalog, priced at ``region`` where ``regions.yaml`` has its
    figures (None: the reference regions), then each override in order (later ones win over all of it).

    ``None`` overrides are skipped; a plain mapping is validated as :class:`PriceOverrides` (raising
    `InputError`). ``catalog`` defaults to ``gpucatalog.load_catalog()``.
    """
    if catalog is None:
        catalog = load_catalog()
    data = _read_rates(RATES_PATH)
    layers = [_validate_overrides(o, f"price overrides #{i + 1}") for i, o in enumerate((overrides, *more))
              if o is not None]

    state = _Layered.of_rates(data)
    nodes = _catalog_nodes(catalog)
    regional = Regional(region, load_regions(sources=tuple(data["sources"])))
    if region is not None:
        check_region(region, regional.tables)
    _regional_nodes(nodes, regional)
    known = {n.node_type_id for n in [*catalog, *getattr(catalog, "cpu_nodes", ())]}
    _apply_layers(state, nodes, layers, known)

    rates = _rates_of(data)
    sources = _book_sources(state, data, regional, rates)
    return PriceBook(currency=data["currency"], tier=state.tier, rates=copy.deepcopy(rates),
                     dbu_overrides=state.dbu_overrides, spot_factors=state.spot, nodes=nodes,
                     regions=dict(data["regions"]), sources=sources, source_descriptions=_descriptions(catalog, data),
                     serving_overrides=state.serving, regional=regional, spot_overridden=state.spot_overridden(),
                     serverless_overrides=state.serverless)
