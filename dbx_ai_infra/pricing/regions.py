"""Regional prices (``dbx_ai_infra/pricing/regions.yaml``): Model Serving $/DBU per region, and VM prices per region
and node type, on demand and spot. The price book (`dbx_ai_infra.pricing.book.load_prices`) applies them for the region
a stack names (``dbx-ai-infra:region``) or a Terraform plan or workspace audit is given (``--region``); with none, the
reference regions of `dbx_ai_infra.dbxtypes.clouds` (the figures ``rates.yaml`` and the node catalog hold).

Each figure keeps its source key (defined under ``sources`` in ``rates.yaml``, the one list of sources) and its own
date. The spot factor of a node type is the spot price over the on-demand price of one row: same source, same day.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from dbx_ai_infra.dbxtypes.clouds import profile
from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml, read_text
from dbx_ai_infra.dbxtypes.errors import InputError, problems_from_pydantic
from dbx_ai_infra.dbxtypes.vocabulary import CLOUDS, Cloud

__all__ = ["REGIONS_PATH", "VM_PRICES_PATH", "Regional", "RegionTable", "SpotRow", "check_region", "load_regions",
           "vm_sources"]

REGIONS_PATH = Path(__file__).with_name("regions.yaml")
#: VM prices per region, generated from public price lists by ``dbx_ai_infra/pricing/tools/gen_vm_prices.py``.
VM_PRICES_PATH = Path(__file__).with_name("vm_prices.json")

_Price = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, _dt.date) else value


_Date = Annotated[str, BeforeValidator(_iso), Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class _Serving(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    date: _Date
    premium: dict[str, _Price] = Field(default_factory=dict)
    enterprise: dict[str, _Price] = Field(default_factory=dict)


class _VmRegion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    date: _Date
    #: What the spot column is (a 90-day average, a list price): the label a priced row shows; None: no spot column.
    spot: str | None = Field(None, min_length=1)
    #: Where the spot column comes from, when not from ``source`` (and its date).
    spot_source: str | None = None
    spot_date: _Date | None = None
    nodes: dict[str, tuple[_Price, _Price | None]] = Field(min_length=1)
    #: Further blocks of the same region from other sources (their own source and date), each pricing node types the
    #: blocks before it do not (vm_prices.json: the AWS CPU families beside a region's GPU list).
    more: list[_VmRegion] = Field(default_factory=list)

    @model_validator(mode="after")
    def _spot_below(self) -> _VmRegion:
        if self.spot is None and any(spot is not None for _, spot in self.nodes.values()):
            raise ValueError("a spot price without `spot` (what the spot column is)")
        over = [n for n, (on_demand, spot) in self.nodes.items() if spot is not None and spot > on_demand]
        if over:
            raise ValueError(f"spot above on demand for {', '.join(over)}: the columns are [on_demand, spot]")
        twice = sorted({n for m in self.more for n in m.nodes} & set(self.nodes))
        if twice:
            raise ValueError(f"{', '.join(twice)} priced twice in one region (nodes and more)")
        return self

    def blocks(self) -> Iterator[_VmRegion]:
        """This block and its further blocks (``more``), each once."""
        yield self
        for more in self.more:
            yield from more.blocks()


class _Cloud(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reference: str
    regions: list[str] = Field(min_length=1)
    serving_usd_per_dbu: _Serving
    vm: dict[str, _VmRegion] = Field(default_factory=dict)


class _VmPricesFile(BaseModel):
    """``vm_prices.json`` (generated): its sources, every region name they know per cloud, and the rows."""

    model_config = ConfigDict(extra="forbid")

    note: str = ""
    sources: dict[str, str]
    regions: dict[Cloud, list[str]]
    clouds: dict[Cloud, dict[str, _VmRegion]]


class _RegionsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    clouds: dict[Cloud, _Cloud]

    @model_validator(mode="after")
    def _consistent(self) -> _RegionsFile:
        for cloud in CLOUDS:
            data = self.clouds.get(cloud)
            if data is None:
                raise ValueError(f"clouds lacks {cloud}")
            record = profile(cloud)
            if data.reference != record.reference_region:
                raise ValueError(f"clouds.{cloud}.reference is {data.reference}, but the reference region of "
                                 f"{cloud} (dbx_ai_infra.dbxtypes.clouds) is {record.reference_region}")
            named = [*data.regions, *data.vm, *data.serving_usd_per_dbu.premium,
                     *data.serving_usd_per_dbu.enterprise]
            wrong = [r for r in named if not record.owns_region(r)]
            if wrong:
                raise ValueError(f"clouds.{cloud}: {', '.join(sorted(set(wrong)))} not {record.display} region "
                                 f"name(s)")
            unlisted = sorted({*data.vm, *data.serving_usd_per_dbu.premium} - set(data.regions))
            if unlisted:
                raise ValueError(f"clouds.{cloud}: {', '.join(unlisted)} priced but not under regions")
        return self


@dataclass(frozen=True)
class SpotRow:
    """One node type's VM prices in one region: on demand, and spot with its factor and what it is (the label a
    priced row shows); ``factor`` None: the source has no spot price there."""

    factor: float | None
    region: str
    basis: str
    source: str
    date: str
    on_demand: float
    spot: float | None
    spot_source: str = ""
    spot_date: str = ""
    #: The data file the row is in (``regions.yaml``, ``vm_prices.json``).
    file: str = "regions.yaml"

    @property
    def label(self) -> str:
        return f"{self.basis}, {self.region}"


@dataclass(frozen=True)
class RegionTable:
    """What ``regions.yaml`` holds for one cloud."""

    cloud: str
    reference: str
    regions: tuple[str, ...]
    #: ``{tier: {region: $/DBU}}`` and the figures' source and date.
    serving: dict[str, dict[str, float]]
    serving_source: str
    serving_date: str
    #: ``{region: {node_type_id: SpotRow}}`` (the on-demand price is ``SpotRow.on_demand``).
    vm: Mapping[str, dict[str, SpotRow]]

    def vm_row(self, region: str, node_type_id: str) -> SpotRow | None:
        return self.vm.get(region, {}).get(node_type_id)

    def spot_row(self, region: str, node_type_id: str) -> SpotRow | None:
        row = self.vm_row(region, node_type_id)
        return row if row is not None and row.factor is not None else None


@dataclass(frozen=True)
class Regional:
    """The region a price book prices, per cloud: the one asked for where it is that cloud's, else the reference."""

    requested: str | None
    tables: dict[str, RegionTable]

    def region(self, cloud: str) -> str:
        """The region whose figures price ``cloud``: the requested one when it names a region of that cloud."""
        asked = self.requested
        return asked if asked is not None and profile(cloud).owns_region(asked) else profile(cloud).reference_region

    def is_reference(self, cloud: str) -> bool:
        return self.region(cloud) == profile(cloud).reference_region

    def known(self, cloud: str) -> bool:
        """Whether the priced region is one of Databricks' regions of the cloud in the list-price table."""
        return self.region(cloud) in self.tables[cloud].regions

    def serving_rate(self, cloud: str, tier: str) -> tuple[float, str, str] | None:
        """(model-serving $/DBU, source, date) of the priced region at ``tier``; None where the file has none."""
        table = self.tables[cloud]
        value = table.serving.get(tier, {}).get(self.region(cloud))
        return None if value is None else (value, table.serving_source, table.serving_date)

    def vm(self, cloud: str, node_type_id: str) -> SpotRow | None:
        """The priced region's VM row of a node type (None: that region has no price for it)."""
        return self.tables[cloud].vm_row(self.region(cloud), node_type_id)

    def spot(self, cloud: str, node_type_id: str) -> SpotRow | None:
        """The node type's own spot factor: the priced region's row, else the reference region's (None: neither has
        a spot price of it)."""
        table = self.tables[cloud]
        return table.spot_row(self.region(cloud), node_type_id) or table.spot_row(table.reference, node_type_id)


def _read(path: Path, model: type[BaseModel], what: str, fix: str) -> Any:
    where = str(path)
    text = read_text(path, what, fix_missing=fix)
    try:
        return model.model_validate(parse_packaged_yaml(text, where))
    except ValidationError as exc:
        raise InputError(where, problems_from_pydantic(exc, root=model, fix=fix)) from None


@functools.lru_cache(maxsize=1)
def load_vm_prices(path: Path = VM_PRICES_PATH) -> dict[str, Any]:
    """``vm_prices.json`` (generated by ``dbx_ai_infra/pricing/tools/gen_vm_prices.py``, read at every priced run):
    parsed by the C JSON reader and checked for its shape here; a block's rows are checked when a region is priced
    (`_rows`). tests/test_vm_prices.py holds the whole file to the `_VmPricesFile` model (pydantic's validation of its
    8,800 rows cost more than everything else the price book reads)."""
    fix = "run dbx_ai_infra/pricing/tools/gen_vm_prices.py again (docs/cost.md)."
    text = read_text(path, "VM prices file", fix_missing=fix)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError.single(str(path), "", f"is not valid JSON: {exc}.", fix) from None
    shape = isinstance(data, dict) and isinstance(data.get("sources"), dict) and \
        isinstance(data.get("regions"), dict) and isinstance(data.get("clouds"), dict) and \
        all(isinstance(b, dict) and isinstance(b.get("nodes"), dict) and isinstance(b.get("source"), str)
            for regions in data["clouds"].values() for b in regions.values())
    if not shape:
        raise InputError.single(str(path), "", "expected sources, regions and clouds.<cloud>.<region>.{source, date, "
                                "nodes}.", fix)
    return data


def vm_sources(path: Path = VM_PRICES_PATH) -> dict[str, str]:
    """The source keys the generated VM prices cite, and what each is (repository, file, commit, date)."""
    return dict(load_vm_prices(path)["sources"])


def _rows(region: str, block: _VmRegion, file: str = "regions.yaml") -> dict[str, SpotRow]:
    """A region's rows, each with its own block's source and date (a further block's rows keep theirs)."""
    return {node: SpotRow(None if spot is None else spot / on_demand, region, v.spot or "", v.source, v.date,
                          on_demand, spot, v.spot_source or v.source, v.spot_date or v.date, file)
            for v in block.blocks() for node, (on_demand, spot) in v.nodes.items()}


class _LazyRows(Mapping[str, dict[str, SpotRow]]):
    """A cloud's VM rows per region: the generated blocks turned into `SpotRow` (and checked) on first use of a
    region, under ``regions.yaml``'s rows of the same region."""

    def __init__(self, generated: Mapping[str, Any], curated: dict[str, dict[str, SpotRow]], file: str,
                 where: str) -> None:
        self._generated, self._curated, self._file, self._where = generated, curated, file, where
        self._done: dict[str, dict[str, SpotRow]] = {}

    def __getitem__(self, region: str) -> dict[str, SpotRow]:
        if region not in self._done:
            if region not in self._generated and region not in self._curated:
                raise KeyError(region)
            rows: dict[str, SpotRow] = {}
            if region in self._generated:
                try:
                    block = _VmRegion.model_validate({k: v for k, v in self._generated[region].items()})
                except ValidationError as exc:
                    raise InputError(self._where, problems_from_pydantic(exc, root=_VmRegion, fix="run "
                                     "dbx_ai_infra/pricing/tools/gen_vm_prices.py again.")) from None
                rows = _rows(region, block, self._file)
            self._done[region] = {**rows, **self._curated.get(region, {})}
        return self._done[region]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._generated, *self._curated]))

    def __len__(self) -> int:
        return len(set(self._generated) | set(self._curated))


@functools.lru_cache(maxsize=2)
def load_regions(path: Path = REGIONS_PATH, sources: tuple[str, ...] = (),
                 vm_path: Path = VM_PRICES_PATH) -> dict[str, RegionTable]:
    """``regions.yaml`` and the generated ``vm_prices.json``, validated, per cloud: a node type's row of
    ``regions.yaml`` (lakemeter's, where it has one) over the generated one of the same region. ``sources``: the
    source keys ``rates.yaml`` defines (every figure here must name one, or one the generated file defines). Raises
    `InputError` naming the file, the field and the fix."""
    where = str(path)
    parsed = _read(path, _RegionsFile, "regional prices file", "correct the figure in regions.yaml.")
    generated = load_vm_prices(vm_path)
    defined = (*sources, *generated["sources"]) if sources else ()
    tables: dict[str, RegionTable] = {}
    for cloud, data in parsed.clouds.items():
        vm_blocks = generated["clouds"].get(cloud, {})
        cited = [data.serving_usd_per_dbu.source, *(v.source for v in data.vm.values()),
                 *(s for v in vm_blocks.values() for b in (v, *v.get("more", ()))
                   for s in (b.get("source"), b.get("spot_source")) if s)]
        unknown = sorted({s for s in cited if defined and s not in defined})
        if unknown:
            raise InputError.single(where, f"clouds.{cloud}", f"cites source(s) {', '.join(unknown)} that rates.yaml "
                                    "does not define.", "define them under sources in pricing/rates.yaml.")
        vm = _LazyRows(vm_blocks, {region: _rows(region, v) for region, v in data.vm.items()}, vm_path.name,
                       str(vm_path))
        serving = {"premium": dict(data.serving_usd_per_dbu.premium),
                   "enterprise": dict(data.serving_usd_per_dbu.enterprise)}
        record = profile(cloud)
        known = sorted({*data.regions, *vm, *(r for r in generated["regions"].get(cloud, [])
                                              if isinstance(r, str) and record.owns_region(r))})
        tables[cloud] = RegionTable(cloud, data.reference, tuple(known), serving,
                                    data.serving_usd_per_dbu.source, data.serving_usd_per_dbu.date, vm)
    return tables


def check_region(region: str, tables: dict[str, RegionTable] | None = None, *, cloud: str | None = None,
                 where: str = "--region", field: str = "") -> None:
    """Raise `InputError` (exit 2) when ``region`` is no region the price data knows for ``cloud`` (None: for any
    cloud whose region names it has the form of): a typo names the nearest known names. A region the data knows
    but has no price for passes: its figures are unpriced, never another region's."""
    tables = tables if tables is not None else load_regions()
    clouds = [cloud] if cloud is not None else [c for c in tables if profile(c).owns_region(region)]
    known = [r for c in clouds for r in tables[c].regions]
    if not clouds or region in known:
        return
    near = difflib.get_close_matches(region, known, n=3, cutoff=0.6)
    display = " or ".join(profile(c).display for c in clouds)
    hint = f"did you mean {', '.join(near)}?" if near else f"the {display} regions the price data knows are in " \
        "dbx_ai_infra/pricing/vm_prices.json and dbx_ai_infra/pricing/regions.yaml"
    article = "an" if display[0] in "AEIOU" else "a"
    raise InputError.single(where, field, f"{region!r} is not {article} {display} region the price data knows: {hint}",
                            f"name the workspace's {display} region{' (' + near[0] + ')' if near else ''}, or leave "
                            f"it out to price at {profile(clouds[0]).reference_region}.")
