"""The cost model: a plan (docs/ARCHITECTURE.md) and a :class:`~dbx_ai_infra.pricing.book.PriceBook` in, a ``cost``
object out. How each figure is computed (a node's $/h, the spot mix, each role's hours, pools, endpoints, what is left
unpriced), with worked examples a test holds to this code, is the docs site's page docs/pricing-model.md ("How prices
are computed"): change the model there and here together."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.dbxtypes.plan import Plan, Resource
from dbx_ai_infra.dbxtypes.shape import (
    ClusterShape,
    PoolShape,
)
from dbx_ai_infra.dbxtypes.vocabulary import (
    ALL_PURPOSE,
    ATTRIBUTES_BLOCK,
    HOURS_PER_MONTH,
    MODEL_SERVING,
    ON_DEMAND_AVAILABILITIES,
    SPOT_AVAILABILITIES,
    USAGE_DEFAULTS,
    WORKLOAD_TAG,
    usage_hours_key,
)
from dbx_ai_infra.gpucatalog.serving import load_serving_catalog

from .book import PriceBook

if TYPE_CHECKING:
    from dbx_ai_infra.gpucatalog.serving import ServingCatalog

__all__ = ["DEFAULT_ASSUMPTIONS", "MODEL_NOTES", "PricingContext", "endpoint_monthly", "on_demand_node_hourly",
           "serving_cost"]

#: The note of a cost priced at the reference regions (its wording is kept: readers of the JSON match it).
REFERENCE_NOTE = ("List prices for the reference regions (us-east-1, eastus, us-central1); no committed-use or DBCU "
                  "discounts.")

#: Used for a key the plan's ``assumptions`` lack: the vocabulary's usage defaults (the stack spec's too).
DEFAULT_ASSUMPTIONS: dict[str, float | None] = {key: u.default for key, u in USAGE_DEFAULTS.items()}

MODEL_NOTES: tuple[str, ...] = (
    "node $/h = VM $/h (on demand, or on demand x spot factor on a spot node) + DBU/h x $/DBU; DBUs are never "
    "discounted on spot.",
    "Spot with fallback: the first first_on_demand nodes (default 1, the driver) are on demand, the rest spot. "
    "A fallback to on-demand capacity is assumed not to happen.",
    "Spot factors: a node type's own (spot / on-demand $/h of one row of dbx_ai_infra/pricing/regions.yaml: AWS 90-day "
    "averages, Azure list spot prices) where the data has one, else the cloud's ESTIMATE (rates.yaml); spot prices "
    "are per-AZ and volatile.",
    "Pool-backed clusters and instance pools are priced on demand; a pool's idle instances cost their VM price "
    "only (no DBU).",
    "Inference autoscale: min = base x inference hours; expected adds the extra workers for the burst hours; "
    "max = all max nodes x inference hours.",
    "Photon is not available with GPU ML runtimes: no Photon DBU multiplier.",
    "Model Serving endpoints are serverless: DBUs only (serving DBU/h of the workload type x replicas x the "
    "model-serving $/DBU), a replica per 4 provisioned concurrency; always warm: the month; scale to zero: its "
    "active hours plus $0.07 a launch (cold start).",
)


# --------------------------------------------------------------------------------------------------------------------
# Usage assumptions and hours
# --------------------------------------------------------------------------------------------------------------------

def _num(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    return None


def _assumptions(plan: Plan) -> dict[str, float | None]:
    raw = plan.assumptions or {}
    out: dict[str, float | None] = {}
    for key, default in DEFAULT_ASSUMPTIONS.items():
        value = raw.get(key, default)
        if value is None and key == "inference_burst_avg_extra_workers":
            out[key] = None
            continue
        number = _num(value)
        if number is None or number < 0:
            raise InputError.single("plan", f"assumptions.{key}", f"got {value!r}.", "give a number >= 0"
                                    + (" or null." if key == "inference_burst_avg_extra_workers" else "."))
        out[key] = number
    for key, value in raw.items():  # a workload's own figure (<assumption>.<workload>), an endpoint's active hours
        if key.partition(".")[0] in DEFAULT_ASSUMPTIONS and "." in key:
            number = _num(value)
            if number is None or number < 0:
                raise InputError.single("plan", f"assumptions.{key}", f"got {value!r}.", "give a number >= 0.")
            out[key] = number
    return out


def assumption(a: Mapping[str, float | None], key: str, tags: Mapping[str, Any]) -> tuple[float | None, str]:
    """(the value, its name) of usage assumption ``key`` for a resource with ``tags``: its workload's own figure
    (``<key>.<workload>``, by the ``dbx_workload`` tag) where the plan has one, else the stack's."""
    workload = tags.get(WORKLOAD_TAG)
    own = f"{key}.{workload}" if isinstance(workload, str) else None
    return (a[own], own) if own is not None and own in a else (a.get(key), key)


def _hours(shape: ClusterShape, a: Mapping[str, float | None]) -> tuple[float, str] | None:
    """(hours per month, why those hours) for a cluster's role; None when the role is unknown.

    An inference cluster whose auto-termination is off (``autotermination_minutes`` 0) is up the whole month: its
    on-demand base never stops, whatever ``inference_hours_per_month`` says. Otherwise the role's usage assumption.
    """
    always_on = shape.role == "inference" and shape.autotermination_minutes == 0
    key = usage_hours_key(shape.role or "", shape.compute_kind, always_on)
    if always_on:
        return HOURS_PER_MONTH, "always on: autotermination_minutes 0 (the month)"
    if key is None:
        return None
    value, name = assumption(a, key, shape.tags)
    if key == "dev_hours_per_working_day":
        hours = (value or 0) * (a["working_days_per_month"] or 0)
        return hours, f"usage assumption {name} x working_days_per_month"
    return value or 0, f"usage assumption {name}"


#: How the reason of an entry priced by the hour only begins (its month unknown: `CostEntry.hourly_only`).
MONTH_UNKNOWN = "month unknown"


class _Unpriced(Exception):
    """A cluster or pool cannot be priced; the message is the reason shown to the reviewer."""


class _Sources:
    """The figures a cost object used, in order of first use."""

    def __init__(self, prices: PriceBook) -> None:
        self.prices = prices
        self.used: list[str] = []
        self.external: dict[str, dict[str, Any]] = {}

    def use(self, figure: str, entry: Mapping[str, Any] | None = None) -> None:
        """Record a figure of the price book, or (``entry``) one from another data file, such as the serving
        catalog's DBU rates."""
        if figure not in self.used:
            self.used.append(figure)
        if entry is not None:
            self.external[figure] = {"figure": figure, **entry}

    def entries(self) -> list[dict[str, Any]]:
        out = []
        for figure in self.used:
            entry = self.external.get(figure) or self.prices.source_of(figure)
            if entry is not None:
                out.append(dict(entry))
        return out


@dataclass
class PricingContext:
    """What every resource kind's pricer reads: the plan's cloud, the price book, the plan's instance pools (by id),
    the usage assumptions, the figures used so far, and which roles use each pool (filled by the pool users)."""

    cloud: str
    prices: PriceBook
    a: dict[str, float | None]
    used: _Sources
    pools: dict[str, tuple[Resource, PoolShape]] = field(default_factory=dict)
    pool_users: dict[str, list[str]] = field(default_factory=dict)

    def price_cluster(self, shape: ClusterShape) -> dict[str, Any]:
        """One cluster definition's cost entry (`_Unpriced` when it cannot be priced)."""
        return _price_cluster(shape, cloud=self.cloud, prices=self.prices, pools=self.pools, a=self.a,
                              used=self.used)

    def note_pool_users(self, shapes: list[ClusterShape], role: str | None) -> None:
        for shape in shapes:
            for pool_id in {shape.instance_pool_id, shape.driver_instance_pool_id} - {None}:
                self.pool_users.setdefault(str(pool_id), []).append(str(role))


def _node_price(prices: PriceBook, node_type_id: str, used: _Sources, *, need_dbu: bool = True
                ) -> tuple[float, float]:
    node = prices.node(node_type_id)
    if node is None:
        raise _Unpriced(f"node type {node_type_id!r} is not in the node catalogs "
                        f"(dbx_ai_infra/gpucatalog/node_types.yaml, "
                        f"dbx_ai_infra/gpucatalog/cpu_node_types.json) and has no price override; add node_types: "
                        f"{{{node_type_id}: {{usd_per_hour_on_demand: ..., dbu_per_hour: ...}}}} to a --prices file")
    vm_fig, dbu_fig = PriceBook.node_figures(node_type_id)
    if node.usd_per_hour_on_demand is None:
        where = f" ({node.vm_source}: dbx_ai_infra/pricing/vm_prices.json, never another region's)" \
            if str(node.vm_source).startswith("no ") else ""
        raise _Unpriced(f"node type {node_type_id!r} has no on-demand VM price{where}; set node_types."
                        f"{node_type_id}.usd_per_hour_on_demand in a --prices file")
    used.use(vm_fig)
    if not need_dbu:
        return node.usd_per_hour_on_demand, 0.0
    if node.dbu_per_hour is None:
        raise _Unpriced(f"node type {node_type_id!r} has no DBU/hour rate; set node_types.{node_type_id}."
                        f"dbu_per_hour in a --prices file")
    used.use(dbu_fig)
    return node.usd_per_hour_on_demand, node.dbu_per_hour


# --------------------------------------------------------------------------------------------------------------------
# Clusters
# --------------------------------------------------------------------------------------------------------------------

class _ClusterPricer:
    """Hourly costs of one cluster by node position (driver = node 1, worker j = node j + 1)."""

    def __init__(self, driver_od: float, driver_spot: float, worker_od: float, worker_spot: float,
                 spot: bool, first_on_demand: float) -> None:
        self.driver_od, self.driver_spot = driver_od, driver_spot
        self.worker_od, self.worker_spot = worker_od, worker_spot
        self.spot, self.first_on_demand = spot, first_on_demand

    def is_on_demand(self, position: int) -> bool:
        return not self.spot or position <= self.first_on_demand

    def driver(self, all_on_demand: bool = False) -> float:
        return self.driver_od if all_on_demand or self.is_on_demand(1) else self.driver_spot

    def _on_demand_positions(self) -> int:
        """How many node positions (the driver first) are on-demand under spot: 1..first_on_demand."""
        return max(0, math.floor(self.first_on_demand))

    def workers(self, start: int, count: float, all_on_demand: bool = False) -> float:
        """Cost per hour of ``count`` workers (possibly fractional) numbered from ``start``: worker ``j`` is node
        position ``j + 1``, on-demand up to ``first_on_demand``, the rest spot. Closed form: the time does not grow
        with the count (a plan may say 10^12 workers)."""
        if count <= 0:
            return 0.0
        if all_on_demand or not self.spot:
            return count * self.worker_od
        on_demand = min(count, max(0, self._on_demand_positions() - start))
        return on_demand * self.worker_od + (count - on_demand) * self.worker_spot

    def size(self, n_workers: int, all_on_demand: bool = False) -> float:
        return self.driver(all_on_demand) + self.workers(1, n_workers, all_on_demand)

    def spot_nodes(self, n_workers: int) -> int:
        nodes = n_workers + 1
        return 0 if not self.spot else nodes - min(nodes, self._on_demand_positions())


def _node_source(shape: ClusterShape, driver: bool, pools: Mapping[str, tuple[Resource, PoolShape]]
                 ) -> tuple[str, str | None]:
    """(node type id, pool name or None) of the driver or the workers."""
    pool_id = shape.driver_instance_pool_id if driver else shape.instance_pool_id
    if pool_id:
        found = pools.get(pool_id)
        if found is None:
            raise _Unpriced(f"instance pool {pool_id!r} is not an InstancePool resource of this plan, so its node "
                            f"type is unknown")
        resource, pool = found
        if not pool.node_type_id:
            raise _Unpriced(f"instance pool {resource.name!r} has no nodeTypeId")
        return pool.node_type_id, resource.name
    node_type = shape.driver_node_type if driver else shape.node_type_id
    if not node_type:
        raise _Unpriced("the cluster has neither nodeTypeId nor instancePoolId")
    return node_type, None


#: The most workers the cost model prices on one cluster: far above what a workspace runs, so a plan that says more
#: (10^12) holds a mistake; it is unpriced, saying so, rather than priced at a figure no bill could show.
MAX_WORKERS_PRICED = 100_000


def _nodes_of(shape: ClusterShape) -> dict[str, int]:
    lo, hi = int(shape.min_workers), int(shape.max_workers)
    return {"min": 1 + lo, "max": 1 + hi}


def _rate(shape: ClusterShape, prices: PriceBook, cloud: str) -> float:
    """The cluster's $/DBU; unknown leaves it unpriced."""
    rate = prices.usd_per_dbu(cloud, shape.compute_kind)
    if rate is None:
        raise _Unpriced(f"no {shape.compute_kind} $/DBU rate for {cloud} at tier {prices.tier!r}; use another tier "
                        f"or set usd_per_dbu.{cloud}.{shape.compute_kind} in a --prices file")
    return rate


def month_unknown_reason(shape: ClusterShape) -> str:
    """Why a cluster priced by the hour has no month: its role, hence its usage hours, is unknown (issue 51)."""
    why = f" ({shape.role_basis})" if shape.role_basis else ""
    return (f"{MONTH_UNKNOWN}: no workload_type tag (training | inference | interactive) and its shape does not tell "
            f"the role{why}, so no usage assumption says how long it runs; its $/hour is priced, its month is left "
            f"out of the monthly totals. Fix: tag it (custom_tags / customTags) workload_type = training, inference "
            f"or interactive")


def _burst(shape: ClusterShape, a: Mapping[str, float | None], lo: int, hi: int, hours: float
           ) -> tuple[float, float]:
    """An autoscaled cluster's expected workers above its floor and the hours a month they run: half the headroom
    all month for training; for inference, the assumptions' burst (default half the headroom) for its burst hours.
    A fixed-size cluster has none."""
    headroom = hi - lo
    if headroom == 0:
        return 0.0, 0.0
    if shape.role != "inference":
        return headroom / 2, hours
    configured = assumption(a, "inference_burst_avg_extra_workers", shape.tags)[0]
    extra = headroom / 2 if configured is None else min(float(configured), float(headroom))
    return extra, min(float(assumption(a, "inference_burst_hours_per_month", shape.tags)[0] or 0.0), hours)


def _spot_bases(pricer: _ClusterPricer, hi: int, driver_spot_ok: bool, driver: tuple[str, str],
                workers: tuple[str, str], used: _Sources) -> list[str]:
    """What priced the cluster's spot nodes at its full size (the driver's factor when it is spot, the workers'), each
    figure recorded as used; [] when no node is spot."""
    if not pricer.spot or pricer.spot_nodes(hi) == 0:
        return []
    driver_is_spot = driver_spot_ok and not pricer.is_on_demand(1)
    workers_spot = pricer.spot_nodes(hi) > (1 if driver_is_spot else 0)
    bases = []
    for is_spot, (figure, basis) in ((driver_is_spot, driver), (workers_spot, workers)):
        if is_spot:
            used.use(figure)
            bases.append(basis)
    used.use("dbu_discount_on_spot")
    return bases


def _price_cluster(shape: ClusterShape, *, cloud: str, prices: PriceBook,
                   pools: Mapping[str, tuple[Resource, PoolShape]], a: Mapping[str, float | None], used: _Sources
                   ) -> dict[str, Any]:
    kind, role = shape.compute_kind, shape.role
    worker_type, worker_pool = _node_source(shape, False, pools)
    driver_type, driver_pool = _node_source(shape, True, pools)

    lo, hi = int(shape.min_workers), int(shape.max_workers)
    if hi > MAX_WORKERS_PRICED:
        raise _Unpriced(f"{hi:,} workers is more than any cluster holds (the cost model prices up to "
                        f"{MAX_WORKERS_PRICED:,}); check num_workers / autoscale.max_workers")
    availability = shape.availability_in(cloud)
    fod = float(shape.first_on_demand_in(cloud))
    if hi == 0:
        fod = max(fod, 1.0)
    pool_backed = worker_pool is not None
    spot = availability in SPOT_AVAILABILITIES and not pool_backed
    if availability not in SPOT_AVAILABILITIES | ON_DEMAND_AVAILABILITIES and not pool_backed:
        raise _Unpriced(f"unknown availability {availability!r} in {ATTRIBUTES_BLOCK[cloud]}")

    rate = _rate(shape, prices, cloud)

    w_vm, w_dbu = _node_price(prices, worker_type, used)
    d_vm, d_dbu = _node_price(prices, driver_type, used)
    used.use(prices.rate_figure(cloud, kind))
    w_factor, w_basis, w_figure = prices.node_spot(cloud, worker_type)
    d_factor, d_basis, d_figure = prices.node_spot(cloud, driver_type)
    driver_spot_ok = spot and driver_pool is None
    pricer = _ClusterPricer(
        driver_od=d_vm + d_dbu * rate,
        driver_spot=(d_vm * d_factor if driver_spot_ok else d_vm) + d_dbu * rate,
        worker_od=w_vm + w_dbu * rate,
        worker_spot=w_vm * w_factor + w_dbu * rate,
        spot=spot, first_on_demand=fod,
    )
    spot_bases = _spot_bases(pricer, hi, driver_spot_ok, (d_figure, d_basis), (w_figure, w_basis), used)

    # the DBU part alone (what the Databricks bill holds; the cloud bills the VMs): the same nodes, VM price 0
    dbus = _ClusterPricer(driver_od=d_dbu * rate, driver_spot=d_dbu * rate, worker_od=w_dbu * rate,
                          worker_spot=w_dbu * rate, spot=spot, first_on_demand=fod)
    head = {
        "node_type_id": worker_type,
        "driver_node_type_id": driver_type,
        "instance_pool": worker_pool or driver_pool,
        "compute_kind": kind,
        "workload_type": role,
        "availability": "ON_DEMAND (instance pool)" if pool_backed else availability,
        "first_on_demand": (int(fod) if fod.is_integer() else fod) if spot else None,
        "nodes": _nodes_of(shape),
        "spot_nodes": {"min": pricer.spot_nodes(lo), "max": pricer.spot_nodes(hi)},
        "hourly": pricer.size(lo),
        "hourly_max": pricer.size(hi),
        "dbu_hourly": dbus.size(lo),
        "spot_factor": w_factor if spot_bases else None,
        "spot_basis": "; ".join(dict.fromkeys(spot_bases)) or None,
    }
    return {**head, **_month(shape, a, pricer, dbus)}


def _month(shape: ClusterShape, a: Mapping[str, float | None], pricer: _ClusterPricer, dbus: _ClusterPricer
           ) -> dict[str, Any]:
    """A priced cluster's month: its role's usage hours times its hourly costs (the burst above its floor for an
    autoscaled one). A cluster whose role, hence its hours, is unknown keeps its $/hour; its month is unknown and
    named (``unpriced`` says why), never zero (issue 51, item 6)."""
    found_hours = _hours(shape, a)
    if found_hours is None:
        return {"hours_per_month": None, "hours_basis": None, "burst_hours_per_month": None,
                "extra_workers_expected": None, "monthly": {"min": None, "expected": None, "max": None},
                "all_on_demand_monthly_expected": None, "saving_monthly_expected": None,
                "dbu_monthly_expected": None, "unpriced": month_unknown_reason(shape)}
    lo, hi = int(shape.min_workers), int(shape.max_workers)
    hours, hours_basis = found_hours
    monthly_min, monthly_max = pricer.size(lo) * hours, pricer.size(hi) * hours
    extra, burst_hours = _burst(shape, a, lo, hi, hours)
    expected = monthly_min + pricer.workers(lo + 1, extra) * burst_hours
    od_expected = pricer.size(lo, True) * hours + pricer.workers(lo + 1, extra, True) * burst_hours
    return {
        "hours_per_month": hours,
        "hours_basis": hours_basis,
        "burst_hours_per_month": burst_hours,
        "extra_workers_expected": extra,
        "monthly": {"min": monthly_min, "expected": expected, "max": monthly_max},
        "all_on_demand_monthly_expected": od_expected,
        "saving_monthly_expected": od_expected - expected,
        "dbu_monthly_expected": dbus.size(lo) * hours + dbus.workers(lo + 1, extra) * burst_hours,
        "unpriced": None,
    }


_MONEY_KEYS = ("hourly", "hourly_max", "all_on_demand_monthly_expected", "saving_monthly_expected")


def _unpriced_entry(base: dict[str, Any], reason: str) -> dict[str, Any]:
    base.update({k: None for k in _MONEY_KEYS})
    base["monthly"] = {"min": None, "expected": None, "max": None}
    base["unpriced"] = reason
    return base


def _entry_head(resource: Resource) -> dict[str, Any]:
    return {"name": resource.name, "type": resource.type}


def _serving_rate(catalog: ServingCatalog, cloud: str, workload_type: str, prices: PriceBook
                  ) -> tuple[float, dict[str, Any]]:
    """One replica's serving DBU/h and the figure it comes from: the stack's (or --prices') override first, then the
    catalog's GPU type (per replica) or CPU type (per unit of concurrency, times the concurrency one replica
    carries). Raises `_Unpriced`."""
    override = prices.serving_override(cloud, workload_type)
    if override is not None:  # the stack's (or --prices') own rate wins
        return override[0], {"value": override[0], "source": override[1], "date": None, "estimate": False}
    gpu, cpu = catalog.get(cloud, workload_type), catalog.cpu_type(cloud, workload_type)
    if gpu is None and cpu is None:
        raise _Unpriced(f"{workload_type} is not a Model Serving workload type on {cloud}")
    if gpu is not None and gpu.dbu_per_hour is not None:
        return gpu.dbu_per_hour, {"value": gpu.dbu_per_hour, "source": gpu.source, "date": gpu.date,
                                  "estimate": gpu.doubt is not None}
    if cpu is not None and cpu.dbu_per_concurrency_hour is not None:
        per_replica = cpu.dbu_per_concurrency_hour * catalog.concurrency_per_replica
        return per_replica, {"value": per_replica, "source": f"{cpu.source}: {cpu.dbu_per_concurrency_hour:g} DBU/h "
                             f"per unit of concurrency x {catalog.concurrency_per_replica}", "date": cpu.date,
                             "estimate": cpu.doubt is not None}
    raise _Unpriced(f"no public serving DBU rate for {workload_type} on {cloud} (price it with "
                    f"pricing.serving_dbu_per_hour.{cloud}.{workload_type})")


def serving_cost(cloud: str, workload_type: str, min_concurrency: int, max_concurrency: int, scale_to_zero: bool,
                 hours: float, launches: float, prices: PriceBook, used: _Sources | None = None
                 ) -> dict[str, Any]:
    """The money of a serving endpoint (or of a hypothetical one, for the cluster-vs-endpoint comparison):
    ``hourly`` (the base replicas), ``hourly_max``, ``monthly`` min/expected/max. Raises `_Unpriced`."""
    catalog = load_serving_catalog()
    dbu_per_hour, figure = _serving_rate(catalog, cloud, workload_type, prices)
    usd_per_dbu = prices.usd_per_dbu(cloud, MODEL_SERVING)
    if usd_per_dbu is None:
        raise _Unpriced(f"no model-serving $/DBU for {cloud} ({prices.tier})")
    if used is not None:
        used.use(f"serving.{cloud}.{workload_type}.dbu_per_hour", figure)
        used.use(prices.rate_figure(cloud, MODEL_SERVING))
    replica = dbu_per_hour * usd_per_dbu
    base = catalog.replicas(min_concurrency) if min_concurrency > 0 else (0 if scale_to_zero else 1)
    busy = max(base, 1)  # a scale-to-zero endpoint serves on at least one replica while it is up
    top = catalog.replicas(max_concurrency)
    launch = catalog.launch_usd.value * launches if scale_to_zero else 0.0
    if scale_to_zero and used is not None:
        used.use("serving.launch_usd", {"value": catalog.launch_usd.value, "source": catalog.launch_usd.source,
                                        "date": catalog.launch_usd.date, "estimate": False})
    return {"hourly": busy * replica, "hourly_max": top * replica, "replicas": (base, top),
            "monthly": {"min": busy * replica * hours + launch, "expected": busy * replica * hours + launch,
                        "max": top * replica * hours + launch}}


def on_demand_node_hourly(prices: PriceBook, cloud: str, node_type_id: str) -> float | None:
    """One node's on-demand $/h on an all-purpose cluster (VM + DBU/h x $/DBU), or None when unpriced."""
    try:
        vm, dbu = _node_price(prices, node_type_id, _Sources(prices))
    except _Unpriced:
        return None
    usd_per_dbu = prices.usd_per_dbu(cloud, ALL_PURPOSE)
    return None if usd_per_dbu is None else vm + dbu * usd_per_dbu


def endpoint_monthly(cloud: str, workload_type: str, concurrency: int, hours: float, prices: PriceBook
                     ) -> float | None:
    """The monthly expected cost of a hypothetical endpoint warm for ``hours`` (no scale to zero), or None."""
    try:
        money = serving_cost(cloud, workload_type, concurrency, concurrency, False, hours, 0.0, prices)
    except _Unpriced:
        return None
    return float(money["monthly"]["expected"])
