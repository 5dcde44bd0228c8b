"""GPU memory sizing: how much GPU memory a model needs, and which node type of a GPU family holds it.

Formulas (``P`` = parameters in billions, ``b`` = bytes per parameter of the precision, results in GB, rounded to
2 decimals). Two seeds give two training rules; each method uses the one that describes it:

* **inference**: ``P * b * 1.2``. The 1.2 (``INFERENCE_OVERHEAD``) covers the KV cache and framework overhead (seed
  001, "GPU instance choice": "7B FP16 inference needs about 7 x 2 x 1.2 = 16.8 GB").
* **training, method "lora"** (and QLoRA: LoRA on an ``int8``/``int4`` base): ``P * b * 4 / 3``. Seed 000 sizes
  training as parameters x bytes x 4 (weights, gradients, optimizer state, activations) and says LoRA brings that
  down to about a third, "so an A10G 24GB can handle it": 7B fp16 LoRA needs 7 x 2 x 4 / 3 = 18.67 GB, one A10G.
  LoRA trains a small adapter, so gradients and optimizer state shrink with it, which is why the seed scales the
  ``x 4`` rule and not the full fine-tune's 16 bytes.
* **training, method "full"**:

  - ``fp32`` / ``bf16`` / ``fp16``: ``P * 16`` (``TRAINING_BYTES_PER_PARAM_FULL``). Seed 001 gives "parameters x
    16 bytes or more" for a full fine-tune: Adam in mixed precision keeps 2-byte weights and gradients, fp32 master
    weights and two fp32 moments. It is larger than seed 000's ``P * b * 4`` (56 GB for 7B fp16), which the same
    seed calls a floor ("40 GB or more"); the project uses the larger, documented figure for full fine-tunes.
  - ``int8`` / ``int4``: ``P * b * 4``, seed 000's rule (the quantised weights plus what trains).

Bytes per parameter (``BYTES_PER_PARAM``): fp32 4, bf16 2, fp16 2, int8 1, int4 0.5.

Worked example: a 7B model served in fp16 needs ``7 * 2 * 1.2 = 16.8`` GB of GPU memory. A T4 (16 GB) is too
tight; an A10G (24 GB) fits, so on AWS :func:`pick_node_type` returns ``g5.xlarge``, the smallest a10g node type::

    >>> from dbx_ai_infra.gpucatalog import load_catalog, memory_need_gb, pick_node_type
    >>> memory_need_gb(7, "fp16", "inference")
    16.8
    >>> pick_node_type(load_catalog(), "aws", "a10g", 16.8).node_type_id
    'g5.xlarge'
    >>> memory_need_gb(7, "fp16", "training", "lora")
    18.67

**One GPU when one GPU fits.** :func:`choose_node` takes the smallest single-GPU node whose GPU holds the need; only
when no single GPU of the family does, it takes the smallest multi-GPU node whose *total* GPU memory holds it, and
says that the model is sharded across its GPUs (tensor parallelism for inference, FSDP or DeepSpeed for training).
A 70B model in bf16 (168 GB for inference) therefore lands on an 8 x A100 40GB ``p4d.24xlarge`` (320 GB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .catalog import CLOUDS, GPU_FAMILIES, Catalog, NodeType, _sort_key

__all__ = [
    "BYTES_PER_PARAM",
    "INFERENCE_OVERHEAD",
    "TRAINING_BYTES_PER_PARAM_FULL",
    "QUANTISED_TRAINING_FACTOR",
    "LORA_FRACTION",
    "WORKLOADS",
    "METHODS",
    "Estimate",
    "NodeChoice",
    "SizingError",
    "choose_node",
    "choose_sharded_node",
    "per_gpu_need_gb",
    "SHARDING_OVERHEAD",
    "estimate",
    "memory_need_gb",
    "pick_node_type",
]

BYTES_PER_PARAM: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0, "int4": 0.5}
INFERENCE_OVERHEAD = 1.2
# Full training in a float precision: weights + gradients + Adam state, about 16 bytes per parameter.
TRAINING_BYTES_PER_PARAM_FULL = 16.0
# Full training with quantised weights: bytes per parameter times 4 (the floor).
QUANTISED_TRAINING_FACTOR = 4.0
# LoRA (and QLoRA) needs about a third of parameters x bytes x 4 (seed 000).
LORA_FRACTION = 1.0 / 3.0
_FLOAT_PRECISIONS = frozenset({"fp32", "bf16", "fp16"})

WORKLOADS = ("inference", "training")
METHODS = ("full", "lora")

# How many of the family's node types an error message names.
_EXAMPLES = 4


@dataclass(frozen=True)
class Estimate:
    """A GPU memory need and the arithmetic behind it: ``formula`` ("7B x 2 B x 4 / 3 = 18.67 GB") and ``rule``."""

    need_gb: float
    formula: str
    rule: str


@dataclass(frozen=True)
class NodeChoice:
    """The node picked for a need: the node, the next smaller node of the family that did not fit (if any), and how
    the model is spread (``None`` on one GPU)."""

    node: NodeType
    next_smaller: NodeType | None
    sharded: str | None


class SizingError(ValueError):
    """A sizing request cannot be met. The message is a full sentence that says what was asked and how to fix it."""


def _gb(value: float) -> str:
    """Format GB for messages: 16.8, 168, 37.33."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text or "0"


def _node_memory(node: NodeType) -> str:
    return f"{_gb(node.total_gpu_memory_gb)} GB ({node.gpu_count} x {_gb(node.gpu_memory_gb)} GB {node.gpu})"


def memory_need_gb(params_billions: float, precision: str, workload: str, method: str = "full") -> float:
    """GPU memory (GB, 2 decimals) a model of ``params_billions`` needs in ``precision`` for ``workload``.

    ``workload`` is "inference" or "training"; ``method`` ("full" or "lora") applies to training only.
    See the module docstring for the formulas; `estimate` gives the arithmetic too.
    """
    return estimate(params_billions, precision, workload, method).need_gb


def _num(value: float) -> str:
    return f"{value:g}"


def estimate(params_billions: float, precision: str, workload: str, method: str = "full") -> Estimate:
    """The GPU memory need with the arithmetic behind it (see the module docstring)."""
    if isinstance(params_billions, bool) or not isinstance(params_billions, (int, float)) \
            or not math.isfinite(params_billions) or params_billions <= 0:
        raise SizingError(
            f"The model size must be a positive number of billions of parameters, got {params_billions!r}; "
            f"give it like 7 for a 7B model."
        )
    if precision not in BYTES_PER_PARAM:
        raise SizingError(
            f"Unknown precision {precision!r}; use one of {', '.join(BYTES_PER_PARAM)}."
        )
    if workload not in WORKLOADS:
        raise SizingError(
            f"Unknown workload {workload!r}; use 'inference' or 'training'."
        )
    if method not in METHODS:
        raise SizingError(
            f"Unknown training method {method!r}; use 'full' or 'lora'."
        )
    b = BYTES_PER_PARAM[precision]
    p = _num(params_billions)
    if workload == "inference":
        need = params_billions * b * INFERENCE_OVERHEAD
        formula = f"{p}B x {_num(b)} B x {_num(INFERENCE_OVERHEAD)}"
        rule = "inference: parameters x bytes x 1.2 (weights, KV cache, framework)"
    elif method == "lora":
        need = params_billions * b * QUANTISED_TRAINING_FACTOR * LORA_FRACTION
        formula = f"{p}B x {_num(b)} B x 4 / 3"
        rule = ("QLoRA" if precision not in _FLOAT_PRECISIONS else "LoRA") + \
            ": a third of parameters x bytes x 4 (seed 000)"
    elif precision in _FLOAT_PRECISIONS:
        need = params_billions * TRAINING_BYTES_PER_PARAM_FULL
        formula = f"{p}B x {_num(TRAINING_BYTES_PER_PARAM_FULL)} B"
        rule = "full fine-tune: parameters x 16 bytes (Adam, mixed precision; seed 001)"
    else:
        need = params_billions * b * QUANTISED_TRAINING_FACTOR
        formula = f"{p}B x {_num(b)} B x 4"
        rule = "full fine-tune, quantised: parameters x bytes x 4 (seed 000)"
    need = round(need, 2)
    return Estimate(need_gb=need, formula=f"{formula} = {_gb(need)} GB", rule=rule)


def _families_text(catalog: Catalog, cloud: str) -> str:
    families = catalog.families(cloud)
    return ", ".join(families) if families else "none"


def _examples(nodes: list[NodeType]) -> str:
    """A few of ``nodes`` that span the family's sizes: the smallest node of each distinct total GPU memory."""
    picked: list[NodeType] = []
    sizes: set[float] = set()
    for node in nodes:
        if node.total_gpu_memory_gb not in sizes:
            sizes.add(node.total_gpu_memory_gb)
            picked.append(node)
    picked = picked[:_EXAMPLES]
    return ", ".join(f"{n.node_type_id} ({_gb(n.total_gpu_memory_gb)} GB)" for n in picked)


def _first_fit(nodes: list[NodeType], need_gb: float) -> NodeType | None:
    for node in nodes:
        if node.total_gpu_memory_gb >= need_gb:
            return node
    return None


def _larger_families_hint(catalog: Catalog, cloud: str, family: str, need_gb: float) -> str:
    """Families on ``cloud`` with a node big enough for ``need_gb`` (or at least bigger than ``family``'s largest)."""
    own = catalog.family_nodes(cloud, family)
    own_max = own[-1].total_gpu_memory_gb if own else 0.0
    fitting: list[tuple[NodeType, str]] = []
    bigger: list[str] = []
    for other in catalog.families(cloud):
        if other == family:
            continue
        nodes = catalog.family_nodes(cloud, other)
        fit = _first_fit(nodes, need_gb)
        if fit is not None:
            fitting.append((fit, other))
        elif nodes and nodes[-1].total_gpu_memory_gb > own_max:
            bigger.append(other)
    if fitting:
        fitting.sort(key=lambda item: _sort_key(item[0]))
        shown = ", ".join(f"{other} ({fit.node_type_id}, {_gb(fit.total_gpu_memory_gb)} GB)"
                          for fit, other in fitting[:3])
        return f"a larger GPU family that fits on {cloud}, such as {shown}"
    if bigger:
        return (f"a larger GPU family on {cloud} ({', '.join(bigger)}) together with splitting the model across "
                f"nodes, since no single node type on {cloud} holds {_gb(need_gb)} GB")
    return f"splitting the model across several nodes, since no single node type on {cloud} holds {_gb(need_gb)} GB"


def _check_request(catalog: Catalog, cloud: str, family: str, need_gb: float) -> None:
    if cloud not in CLOUDS:
        raise SizingError(f"Unknown cloud {cloud!r}; use one of {', '.join(CLOUDS)}.")
    if family not in GPU_FAMILIES:
        raise SizingError(
            f"Unknown GPU family {family!r}; families on {cloud}: {_families_text(catalog, cloud)}. "
            f"Pick one of those."
        )
    if isinstance(need_gb, bool) or not isinstance(need_gb, (int, float)) \
            or not math.isfinite(need_gb) or need_gb < 0:
        raise SizingError(
            f"The GPU memory need must be a non-negative number of GB, got {need_gb!r}; "
            f"compute it with memory_need_gb()."
        )


def _family_missing_error(catalog: Catalog, cloud: str, family: str) -> SizingError:
    retired = catalog.family_nodes(cloud, family, include_retired=True)
    message = f"GPU family {family!r} has no Databricks node type on {cloud}"
    if retired:
        dates = sorted({n.retired_on for n in retired if n.retired_on})
        message += (
            f" that is still available (its node types there, {', '.join(n.node_type_id for n in retired)}, "
            f"were retired on {', '.join(dates)})"
        )
    message += f"; families on {cloud}: {_families_text(catalog, cloud)}. Pick one of those."
    return SizingError(message)


def _check_pinned(catalog: Catalog, cloud: str, family: str, need_gb: float, pinned: str) -> NodeType:
    node = catalog.get(pinned)
    family_nodes = catalog.family_nodes(cloud, family)

    if node is None:
        message = f"Pinned node type {pinned!r} is not a known Databricks GPU node type on {cloud}"
        other_cloud = catalog.cloud_of(pinned)
        if catalog.is_gpu_node(pinned) is False:
            message += f": it looks like a CPU node type of {other_cloud}."
        elif other_cloud is not None and other_cloud != cloud:
            message += f": its name looks like a {other_cloud} node type."
        else:
            message += "."
        if family_nodes:
            message += (f" GPU family {family!r} on {cloud} has, for example, {_examples(family_nodes)}. "
                        f"Pin one of those, or drop the pin to let the sizer choose.")
        else:
            message += (f" GPU family {family!r} has no Databricks node type on {cloud}; families on {cloud}: "
                        f"{_families_text(catalog, cloud)}. Pick one of those and pin one of its node types, "
                        f"or drop the pin.")
        raise SizingError(message)

    if node.cloud != cloud:
        suggestion = (f"Pin a node type of GPU family {family!r} on {cloud}, such as "
                      f"{family_nodes[0].node_type_id}, or drop the pin." if family_nodes
                      else f"Pick a GPU family offered on {cloud} ({_families_text(catalog, cloud)}) "
                           f"and pin one of its node types, or drop the pin.")
        raise SizingError(
            f"Pinned node type {pinned!r} belongs to {node.cloud}, not {cloud}, where the stack runs. {suggestion}"
        )

    if node.retired:
        suggestion = (f"Pin a current {family!r} node type such as {family_nodes[0].node_type_id}"
                      if family_nodes and node.family == family
                      else f"Pick a current GPU family on {cloud} ({_families_text(catalog, cloud)})")
        raise SizingError(
            f"Pinned node type {pinned!r} ({node.gpu}) was retired on {cloud} on {node.retired_on} and cannot be "
            f"used for new clusters. {suggestion}, or drop the pin."
        )

    if node.family != family:
        suggestion = (f"pin a {family!r} node type such as {family_nodes[0].node_type_id}" if family_nodes
                      else f"pick a GPU family offered on {cloud} ({_families_text(catalog, cloud)})")
        raise SizingError(
            f"Pinned node type {pinned!r} is in GPU family {node.family!r} ({node.gpu}), not {family!r}. "
            f"Set the GPU family to {node.family!r}, or {suggestion}."
        )

    if node.total_gpu_memory_gb < need_gb:
        bigger = _first_fit(family_nodes, need_gb)
        if bigger is not None:
            suggestion = (f"Pin a larger node such as {bigger.node_type_id} "
                          f"({_gb(bigger.total_gpu_memory_gb)} GB), or drop the pin to let the sizer choose.")
        else:
            suggestion = (f"No {family!r} node type on {cloud} is large enough: use a lower precision "
                          f"(e.g. int8 or int4), LoRA instead of full fine-tuning, or "
                          f"{_larger_families_hint(catalog, cloud, family, need_gb)}.")
        raise SizingError(
            f"Pinned node type {pinned!r} has {_node_memory(node)} of GPU memory, but the model needs "
            f"{_gb(need_gb)} GB. {suggestion}"
        )
    return node


def _sharding(node: NodeType, workload: str) -> str | None:
    if node.gpu_count == 1:
        return None
    how = "tensor parallel" if workload == "inference" else "FSDP or DeepSpeed"
    return f"sharded across {node.gpu_count} GPUs ({how})"


def choose_node(catalog: Catalog, cloud: str, family: str, need_gb: float, pinned: str | None = None,
                workload: str = "inference") -> NodeChoice:
    """The node for ``need_gb``: one GPU when one GPU of the family holds it, else the smallest multi-GPU node whose
    total GPU memory does; with the next smaller node that did not fit, and the sharding it implies.

    With ``pinned``, that node type is checked (cloud, retirement, family, memory) and returned. Raises
    `SizingError` with a message that names what was asked and how to fix it.
    """
    _check_request(catalog, cloud, family, need_gb)
    nodes = catalog.family_nodes(cloud, family)
    if pinned is not None:
        node = _check_pinned(catalog, cloud, family, need_gb, pinned)
    else:
        if not nodes:
            raise _family_missing_error(catalog, cloud, family)
        # Node types being retired (``deprecated``) only when no current one fits.
        current = [n for n in nodes if not n.deprecated]
        found = None
        for pool in (current, nodes):
            single = [n for n in pool if n.gpu_count == 1]
            found = _first_fit(single, need_gb) or _first_fit(pool, need_gb)
            if found is not None:
                break
        if found is None:
            largest = max(nodes, key=lambda n: n.total_gpu_memory_gb)
            across = (" For training, shard it over every GPU of the workers instead: model.sharding: fsdp (or "
                      "deepspeed_zero3), with enough num_workers." if workload == "training" else "")
            raise SizingError(
                f"The model needs {_gb(need_gb)} GB of GPU memory, but the largest {family!r} node type on {cloud}, "
                f"{largest.node_type_id}, has {_node_memory(largest)}. Use a lower precision (e.g. int8 or int4), "
                f"LoRA instead of full fine-tuning, or {_larger_families_hint(catalog, cloud, family, need_gb)}."
                + across
            )
        node = found
    smaller = [n for n in nodes if n.total_gpu_memory_gb < node.total_gpu_memory_gb]
    # family order is (total GPU memory, price): the first of the largest smaller total is the cheapest of them
    next_smaller = max(smaller, key=lambda n: n.total_gpu_memory_gb) if smaller else None
    return NodeChoice(node=node, next_smaller=next_smaller, sharded=_sharding(node, workload))


#: Sharding methods that split a training run's weights, gradients and optimizer state over every GPU of the cluster.
SHARDING_LABELS = {"fsdp": "FSDP (full sharding)", "deepspeed_zero3": "DeepSpeed ZeRO-3"}
#: What each GPU holds beyond its share when the state is sharded over every GPU: the activations of its own batch,
#: the gathered layer being computed and communication buffers. A stated project assumption (1.2: the same 20% the
#: inference rule adds for the KV cache and the framework), not a measured figure: the sizing line shows it.
SHARDING_OVERHEAD = 1.2


def per_gpu_need_gb(need_gb: float, gpus: int) -> float:
    """A GPU's share of a sharded training need: ``need x SHARDING_OVERHEAD / gpus``, rounded to 2 decimals."""
    return round(need_gb * SHARDING_OVERHEAD / gpus, 2)


def choose_sharded_node(catalog: Catalog, cloud: str, family: str, need_gb: float, workers: int, how: str,
                        pinned: str | None = None) -> NodeChoice:
    """The node for a training need sharded over every GPU of ``workers`` nodes (``how``: fsdp or deepspeed_zero3):
    the smallest node of the family (current ones first) whose GPU holds ``need x overhead / (workers x GPUs per
    node)``; the choice says the arithmetic. Raises `SizingError` naming what was asked and how to fix it."""
    _check_request(catalog, cloud, family, need_gb)
    nodes = catalog.family_nodes(cloud, family)
    if not nodes:
        raise _family_missing_error(catalog, cloud, family)

    def holds(node: NodeType) -> bool:
        return node.gpu_memory_gb >= per_gpu_need_gb(need_gb, workers * node.gpu_count)

    if pinned is not None:
        node = catalog.get(pinned)
        if node is None or node.cloud != cloud:
            raise SizingError(f"Pinned node type {pinned!r} is not a {cloud} node type in the node catalog; drop the "
                              f"pin to let the sizer choose.")
        if not holds(node):
            raise SizingError(f"Pinned node type {pinned!r} gives each GPU {node.gpu_memory_gb:g} GB, but "
                              f"{_gb(need_gb)} GB sharded over {workers} x {node.gpu_count} GPUs needs "
                              f"{_gb(per_gpu_need_gb(need_gb, workers * node.gpu_count))} GB per GPU. Add workers, "
                              f"pin a node with more or larger GPUs, or drop the pin.")
        found: NodeType | None = node
    else:
        current = [n for n in nodes if not n.deprecated]
        found = next((n for pool in (current, nodes) for n in pool if holds(n)), None)
    if found is None:
        largest = max(nodes, key=lambda n: (n.gpu_count * n.gpu_memory_gb, n.gpu_memory_gb))
        gpus = workers * largest.gpu_count
        raise SizingError(
            f"The model needs {_gb(need_gb)} GB for training; sharded over {workers} workers of the largest "
            f"{family!r} node type on {cloud}, {largest.node_type_id} ({gpus} GPUs), each GPU needs "
            f"{_gb(per_gpu_need_gb(need_gb, gpus))} GB, more than its {largest.gpu_memory_gb:g} GB. Add workers "
            f"(num_workers), use a larger GPU family, LoRA, or a lower precision.")
    gpus = workers * found.gpu_count
    smaller = [n for n in nodes if _sort_key(n) < _sort_key(found)]
    sharded = (f"{SHARDING_LABELS[how]} across {workers} workers x {found.gpu_count} GPUs = {gpus} GPUs: "
               f"{_gb(need_gb)} GB x {SHARDING_OVERHEAD:g} / {gpus} = {_gb(per_gpu_need_gb(need_gb, gpus))} GB per GPU "
               f"(of {found.gpu_memory_gb:g} GB)")
    return NodeChoice(node=found, next_smaller=smaller[-1] if smaller else None, sharded=sharded)


def pick_node_type(catalog: Catalog, cloud: str, family: str, need_gb: float, pinned: str | None = None) -> NodeType:
    """The node `choose_node` picks (one GPU when one GPU fits; else the smallest total GPU memory that holds the
    need); ``pinned`` is checked and returned."""
    return choose_node(catalog, cloud, family, need_gb, pinned).node
