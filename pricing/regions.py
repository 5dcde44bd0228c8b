"""Regional prices (``pricing/regions.yaml``): Model Serving $/DBU per region, and VM prices per region and node
type, on demand and spot. The price book (`pricing.book.load_prices`) applies them for the region a stack names
(``dbx-ai-infra:region``) or a Terraform plan or workspace audit is given (``--region``); with none, the reference
regions of `dbxtypes.clouds` (the figures ``rates.yaml`` and the node catalog hold).

Each figure keeps its source key (defined under ``sources`` in ``rates.yaml``, the one list of sources) and its own
date. The spot factor of a node type is the spot price over the on-demand price of one row: same source, same day.
"""

from __future__ import annotations

import datetime as _dt
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from dbxtypes.clouds import profile
from dbxtypes.documents import parse_packaged_yaml, read_text
from dbxtypes.errors import InputError, problems_from_pydantic
from dbxtypes.vocabulary import CLOUDS, Cloud

__all__ = ["REGIONS_PATH", "Regional", "RegionTable", "SpotRow", "load_regions"]

REGIONS_PATH = Path(__file__).with_name("regions.yaml")

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
    #: What the spot column is (a 90-day average, a list price): the label a priced row shows.
    spot: str = Field(min_length=1)
    nodes: dict[str, tuple[_Price, _Price]] = Field(min_length=1)

    @model_validator(mode="after")
    def _spot_below(self) -> _VmRegion:
        over = [n for n, (on_demand, spot) in self.nodes.items() if spot > on_demand]
        if over:
            raise ValueError(f"spot above on demand for {', '.join(over)}: the columns are [on_demand, spot]")
        return self


class _Cloud(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reference: str
    regions: list[str] = Field(min_length=1)
    serving_usd_per_dbu: _Serving
    vm: dict[str, _VmRegion] = Field(default_factory=dict)


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
                                 f"{cloud} (dbxtypes.clouds) is {record.reference_region}")
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
    """One node type's spot factor in one region, and what it is (the label a priced row shows)."""

    factor: float
    region: str
    basis: str
    source: str
    date: str
    on_demand: float
    spot: float

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
    vm: dict[str, dict[str, SpotRow]]

    def vm_row(self, region: str, node_type_id: str) -> SpotRow | None:
        return self.vm.get(region, {}).get(node_type_id)


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
        """The node type's own spot factor: the priced region's row, else the reference region's (None: neither)."""
        table = self.tables[cloud]
        return table.vm_row(self.region(cloud), node_type_id) or table.vm_row(table.reference, node_type_id)


@functools.lru_cache(maxsize=2)
def load_regions(path: Path = REGIONS_PATH, sources: tuple[str, ...] = ()) -> dict[str, RegionTable]:
    """``regions.yaml`` validated, per cloud. ``sources``: the source keys ``rates.yaml`` defines (every figure here
    must name one). Raises `InputError` naming the file, the field and the fix."""
    where = str(path)
    text = read_text(path, "regional prices file", fix_missing="restore pricing/regions.yaml.")
    try:
        parsed = _RegionsFile.model_validate(parse_packaged_yaml(text, where))
    except ValidationError as exc:
        raise InputError(where, problems_from_pydantic(exc, root=_RegionsFile,
                                                       fix="correct the figure in regions.yaml.")) from None
    tables: dict[str, RegionTable] = {}
    for cloud, data in parsed.clouds.items():
        cited = [data.serving_usd_per_dbu.source, *(v.source for v in data.vm.values())]
        unknown = [s for s in cited if sources and s not in sources]
        if unknown:
            raise InputError.single(where, f"clouds.{cloud}", f"cites source(s) {', '.join(unknown)} that rates.yaml "
                                    "does not define.", "define them under sources in pricing/rates.yaml.")
        vm = {region: {node: SpotRow(spot / on_demand, region, v.spot, v.source, v.date, on_demand, spot)
                       for node, (on_demand, spot) in v.nodes.items()} for region, v in data.vm.items()}
        serving = {"premium": dict(data.serving_usd_per_dbu.premium),
                   "enterprise": dict(data.serving_usd_per_dbu.enterprise)}
        tables[cloud] = RegionTable(cloud, data.reference, tuple(data.regions), serving,
                                    data.serving_usd_per_dbu.source, data.serving_usd_per_dbu.date, vm)
    return tables
