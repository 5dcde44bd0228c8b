"""Model Serving GPU workload types per cloud (data file ``serving_types.yaml``) and endpoint sizing.

An endpoint is sized like a cluster: the model's inference need (parameters x bytes x 1.2, `sizing.estimate`)
must fit in the workload type's total GPU memory; the smallest type of the cloud that holds it is chosen. A pinned
type must be offered on the cloud and large enough; otherwise the error names the types that would fit.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml, parse_yaml, read_text
from dbx_ai_infra.dbxtypes.sdk_types import enum_values

SERVING_FILE = Path(__file__).resolve().parent / "serving_types.yaml"


class ServingOffer(BaseModel):
    """GPUs Model Serving offers on one cloud; ``dbu_per_hour`` is one replica's, None where no public figure exists."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    gpu: str
    gpu_count: int = Field(ge=1)
    gpu_memory_gb: float = Field(gt=0)
    dbu_per_hour: float | None = Field(default=None, gt=0)
    source: str
    date: str
    doubt: str | None = None


class ServingType(ServingOffer):
    """One GPU workload type of one cloud: an offer with the name the API takes."""

    workload_type: str


class CpuServingType(BaseModel):
    """One CPU workload type of one cloud: no GPU, billed per unit of provisioned concurrency
    (``dbu_per_concurrency_hour``; None where no public figure exists). Sizing never picks one."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    workload_type: str
    dbu_per_concurrency_hour: float | None = Field(default=None, gt=0)
    source: str
    date: str
    doubt: str | None = None


class LaunchPrice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    value: float = Field(ge=0)
    source: str
    date: str


class _ServingFile(BaseModel):
    #: ``defer_build`` (here and above): the validators are built when the serving catalog is first read, which a
    #: run that judges no endpoint never does.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    types: dict[str, list[ServingType]]
    not_offered: dict[str, dict[str, str]] = Field(default_factory=dict)
    unnamed: dict[str, list[ServingOffer]] = Field(default_factory=dict)
    cpu: dict[str, list[CpuServingType]] = Field(default_factory=dict)
    concurrency_per_replica: int = Field(ge=1)
    launch_usd: LaunchPrice


@dataclass(frozen=True)
class ServingCatalog:
    types: dict[str, tuple[ServingType, ...]]
    not_offered: dict[str, dict[str, str]]
    concurrency_per_replica: int
    launch_usd: LaunchPrice
    #: Offers a public source prices but no source read names the workload type of: recorded, never chosen.
    unnamed: dict[str, tuple[ServingOffer, ...]] = dataclasses.field(default_factory=dict)
    #: CPU workload types per cloud: priced where an endpoint uses one, never chosen by sizing.
    cpu: dict[str, tuple[CpuServingType, ...]] = dataclasses.field(default_factory=dict)

    def of_cloud(self, cloud: str) -> tuple[ServingType, ...]:
        """The cloud's types, smallest total GPU memory first."""
        return tuple(sorted(self.types.get(cloud, ()), key=lambda t: (t.gpu_memory_gb, t.gpu_count)))

    def get(self, cloud: str, workload_type: str) -> ServingType | None:
        return next((t for t in self.types.get(cloud, ()) if t.workload_type == workload_type), None)

    def cpu_type(self, cloud: str, workload_type: str) -> CpuServingType | None:
        return next((t for t in self.cpu.get(cloud, ()) if t.workload_type == workload_type), None)

    def replicas(self, concurrency: int) -> int:
        """Replicas that carry ``concurrency`` provisioned concurrency (at least one)."""
        return max(1, math.ceil(concurrency / self.concurrency_per_replica))


@functools.cache
def load_serving_catalog(path: str | None = None) -> ServingCatalog:
    source = str(path or SERVING_FILE)
    text = read_text(source, "serving catalog")
    data = _ServingFile.model_validate(parse_yaml(text, source) if path else parse_packaged_yaml(text, source))
    return ServingCatalog({c: tuple(ts) for c, ts in data.types.items()}, data.not_offered,
                          data.concurrency_per_replica, data.launch_usd,
                          {c: tuple(rows) for c, rows in data.unnamed.items()},
                          {c: tuple(rows) for c, rows in data.cpu.items()})


#: The workload types the API enum of the pinned databricks-sdk lists (``serving.ServingModelWorkloadType``).
SDK_ENUM = "serving.ServingModelWorkloadType"


def sdk_knows(workload_type: str) -> bool:
    """Whether databricks-sdk's ``ServingModelWorkloadType`` lists a workload type: auto-sizing picks only those (a
    type the SDK does not list may be refused, or arrive in a newer SDK; a stack may still pin one)."""
    return workload_type in enum_values(SDK_ENUM)


class ServingSizingError(ValueError):
    """A workload type that is not offered or does not fit; the message names the types that would."""


def _fits(catalog: ServingCatalog, cloud: str, need_gb: float) -> list[ServingType]:
    """The types of ``cloud`` that hold ``need_gb`` and that databricks-sdk lists, smallest first."""
    return [t for t in catalog.of_cloud(cloud) if t.gpu_memory_gb >= need_gb and sdk_knows(t.workload_type)]


def _names(types: list[ServingType]) -> str:
    return ", ".join(f"{t.workload_type} ({t.gpu_count} x {t.gpu}, {t.gpu_memory_gb:g} GB)" for t in types) or "none"


def choose_serving_type(catalog: ServingCatalog, cloud: str, need_gb: float, pinned: str | None = None
                        ) -> ServingType:
    """The smallest workload type of ``cloud`` whose total GPU memory holds ``need_gb`` among those databricks-sdk
    lists (`sdk_knows`), or the pinned one after checking it (any type of the catalog); raises
    `ServingSizingError`."""
    fitting = _fits(catalog, cloud, need_gb)
    if pinned is not None:
        chosen = catalog.get(cloud, pinned)
        if chosen is None:
            why = catalog.not_offered.get(cloud, {}).get(pinned)
            if catalog.cpu_type(cloud, pinned) is not None:
                why = "it is a CPU workload type: a stack's endpoint is sized on the GPU memory its model needs"
            offered = _names(list(catalog.of_cloud(cloud)))
            raise ServingSizingError(f"{pinned} is not a GPU workload type of Model Serving on {cloud}"
                                     + (f" ({why})" if why else "") + f". Fix: use one that fits the model "
                                     f"({need_gb:g} GB): {_names(fitting)}; offered on {cloud}: {offered}.")
        if chosen.gpu_memory_gb < need_gb:
            raise ServingSizingError(f"{pinned} has {chosen.gpu_memory_gb:g} GB of GPU memory; the model needs "
                                     f"{need_gb:g} GB. Fix: use one that fits: {_names(fitting)}.")
        return chosen
    if not fitting:
        known = [t for t in catalog.of_cloud(cloud) if sdk_knows(t.workload_type)]
        largest = known[-1:]
        raise ServingSizingError(f"no GPU workload type of Model Serving on {cloud} holds {need_gb:g} GB (the "
                                 f"largest: {_names(list(largest))}). Fix: serve a smaller or quantized model "
                                 f"(precision int8 or int4), or use provisioned throughput for foundation models.")
    return fitting[0]
