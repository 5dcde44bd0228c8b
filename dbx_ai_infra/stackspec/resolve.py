"""Rules that need the node catalog: the node type of each workload, from its model or its pin."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dbx_ai_infra.dbxtypes.errors import InputError, Problem
from dbx_ai_infra.dbxtypes.pip import pip_project
from dbx_ai_infra.dbxtypes.sdk_types import enum_values
from dbx_ai_infra.dbxtypes.vocabulary import PROJECT, is_application_id
from dbx_ai_infra.gpucatalog import (
    Catalog,
    Estimate,
    NodeChoice,
    NodeType,
    SizingError,
    choose_node,
    choose_sharded_node,
    estimate,
    load_catalog,
)
from dbx_ai_infra.gpucatalog.accelerators import SERVERLESS_GPU_CLOUDS, SERVERLESS_GPU_DOCS, Accelerator, accelerator
from dbx_ai_infra.gpucatalog.runtime_libraries import resolve_libraries
from dbx_ai_infra.gpucatalog.serving import (
    SDK_ENUM,
    ServingSizingError,
    ServingType,
    choose_serving_type,
    load_serving_catalog,
    sdk_knows,
)
from dbx_ai_infra.gpucatalog.sizing import SHARDING_OVERHEAD

from .models import ClusterWorkloadSpec, InferenceSpec, NamedWorkload, SectionSpec, StackSpec, TrainingSpec


@dataclass(frozen=True)
class Workload:
    """A workload's resolved node: the node type, the GPU memory need that chose it and the arithmetic behind both
    (``estimate``: the formula; ``choice``: the next smaller node that did not fit, and any sharding). ``role`` is its
    role's section (training | inference | dev), ``name`` its name, ``key`` where the stack states it."""

    role: str
    node: NodeType
    need_gb: float | None
    estimate: Estimate | None = None
    choice: NodeChoice | None = None
    pinned: bool = False
    #: A CPU driver node (``driver: cpu``); None: the driver is a GPU node of the workers' type.
    driver: NodeType | None = None
    name: str = ""
    key: str = ""

    @property
    def spreads_model(self) -> bool:
        """Whether the sizing spreads the model over several GPUs (a node's, or every worker's): a replica per GPU
        would not fit, so the project's train.py shards it (``--sharding fsdp``)."""
        return self.choice is not None and self.choice.sharded is not None

    def sizing(self) -> dict[str, object]:
        """The sizing line of the plan (``Plan.sizing``): the formula, the node and the next smaller one."""
        node, smaller = self.node, self.choice.next_smaller if self.choice else None
        return _sizing_line(
            self.name or self.role, self.estimate, self.need_gb, node.node_type_id, node.gpu, node.gpu_count,
            node.total_gpu_memory_gb, pinned=self.pinned,
            sharded=self.choice.sharded if self.choice else None,
            driver=self.driver.node_type_id if self.driver else None,
            smaller=None if smaller is None else (smaller.node_type_id, smaller.total_gpu_memory_gb),
            section=self.role)


def _sizing_line(workload: str, est: Estimate | None, need_gb: float | None, node_type_id: str, gpu: str,
                 gpu_count: int, gpu_memory_gb: float, *, pinned: bool, sharded: str | None, driver: str | None,
                 smaller: tuple[str, float] | None, section: str | None = None,
                 passed_over: str | None = None) -> dict[str, object]:
    """A sizing line (``SizingLine``) of a cluster workload or an endpoint (its workload type in the node's place)."""
    return {
        "workload": workload, "section": section,
        "rule": est.rule if est else "no model given: the family's smallest node",
        "formula": est.formula if est else None,
        "need_gb": need_gb, "node_type_id": node_type_id, "gpu": gpu, "gpu_count": gpu_count,
        "gpu_memory_gb": gpu_memory_gb, "sharded": sharded, "pinned": pinned, "driver_node_type_id": driver,
        "next_smaller": None if smaller is None else {"node_type_id": smaller[0], "gpu_memory_gb": smaller[1],
                                                      "passed_over": passed_over},
    }


@dataclass(frozen=True)
class Endpoint:
    """A serving endpoint's resolved GPU workload type and the need that chose it."""

    name: str
    serving_type: ServingType
    need_gb: float
    estimate: Estimate
    pinned: bool
    next_smaller: ServingType | None

    def sizing(self) -> dict[str, object]:
        """The sizing line of the plan, the workload type in place of a node type."""
        t, smaller = self.serving_type, self.next_smaller
        passed_over = None
        if smaller is not None and smaller.gpu_memory_gb >= self.need_gb and not sdk_knows(smaller.workload_type):
            passed_over = ("databricks-sdk's ServingModelWorkloadType does not list it, so sizing does not pick it "
                           "(pin it with workload_type to try it)")
        return _sizing_line(f"serving {self.name}", self.estimate, self.need_gb, t.workload_type, t.gpu,
                            t.gpu_count, t.gpu_memory_gb, pinned=self.pinned, sharded=None, driver=None,
                            smaller=None if smaller is None else (smaller.workload_type, smaller.gpu_memory_gb),
                            passed_over=passed_over)


@dataclass(frozen=True)
class ServerlessWorkload:
    """A training workload on serverless GPU (``compute: serverless_gpu``): its accelerator, GPU count and the
    memory need checked against the accelerator's GPUs (no node type, cluster, policy or pool)."""

    name: str
    key: str
    accelerator: Accelerator
    gpus: int
    #: One node's GPU memory need, GB (the model's estimate, or its measured need; a sharded need's share of a node);
    #: None without a model estimate.
    need_gb: float | None
    estimate: Estimate | None
    #: One GPU's memory, GB (from the node catalog); None when unknown (the fit is then not judged).
    gpu_memory_gb: float | None
    sharded: str | None = None

    @property
    def nodes(self) -> int:
        return self.gpus // self.accelerator.gpus_per_node

    @property
    def spreads_model(self) -> bool:
        """Whether the model is spread over GPUs: sharded by the stack, or a node's need above one GPU's memory (a
        replica per GPU would not fit), so the project's train.py shards it (``--sharding fsdp``)."""
        one_gpu = self.gpu_memory_gb
        return self.sharded is not None or (self.need_gb is not None and one_gpu is not None and self.need_gb > one_gpu)

    def sizing(self) -> dict[str, object]:
        """The sizing line: the accelerator in the node's place, its GPUs per node and their memory."""
        acc = self.accelerator
        return _sizing_line(self.name, self.estimate, self.need_gb, acc.name, acc.gpu, acc.gpus_per_node,
                            (self.gpu_memory_gb or 0.0) * acc.gpus_per_node,
                            pinned=True, sharded=self.sharded, driver=None, smaller=None, section="training")


@dataclass(frozen=True)
class ResolvedStack:
    spec: StackSpec
    source: str
    workloads: dict[str, Workload] = field(default_factory=dict)
    endpoints: dict[str, Endpoint] = field(default_factory=dict)
    #: The policy limits the spec was validated against (`dbx_ai_infra.policies.registry.PolicyConfig.limits`: a
    #: mandatory policy's threshold, infinite for an advisory or disabled one); empty: the defaults.
    limits: Mapping[str, Any] = field(default_factory=dict)
    #: What the stack may do but should hear about (a pinned serving type databricks-sdk does not list).
    warnings: list[str] = field(default_factory=list)
    #: The training workloads on serverless GPU, by name (they have no node: not in ``workloads``).
    serverless: dict[str, ServerlessWorkload] = field(default_factory=dict)
    #: Each workload's libraries as installed, by name: a bare name in the stack takes the runtime's pin
    #: (`workload_libraries`).
    libraries: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _estimate(section: SectionSpec, role: str) -> Estimate | None:
    model = section.model
    if model is None:
        return None
    workload = "training" if role == "training" else "inference"
    return estimate(model.params_billions, model.precision, workload, model.method)


def _measured(need_gb: float, model: Estimate | None) -> Estimate:
    """A measured need (``memory_need_gb``) as the sizing line shows it, the model's estimate beside it."""
    beside = f" (the model's estimate: {model.need_gb:g} GB)" if model is not None else ""
    return Estimate(need_gb=need_gb, formula=f"measured {need_gb:g} GB{beside}",
                    rule="memory_need_gb: a measured need, overriding the model's estimate")


def _sharding(section: SectionSpec) -> str:
    """How the section's model is sharded across nodes (``none`` without a model)."""
    return section.model.sharding if section.model is not None else "none"


def _family_problem(spec: StackSpec, named: NamedWorkload, catalog: Catalog) -> Problem | None:
    """The workload's GPU family (its own, else the stack's) when the catalog has no node type of it on the cloud."""
    section = named.spec
    family = section.gpu_family or spec.gpu_family
    if family in catalog.families(spec.cloud):
        return None
    where = f"{named.key}.gpu_family" if section.gpu_family else "gpu_family"
    return Problem(f"{PROJECT}:{where}", f"GPU family {family!r} has no Databricks node type on {spec.cloud}.",
                   f"use one of: {', '.join(catalog.families(spec.cloud))}.")


def _need(section: SectionSpec, role: str) -> tuple[Estimate | None, float | None]:
    """The estimate that sizes the workload (a measured ``memory_need_gb`` overrides the model's) and its GB."""
    est = _estimate(section, role)
    if section.memory_need_gb is not None:  # measured: it overrides the model's estimate
        est = _measured(section.memory_need_gb, est)
    return est, est.need_gb if est else None


def _sharding_problem(section: SectionSpec, key: str) -> Problem | None:
    """A model sharded across nodes with a measured need, or outside training."""
    sharding = _sharding(section)
    if sharding == "none":
        return None
    if section.memory_need_gb is not None:
        return Problem(f"{PROJECT}:{key}.memory_need_gb", f"is set with model.sharding {sharding}: a measured need "
                       "is one node's, a sharded need is spread over every GPU.", "remove one of them.")
    if not isinstance(section, TrainingSpec):
        return Problem(f"{PROJECT}:{key}.model.sharding", f"is {sharding}, but sharding across nodes is for "
                       f"training.", "remove it (inference shards over one node's GPUs).")
    return None


def _choose(spec: StackSpec, catalog: Catalog, section: SectionSpec, role: str, need: float | None
            ) -> tuple[NodeChoice, float | None]:
    """The node for the need (`SizingError` when none fits) and what one node holds: a sharded training job's node
    holds its share with the overhead (its tag, which the GPU-memory-fit policy reads), any other the whole need."""
    family = section.gpu_family or spec.gpu_family
    sharding = _sharding(section)
    if isinstance(section, TrainingSpec) and sharding != "none":
        choice = choose_sharded_node(catalog, spec.cloud, family, need or 0.0, section.workers, sharding,
                                     pinned=section.node_type_id)
        return choice, round((need or 0.0) * SHARDING_OVERHEAD / section.workers, 2)
    return choose_node(catalog, spec.cloud, family, need or 0.0, pinned=section.node_type_id,
                       workload="training" if role == "training" else "inference"), need


def _cpu_driver(spec: StackSpec, catalog: Catalog, section: ClusterWorkloadSpec, key: str
                ) -> tuple[NodeType | None, Problem | None]:
    """The CPU driver node (``driver: cpu``): the pinned ``driver_node_type_id`` or the catalog's default."""
    driver = catalog.cpu_driver(spec.cloud, section.driver_node_type_id)
    if driver is not None:
        return driver, None
    offered = ", ".join(n.node_type_id for n in catalog.cpu_drivers if n.cloud == spec.cloud) or "none"
    return None, Problem(f"{PROJECT}:{key}.driver_node_type_id", f"{section.driver_node_type_id!r} is not a CPU "
                         f"driver node type of {spec.cloud} in the node catalog.", f"use one of: {offered}.")


def _driver(spec: StackSpec, catalog: Catalog, named: NamedWorkload, key: str
            ) -> tuple[NodeType | None, Problem | None]:
    """The workload's CPU driver node (None: a GPU driver of the workers' type), or the problem with its driver: a
    CPU driver on a workload whose workers come from an instance pool, which takes its driver from the pool
    (`driver_choice`)."""
    section = named.spec
    if not isinstance(section, ClusterWorkloadSpec):
        return None, None
    pool_key = spec.pool_key(named)
    if driver_choice(section, pool_key)[0] == "cpu":
        if pool_key is not None:
            field = "driver" if section.driver is not None else "driver_node_type_id"
            return None, Problem(f"{PROJECT}:{key}.{field}", f"asks for a CPU driver, but the workload's workers come "
                                 f"from an instance pool (instance_pools.{pool_key}), and a cluster on a pool takes "
                                 f"its driver from the pool: the provider sends no driver_node_type_id beside "
                                 f"instance_pool_id, so the driver would be a GPU node of the pool.",
                                 f"remove {key}.driver and {key}.driver_node_type_id (the driver comes from the "
                                 f"pool), or remove instance_pools.{pool_key} for a CPU driver beside workers of "
                                 f"their own node type.")
        return _cpu_driver(spec, catalog, section, key)
    if section.driver_node_type_id is not None:
        return None, Problem(f"{PROJECT}:{key}.driver_node_type_id", "is set but driver is gpu.",
                             "set driver: cpu, or remove driver_node_type_id.")
    return None, None


def _workload(spec: StackSpec, named: NamedWorkload, catalog: Catalog, problems: list[Problem]) -> Workload | None:
    """A (non-serverless) workload's node; None when a problem (added to ``problems``) stops it."""
    section, role, key = named.spec, named.section, named.key
    family = _family_problem(spec, named, catalog)
    if family is not None:
        if family not in problems:  # a stack-wide family is reported once, not per workload
            problems.append(family)
        return None
    est, need = _need(section, role)
    sharding = _sharding_problem(section, key)
    if sharding is not None:
        problems.append(sharding)
        return None
    try:
        choice, need = _choose(spec, catalog, section, role, need)
    except SizingError as exc:
        field_path = f"{PROJECT}:{key}.node_type_id" if section.node_type_id else f"{PROJECT}:{key}.model"
        problems.append(Problem(field_path, str(exc)))
        return None
    driver, driver_problem = _driver(spec, catalog, named, key)
    if driver_problem is not None:
        problems.append(driver_problem)
        return None
    return Workload(role, choice.node, need, est, choice, pinned=section.node_type_id is not None,
                    driver=driver, name=named.name, key=key)


def resolve(spec: StackSpec, source: str, catalog: Catalog | None = None,
            limits: Mapping[str, Any] | None = None) -> ResolvedStack:
    """Pick each workload's node type; every problem names its field."""
    catalog = catalog or load_catalog()
    problems: list[Problem] = []
    workloads: dict[str, Workload] = {}
    serverless: dict[str, ServerlessWorkload] = {}
    warnings: list[str] = []
    for name, named in spec.named_workloads().items():
        if isinstance(named.spec, TrainingSpec) and named.spec.serverless:
            found = _serverless(spec, named, catalog, problems, warnings)
            if found is not None:
                serverless[name] = found
            continue
        workload = _workload(spec, named, catalog, problems)
        if workload is not None:
            workloads[name] = workload
    warnings += catalog_location(spec) + storage_prerequisites(spec) + endpoint_identity(spec) + user_run_as(spec)
    warnings += always_on(spec, source) + compute_access(spec) + driver_notes(spec) + entry_point_notes(spec)
    warnings += multi_node_notes(serverless)
    libraries = workload_libraries(spec, problems, warnings)
    endpoints = _endpoints(spec, problems, warnings)
    if problems:
        raise InputError(source, problems)
    return ResolvedStack(spec, source, workloads, endpoints, dict(limits or {}), warnings, serverless, libraries)


def catalog_location(spec: StackSpec) -> list[str]:
    """A catalog the stack creates with no managed location of its own, as the preview says it."""
    uc = spec.unity_catalog
    if uc.storage_root is not None or uc.existing_catalog:
        return []
    return [f"{PROJECT}:unity_catalog: neither storage_root nor existing_catalog is set: a workspace whose metastore "
            "has no storage root (the default for workspaces enabled for Unity Catalog automatically) refuses to "
            f"create catalog {uc.catalog}, and everything under it. Fix: set storage_root to the catalog's managed "
            "location, or existing_catalog: true to use a catalog that exists."]


def workload_libraries(spec: StackSpec, problems: list[Problem], warnings: list[str]) -> dict[str, tuple[str, ...]]:
    """Each workload's libraries as its cluster (or serverless environment) installs them: a bare name takes the
    runtime's pin from the runtime library table (dbx_ai_infra/gpucatalog/runtime_libraries.yaml), a pin of the
    workload's own is kept and judged against the runtime: one its Python cannot install is a problem (pip refuses
    it), one that needs another torch is a note (`resolve_libraries`)."""
    out = {}
    for name, w in spec.named_workloads().items():
        serverless = isinstance(w.spec, TrainingSpec) and w.spec.serverless
        found = resolve_libraries(list(w.spec.libraries), None if serverless else spec.runtime)
        problems += [Problem(f"{PROJECT}:{w.key}.libraries", f"{lib}: {what}", fix)
                     for lib, what, fix in found.problems]
        warnings += [f"{PROJECT}:{w.key}.libraries: {note}" for note in found.notes]
        out[name] = tuple(found.libraries)
    return out


def _serverless(spec: StackSpec, named: NamedWorkload, catalog: Catalog, problems: list[Problem],
                warnings: list[str]) -> ServerlessWorkload | None:
    """A serverless GPU workload checked: a cloud Databricks offers it on, a GPU count of whole nodes, a model that
    fits the accelerator's GPUs (one node's for an unsharded model, every GPU's share for a sharded one)."""
    section, key = named.spec, named.key
    assert isinstance(section, TrainingSpec) and section.accelerator is not None and section.gpus is not None
    where = f"{PROJECT}:{key}"
    if spec.cloud not in SERVERLESS_GPU_CLOUDS:
        problems.append(Problem(f"{where}.compute", f"serverless GPU (the AI Runtime) is not offered on {spec.cloud}: "
                                f"{SERVERLESS_GPU_DOCS}.", f"use compute: classic (GPU job clusters) on {spec.cloud}, "
                                "or a workspace on AWS or Azure."))
        return None
    acc = accelerator(section.accelerator)
    assert acc is not None  # the spec checks the name against databricks-sdk's enum; a test holds the table to it
    if section.gpus % acc.gpus_per_node:
        whole = max(acc.gpus_per_node, section.gpus // acc.gpus_per_node * acc.gpus_per_node)
        problems.append(Problem(f"{where}.gpus", f"is {section.gpus}, not a multiple of the {acc.gpus_per_node} GPUs "
                                f"of one {acc.name} node: serverless GPU gives whole nodes.",
                                f"use a multiple of {acc.gpus_per_node} (e.g. {whole}, or "
                                f"{whole + acc.gpus_per_node})."))
        return None
    est = _estimate(section, "training")
    if section.memory_need_gb is not None:
        est = _measured(section.memory_need_gb, est)
    memory = acc.gpu_memory_gb(catalog)
    sharding = section.model.sharding
    need = est.need_gb if est else None
    if need is not None and sharding != "none":
        need = round(need * SHARDING_OVERHEAD / (section.gpus // acc.gpus_per_node), 2)  # one node's share
    if memory is None:
        warnings.append(f"{where}.accelerator: the GPU memory of {acc.name} ({acc.gpu}) is not in the node catalog, "
                        "so whether the model fits it is not judged.")
    elif need is not None and need > memory * acc.gpus_per_node:
        per = f"{memory * acc.gpus_per_node:g} GB ({acc.gpus_per_node} x {memory:g} GB)"
        sharded = f" sharded ({sharding}) over {section.gpus} GPUs" if sharding != "none" else ""
        problems.append(Problem(f"{where}.model", f"needs {need:g} GB a node{sharded}, more than one {acc.name} "
                                f"node holds: {per}.", "use a larger accelerator (GPU_8xH100), shard the model over "
                                "more GPUs (model.sharding: fsdp, and more gpus), or train with method: lora."))
        return None
    if spec.region is not None:
        warnings.append(f"{where}.compute: whether serverless GPU is offered in {spec.region} is not judged "
                        "(Databricks publishes no per-region list we could read); check the workspace's AI Runtime "
                        "page before deploying.")
    return ServerlessWorkload(named.name, key, acc, section.gpus, need, est, memory,
                              sharded=sharding if sharding != "none" else None)


def driver_choice(section: ClusterWorkloadSpec, pool_key: str | None = None) -> tuple[str, str | None]:
    """The driver a cluster workload gets (``cpu`` or ``gpu``) and, for a GPU driver the stack chose on a cluster
    with workers, why. Set, ``driver`` wins (``driver_node_type_id`` alone means a CPU driver). Unset: a CPU driver
    where the launcher we generate runs no rank on it: a training job on workers that runs the project's
    dbx_ai_infra/workloads/train.py, which starts its ranks on the workers (TorchDistributor, local_mode false) and only
    coordinates on the driver; a GPU driver elsewhere (issue 52 item 10: the GPU driver of prod's training job was
    $2,243 a month of GPUs that ran nothing). A workload on an instance pool (``pool_key``, its ``instance_pools``
    key) takes its driver from that pool, a GPU node: the provider sends neither node_type_id nor
    driver_node_type_id beside an instance_pool_id (terraform-provider-databricks, clusters
    ``ModifyRequestOnInstancePool``, applied to every job cluster by jobs/resource_job.go ``updateJobClusterSpec``),
    and the Clusters API takes the driver from ``instance_pool_id`` when no ``driver_instance_pool_id`` is given; a
    CPU driver would need a CPU pool of its own, which the stack does not make (a CPU driver asked for there is
    refused: `_driver`)."""
    if section.driver is not None:
        return section.driver, None
    if section.driver_node_type_id is not None:
        return "cpu", None
    if pool_key is not None:
        return "gpu", (f"its workers come from an instance pool (instance_pools.{pool_key}), and a cluster on a pool "
                       f"takes its driver from the pool (the provider sends no driver_node_type_id beside "
                       f"instance_pool_id): a CPU driver needs a CPU pool of its own, which the stack does not make")
    if not isinstance(section, TrainingSpec):
        return "gpu", ("the stack generates no launcher for an inference cluster: code people run on it (a notebook, "
                       "a model loaded on the driver) may use the driver's GPU")
    if section.job is None or section.makes_cluster:
        return "gpu", ("its all-purpose cluster runs code people bring, which may run a rank on the driver's GPU")
    if section.job.python_file is not None:
        return "gpu", (f"the job runs {section.job.python_file}, not the project's launcher: whether it runs a rank "
                       f"on the driver is not known")
    return "cpu", None  # num_workers is at least 1 on classic compute


def driver_notes(spec: StackSpec) -> list[str]:
    """The preview's word on each GPU driver the stack chose for a cluster with workers (driver_choice)."""
    out = []
    for w in spec.named_workloads().values():
        s = w.spec
        if isinstance(s, ClusterWorkloadSpec) and not (isinstance(s, TrainingSpec) and s.serverless):
            pool_key = spec.pool_key(w)
            kept, why = driver_choice(s, pool_key)
            if kept == "gpu" and why is not None:
                out.append(f"{PROJECT}:{w.key}: the driver is a GPU node: {why}. " + (
                    f"Set {w.key}.driver: gpu to say so." if pool_key is not None else
                    f"Set {w.key}.driver: cpu if it runs none, or driver: gpu to say it does."))
    return out


#: The precisions the project's train.py loads the weights in (``--dtype``); int8 and int4 it does not quantize.
TRAIN_DTYPES = ("bf16", "fp16", "fp32")


def train_arguments(section: TrainingSpec, sharded: bool) -> list[str]:
    """What the stack tells the project's dbx_ai_infra/workloads/train.py beyond the job's own parameters (each unless
    job.parameters says it already): the training method (``--method lora``: adapters through peft), the sharding
    the sizing implies (``--sharding fsdp``: FSDP2 where the model is spread over GPUs, else a replica per GPU) and
    the weights' precision (``--dtype``)."""
    given = {p.split("=", 1)[0] for p in (section.job.parameters if section.job else [])}
    wanted = {"--method": section.model.method if section.model.method != "full" else None,
              "--sharding": "fsdp" if sharded else None,
              "--dtype": section.model.precision if section.model.precision in TRAIN_DTYPES else None}
    return [arg for flag, value in wanted.items() if value is not None and flag not in given for arg in (flag, value)]


def multi_node_notes(serverless: Mapping[str, ServerlessWorkload]) -> list[str]:
    """A serverless GPU workload over more than one accelerator node, as the preview says it: the job's task on
    ``compute.hardware_accelerator`` runs on one node (pulumi-databricks 1.118 ``JobTaskComputeArgs``: "GPU_8xH100:
    8x H100 GPU configuration", no count), and the Serverless GPU Python API that train.py launches its ranks with
    runs them on the GPUs of that node (docs.databricks.com/aws/en/machine-learning/ai-runtime/distributed-training,
    read 2026-12-06: "multiple GPUs on a single node"). Databricks documents several nodes for a job only through the
    AI Runtime task (``ai_runtime_task``, ``deployments[].compute.accelerator_count``, the total GPUs over every node:
    databricks-sdk 0.167 ``jobs.ComputeSpec``; Public Preview, docs.databricks.com/aws/en/machine-learning/ai-runtime/
    productionizing-training-workloads), which the stack does not make yet: so train.py exits 2 on such a node."""
    return [f"{PROJECT}:{w.key}.gpus: {w.gpus} GPUs are {w.nodes} {w.accelerator.name} nodes, but the job's task on "
            f"compute.hardware_accelerator runs on one node of {w.accelerator.gpus_per_node}, and the project's "
            f"train.py refuses --gpus {w.gpus} there (exit 2): Databricks runs a job on several serverless GPU nodes "
            f"only as an AI Runtime task (ai_runtime_task with accelerator_count, Public Preview), which this stack "
            f"does not create yet. Fix: gpus: {w.accelerator.gpus_per_node} (one node), or compute: classic for more "
            f"GPUs." for w in serverless.values() if w.nodes > 1]


def entry_point_notes(spec: StackSpec) -> list[str]:
    """What the preview says of a job that runs the project's dbx_ai_infra/workloads/train.py: the model and the data
    it needs in job.parameters (without them it exits 2), and a workload sized for what it does not do: int8/int4
    weights (it loads bf16 and quantizes nothing: no QLoRA), DeepSpeed (it shards with FSDP2, the same full
    sharding). LoRA and sharding across GPUs it does (``train_arguments``)."""
    out = []
    for w in spec.named_workloads().values():
        s = w.spec
        if not isinstance(s, TrainingSpec) or s.job is None or s.job.python_file is not None:
            continue
        given = {p.split("=", 1)[0] for p in s.job.parameters}
        if missing := [f for f in ("--model", "--data") if f not in given]:
            out.append(f"{PROJECT}:{w.key}.job runs the project's train.py, which needs {' and '.join(missing)} in "
                       f"job.parameters (the model, a Hugging Face id or a directory; the data, a .txt file or "
                       f"directory on a Volume); without them the run exits 2.")
        if s.model.method == "lora" and not any(pip_project(lib) == "peft"
                                                for lib in s.libraries):
            out.append(f"{PROJECT}:{w.key}: the project's train.py trains LoRA with Hugging Face peft, which "
                       f"{w.key}.libraries does not list: add it (bare, peft: the runtime's pin; docs/training.md), "
                       f"unless the runtime ships it; without it the run fails (exit 1).")
        if s.model.precision not in TRAIN_DTYPES:
            out.append(f"{PROJECT}:{w.key}: the project's train.py loads the weights in bf16 and quantizes nothing "
                       f"(no QLoRA), but the workload is sized for {s.model.precision} weights: it will not fit. "
                       f"Set {w.key}.model.precision: bf16 (the sizer then picks the node), or {w.key}.job.python_file "
                       f"to an entry point of your own that quantizes (bitsandbytes).")
        if s.model.sharding == "deepspeed_zero3":
            out.append(f"{PROJECT}:{w.key}: model.sharding is deepspeed_zero3; the project's train.py shards with "
                       f"PyTorch FSDP2 instead (the same full sharding of weights, gradients and optimizer state).")
    return out


def always_on(spec: StackSpec, source: str) -> list[str]:
    """An inference cluster that never stops, as the preview says it: with its reason (``always_on``), or, where the
    stack says ``autotermination_minutes: 0`` without one (how a stack said "never stop" before issue 52, when 0
    was the default), read as before (up and priced for the whole month) and named with its fix: an advisory, so a
    stack that deployed yesterday still deploys; the reason is asked for, not enforced, until a later release."""
    out = []
    for w in spec.named_workloads().values():
        s = w.spec
        if not isinstance(s, InferenceSpec) or s.autotermination_minutes:
            continue
        if s.always_on:
            out.append(f"{PROJECT}:{w.key} is always on ({s.always_on_reason}): priced for the whole month.")
        else:
            out.append(f"{source}: {PROJECT}:{w.key}.autotermination_minutes is 0 without always_on: the cluster "
                       f"never stops and is priced for the whole month, with no reason given. Fix: say why with "
                       f"always_on: true and always_on_reason: <why> (and remove autotermination_minutes), or let it "
                       f"stop when idle (remove autotermination_minutes: the default is 60; or 10..120).")
    return out


def compute_access(spec: StackSpec) -> list[str]:
    """Who can use each all-purpose cluster, as the preview says it: one dedicated to a group
    (its folder: Databricks docs, "Dedicated group access": the group needs CAN MANAGE on a workspace folder,
    /Workspace/Groups/<group>, for notebooks and MLflow experiments); groups that may create clusters under a policy
    but cannot attach to the workload's own, dedicated to one user."""
    out = []
    for w in spec.named_workloads().values():
        s = w.spec
        if isinstance(s, TrainingSpec) and not s.makes_cluster:
            continue
        if s.dedicated_group:
            g = s.dedicated_group
            out.append(f"{PROJECT}:{w.key}: its cluster is dedicated to group {g}: give {g} CAN MANAGE on a folder "
                       f"/Workspace/Groups/{g} for its notebooks and MLflow experiments (on a group cluster a member "
                       f"has the group's permissions only).")
        elif groups := spec.users_of(w):
            out.append(f"{PROJECT}:{w.key}: {', '.join(groups)} may create clusters under its policy but cannot attach "
                       f"to its cluster, dedicated to {spec.identity_of(w)}; set {w.key}.dedicated_group to dedicate "
                       f"it to the group that uses it.")
    return out


def user_run_as(spec: StackSpec) -> list[str]:
    """A job whose run_as is a user can be created or changed only by that user or a workspace admin (Databricks docs,
    "Configure the run as identity of a job": a job's run_as may be set to oneself, to a service principal one holds
    the Service Principal User role on, or, by a workspace admin, to any user); a service principal has no such
    tie to whoever deploys."""
    out = []
    for w in spec.named_workloads().values():
        who = spec.identity_of(w)
        if isinstance(w.spec, TrainingSpec) and w.spec.job is not None and not is_application_id(who):
            out.append(f"{PROJECT}:{w.key}.job runs as the user {who}: only {who} or a workspace admin can deploy "
                       f"it (a job's run_as is oneself, a service principal one may use, or anyone for an admin). "
                       f"Prefer a service principal: set single_user_name to its application id.")
    return out


def endpoint_identity(spec: StackSpec) -> list[str]:
    """An endpoint runs as its creator, for good, and reads its model with that identity (Databricks docs, "Create
    custom model serving endpoints": EXECUTE on the model in Unity Catalog): the preview says who needs EXECUTE."""
    if spec.serving is None:
        return []
    out = []
    for name, e in spec.serving.endpoints.items():
        entity, _ = e.served_entity
        own = entity.split(".", 1)[0] == spec.unity_catalog.catalog and not spec.unity_catalog.existing_catalog
        who = spec.serving.deployer
        if who and own:
            out.append(f"serving endpoint {name} runs as its creator for good: the stack grants {who} "
                       f"(serving.deployer) EXECUTE on {entity}; deploy as {who}.")
        else:
            out.append(f"serving endpoint {name} runs as its creator for good: whoever runs `pulumi up` needs EXECUTE "
                       f"on {entity} (and USE_CATALOG, USE_SCHEMA on its parents)"
                       + (f", which the stack grants to serving.deployer only on models of its own catalog "
                          f"{spec.unity_catalog.catalog}" if not own else
                          "; name them in serving.deployer and the stack grants it") + ".")
    return out


def storage_prerequisites(spec: StackSpec) -> list[str]:
    """What the catalog's managed location needs before `pulumi up`, as the preview says it: a managed location lies
    under an external location (its storage credential reaching the path) on which the deployer holds CREATE MANAGED
    STORAGE, and the deployer needs CREATE CATALOG on the metastore (Databricks docs, "Specify a managed storage
    location in Unity Catalog" and "Create catalogs", read 2026-12)."""
    uc = spec.unity_catalog
    if uc.storage_root is None or uc.existing_catalog:
        return []
    where = f"{PROJECT}:unity_catalog.storage_root {uc.storage_root}"
    if uc.storage_credential is not None:
        return [f"{where}: the stack creates storage credential {uc.catalog}_credential and external location "
                f"{uc.catalog}_root over it (the deployer owns them, so holds CREATE MANAGED STORAGE); before `pulumi "
                f"up` the deployer needs CREATE STORAGE CREDENTIAL, CREATE EXTERNAL LOCATION and CREATE CATALOG on "
                f"the metastore (or to be a metastore admin), and the cloud identity access to the path."]
    if uc.external_location is not None:
        return [f"{where}: prerequisite: external location {uc.external_location} covers this path (with its storage "
                f"credential) and the deployer holds CREATE MANAGED STORAGE on it, and CREATE CATALOG on the "
                f"metastore."]
    return [f"{where}: prerequisite, neither created nor named: an external location covering this path (with a "
            f"storage credential), on which the deployer holds CREATE MANAGED STORAGE, and CREATE CATALOG on the "
            f"metastore; without it the catalog's create fails. Fix: set unity_catalog.storage_credential (the stack "
            f"creates both) or unity_catalog.external_location (the existing one's name)."]


def _endpoints(spec: StackSpec, problems: list[Problem], warnings: list[str]) -> dict[str, Endpoint]:
    """Each endpoint's GPU workload type: the smallest of the cloud that holds the model, or its checked pin."""
    if spec.serving is None:
        return {}
    serving = load_serving_catalog()
    out = {}
    for name, e in spec.serving.endpoints.items():
        if e.model is None:  # provisioned throughput: model units, no GPU workload type to size
            continue
        est = estimate(e.model.params_billions, e.model.precision, "inference")
        where = f"{PROJECT}:serving.endpoints.{name}." + ("workload_type" if e.workload_type else "model")
        try:
            chosen = choose_serving_type(serving, spec.cloud, est.need_gb, e.workload_type)
        except ServingSizingError as exc:
            problems.append(Problem(where, str(exc)))
            continue
        if e.workload_type is not None and not sdk_knows(e.workload_type):
            warnings.append(f"{where}: {e.workload_type} is not in databricks-sdk's ServingModelWorkloadType "
                            f"({', '.join(enum_values(SDK_ENUM))}): the workspace may refuse it; auto-sizing "
                            "picks only listed types.")
        smaller = [t for t in serving.of_cloud(spec.cloud) if t.gpu_memory_gb < chosen.gpu_memory_gb]
        out[name] = Endpoint(name, chosen, est.need_gb, est, e.workload_type is not None,
                             smaller[-1] if smaller else None)
    return out
