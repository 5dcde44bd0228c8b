"""Training entry point for the TrainingCluster's job: fine-tunes a causal language model with plain PyTorch,
checkpoints on a Volume, resumes after a spot reclaim.

The job runs ``train.py --checkpoint-dir /Volumes/<catalog>/<schema>/<volume>/<run> --resume-from-latest
--model NAME --data PATH [--method lora] [--sharding fsdp] [--processes N | --gpus N] ...`` and retries the task when
a spot reclaim kills it. Each retry starts here again, finds the newest complete checkpoint (the trained weights,
the optimizer and the step) and goes on from the step after it. Checkpoints are written to a temporary name and
renamed, so a reclaim in the middle of a write never leaves a half-written checkpoint that looks complete.

- ``--model``: a Hugging Face model id or a directory with its weights (a ``/Volumes/...`` path), loaded with
  transformers' ``AutoModelForCausalLM`` and ``AutoTokenizer`` (both ship with the Databricks ML runtime) in
  ``--dtype`` (the stack's precision: bf16 unless it says fp16 or fp32).
- ``--data``: a text file, or a directory of ``.txt`` files, on a Volume: tokenized into blocks of ``--seq-len``.
- ``--method``: ``full`` trains every weight; ``lora`` trains low-rank adapters only (Hugging Face peft's
  ``LoraConfig``/``get_peft_model``: rank ``--lora-r``, scale ``--lora-alpha``, on ``--lora-targets``, by default
  every linear layer but the output head), the base weights frozen; its checkpoints hold the adapter alone.
- ``--sharding``: ``none`` keeps a whole replica per rank (DistributedDataParallel); ``fsdp`` shards the weights,
  gradients and optimizer state over every rank (PyTorch FSDP2, ``torch.distributed.fsdp.fully_shard``, one unit per
  decoder layer the model names in ``_no_split_modules``, then the whole model), for a model the stack's sizing
  shards across GPUs. Either way rank 0 alone writes the checkpoint, gathered whole
  (``torch.distributed.checkpoint.state_dict.get_state_dict``, full state dict), so a run may resume on another
  number of ranks.
- ``--processes N`` (classic job clusters): N ranks on the *workers*, started by pyspark's ``TorchDistributor`` with
  ``local_mode=False`` (each rank one GPU). The driver runs no rank, only this launcher, so a CPU driver is enough
  (the stack's default for a job that runs this file on workers: issue 52 item 10). 0 (the default on a single
  node): one process here, on this node's GPU.
- ``--gpus N`` (serverless GPU, the AI Runtime): N ranks on the GPUs of the accelerator node the task runs on,
  started by the Serverless GPU Python API's launcher (``serverless_gpu.distributed(gpus=N, remote=False)``,
  preinstalled in serverless GPU environment 5, the job's environment; ``databricks.air.distributed`` in 6 and later).
  A job task on ``compute.hardware_accelerator`` gets one node, so N more than its GPUs exits 2 (Databricks'
  multi-node path is the AI Runtime task, ``ai_runtime_task`` with ``accelerator_count``: docs/training.md).

The process exits 0 when the run is done, 1 when training fails (the error on stderr: a failed run is retried by the
job from its last checkpoint), 2 when its arguments are wrong.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

try:  # on the Databricks ML runtime and in .venv-train (requirements-train.txt); the checkpoint functions need none
    import torch
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict, set_state_dict
except ImportError:
    torch = None

CHECKPOINT = re.compile(r"^step-(\d{9})\.ckpt$")
METHODS = ("full", "lora")
SHARDINGS = ("none", "fsdp")
DTYPES = ("bf16", "fp16", "fp32")
#: Where a checkpoint directory must be: a Unity Catalog Volume (never /dbfs or the driver's disk).
VOLUME_ROOT = "/Volumes/"


class TrainingFailed(RuntimeError):
    """The run cannot go on (a loss that is not finite, no data): exit 1, and the job's retry resumes."""


def checkpoint_path(directory: Path, step: int) -> Path:
    return directory / f"step-{step:09d}.ckpt"


def latest_checkpoint(directory: Path) -> tuple[int, Path] | None:
    """The newest complete checkpoint (temporary files never match)."""
    found = [(int(m.group(1)), p) for p in directory.glob("step-*.ckpt") if (m := CHECKPOINT.match(p.name))]
    return max(found) if found else None


def save_checkpoint(directory: Path, step: int, state: bytes, keep: int = 3) -> Path:
    """Write atomically (temporary file, fsync, rename), then keep only the newest ``keep`` checkpoints."""
    directory.mkdir(parents=True, exist_ok=True)
    final = checkpoint_path(directory, step)
    tmp = final.with_name(f".{final.name}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(state)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, final)
    for _, old in sorted((int(m.group(1)), p) for p in directory.glob("step-*.ckpt")
                         if (m := CHECKPOINT.match(p.name)))[:-keep]:
        old.unlink(missing_ok=True)
    return final


def run(checkpoint_dir: Path, total_steps: int, train_step: Callable[[bytes, int], bytes], *,
        resume: bool = True, every: int = 1, initial: bytes = b"") -> bytes:
    """Train to ``total_steps`` with a step over bytes, checkpointing every ``every`` steps; resume from the newest
    checkpoint (the loop ``fit`` follows, for a state that is not a PyTorch model)."""
    state, start = initial, 0
    if resume and (latest := latest_checkpoint(checkpoint_dir)) is not None:
        start, path = latest[0] + 1, latest[1]
        state = path.read_bytes()
    for step in range(start, total_steps):
        state = train_step(state, step)
        if (step + 1) % every == 0 or step == total_steps - 1:
            save_checkpoint(checkpoint_dir, step, state)
    return state


# --- PyTorch ------------------------------------------------------------------------------------------------------

def read_texts(path: Path) -> list[str]:
    """The training texts: one file, or every ``.txt`` file of a directory in name order."""
    files = sorted(path.glob("*.txt")) if path.is_dir() else [path]
    texts = [f.read_text(encoding="utf-8") for f in files]
    if not any(t.strip() for t in texts):
        raise TrainingFailed(f"{path}: no training text (a .txt file, or a directory of them)")
    return texts


def token_blocks(ids: Sequence[int], seq_len: int) -> Any:
    """The token ids cut into whole blocks of ``seq_len`` (a LongTensor, one block a row)."""
    whole = len(ids) // seq_len
    if whole == 0:
        raise TrainingFailed(f"the data has {len(ids)} tokens, fewer than one block of --seq-len {seq_len}")
    return torch.tensor(list(ids[:whole * seq_len]), dtype=torch.long).view(whole, seq_len)


def batch_at(blocks: Any, step: int, batch_size: int, rank: int = 0, world: int = 1) -> Any:
    """The batch of ``step`` for ``rank``: the same blocks on every run, so a resumed run sees what it would have."""
    first = (step * world + rank) * batch_size
    rows = [(first + i) % blocks.shape[0] for i in range(batch_size)]
    return blocks[torch.tensor(rows)]


def _unwrap(model: Any) -> Any:
    return getattr(model, "module", model)  # DistributedDataParallel keeps the model as .module


#: The checkpoint's state: whole tensors (gathered from every rank's shard under FSDP), on the CPU, and only the
#: weights that train (a LoRA run's adapter; the frozen base is the model it loads again).
_FULL = {"full_state_dict": True, "cpu_offload": True, "ignore_frozen_params": True}


def _state(model: Any, optimizer: Any, step: int) -> bytes:
    """The checkpoint of ``step``. Under FSDP every rank must call this (the gather is collective); rank 0 writes."""
    weights, optim = get_state_dict(model, optimizer, options=StateDictOptions(**_FULL))
    buffer = io.BytesIO()
    torch.save({"model": weights, "optimizer": optim, "step": step}, buffer)
    return buffer.getvalue()


def _restore(model: Any, optimizer: Any, path: Path) -> int:
    """Load a checkpoint written by `_state` into ``model`` and ``optimizer`` (each rank its share); its step."""
    state = torch.load(io.BytesIO(path.read_bytes()), map_location="cpu", weights_only=True)
    frozen = any(not p.requires_grad for p in model.parameters())  # a LoRA checkpoint holds no frozen weight
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"],
                   options=StateDictOptions(full_state_dict=True, strict=not frozen))
    return int(state["step"])


def fit(model: Any, blocks: Any, checkpoint_dir: Path, *, steps: int, every: int = 50, lr: float = 1e-4,
        batch_size: int = 1, resume: bool = True, rank: int = 0, world: int = 1) -> float:
    """Train ``model`` (called as ``model(input_ids=..., labels=...)``, returning an object with ``.loss``, as a
    transformers causal LM does) on ``blocks`` to ``steps``, resuming from the newest checkpoint; every ``every``
    steps and at the end the ranks gather a checkpoint that rank 0 writes. Only the weights that require a gradient
    train (a LoRA model's adapter). Returns the last loss."""
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    start = 0
    if resume and (latest := latest_checkpoint(checkpoint_dir)) is not None:
        start = _restore(model, optimizer, latest[1]) + 1
    device = next(_unwrap(model).parameters()).device
    model.train()
    loss_value = float("nan")
    for step in range(start, steps):
        batch = batch_at(blocks, step, batch_size, rank, world).to(device)
        loss = model(input_ids=batch, labels=batch).loss
        if not torch.isfinite(loss):
            raise TrainingFailed(f"step {step}: the loss is {loss.item()}; lower --lr, or check the data")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        loss_value = float(loss.item())
        if (step + 1) % every == 0 or step == steps - 1:
            state = _state(model, optimizer, step)  # every rank: FSDP gathers the shards
            if rank == 0:
                save_checkpoint(checkpoint_dir, step, state)
    return loss_value


Loader = Callable[[str], tuple[Any, Callable[[str], Sequence[int]]]]


def load_pretrained(name: str, dtype: str = "bf16") -> tuple[Any, Callable[[str], Sequence[int]]]:
    """The model (in ``dtype``) and a text -> token ids function, from transformers (on the Databricks ML runtime)."""
    transformers = importlib.import_module("transformers")  # on the cluster only (the ML runtime)
    tokenizer = transformers.AutoTokenizer.from_pretrained(name)
    # torch_dtype: the name every transformers release of the ML runtimes takes (5.x reads it as `dtype`)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        name, torch_dtype={"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype])

    def encode(text: str) -> Sequence[int]:
        ids = list(tokenizer(text)["input_ids"])
        return ids + ([tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else [])
    return model, encode


def with_lora(model: Any, args: argparse.Namespace) -> Any:
    """The model with LoRA adapters on ``--lora-targets`` and every other weight frozen (Hugging Face peft: a
    ``PeftModel``, called as the model is)."""
    peft = importlib.import_module("peft")  # requirements-train.txt; on the cluster, the workload's libraries
    targets = args.lora_targets.split(",") if args.lora_targets != "all-linear" else "all-linear"
    config = peft.LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=0.0, target_modules=targets)
    return peft.get_peft_model(model, config)


def shard(model: Any) -> Any:
    """FSDP2: one unit per decoder layer (the classes a transformers model lists in ``_no_split_modules``, what
    accelerate's transformer-based wrap policy reads), then the whole model; in place."""
    fsdp = importlib.import_module("torch.distributed.fsdp")
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    layers = set(getattr(base, "_no_split_modules", None) or ())
    for module in list(model.modules()):
        if type(module).__name__ in layers:
            fsdp.fully_shard(module)
    return fsdp.fully_shard(model)


def wrap(model: Any, sharding: str, world: int) -> Any:
    """The model for ``world`` ranks: sharded (FSDP2) or replicated (DistributedDataParallel); as is alone."""
    if world == 1:
        return model
    if sharding == "fsdp":
        return shard(model)
    return torch.nn.parallel.DistributedDataParallel(model)


def train(args: argparse.Namespace, loader: Loader | None = None, rank: int = 0, world: int = 1) -> float:
    """One rank's run: load the model and the data, add LoRA adapters, wrap the model for several ranks, fit."""
    if torch is None:
        raise TrainingFailed("PyTorch is not installed: run on the Databricks ML runtime (or pip install -r "
                             "requirements-train.txt)")
    model, encode = loader(args.model) if loader else load_pretrained(args.model, args.dtype)
    ids = [i for text in read_texts(Path(args.data)) for i in encode(text)]
    blocks = token_blocks(ids, args.seq_len)
    if torch.cuda.is_available():
        local = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local)
        model = model.to(f"cuda:{local}")
    if args.method == "lora":
        model = with_lora(model, args)
    model = wrap(model, args.sharding, world)
    return fit(model, blocks, Path(args.checkpoint_dir), steps=args.steps, every=args.checkpoint_every, lr=args.lr,
               batch_size=args.batch_size, resume=args.resume_from_latest, rank=rank, world=world)


def rank_main(argv: list[str]) -> float:
    """A rank started by TorchDistributor on a worker, or by the serverless GPU launcher on the accelerator node
    (each sets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, as torchrun does)."""
    dist = torch.distributed

    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    try:
        loss = train(parse(argv), rank=dist.get_rank(), world=dist.get_world_size())
        # Every rank done (rank 0 writes the last checkpoint alone) before any tears the group down: a rank that left
        # while its peer still wrote ended in gloo's "terminate called without an active exception" (SIGABRT, about
        # one two-rank run in ten here), failing a run whose training had finished.
        dist.barrier()
        return loss
    finally:
        dist.destroy_process_group()


def launch(args: argparse.Namespace, argv: list[str], distributor: Any = None) -> Any:
    """Start ``args.processes`` ranks on the workers, none on the driver (TorchDistributor, local_mode False:
    pyspark.ml.torch.distributor, Apache Spark 3.4+, on the Databricks ML runtime)."""
    if distributor is None:
        distributor = importlib.import_module("pyspark.ml.torch.distributor").TorchDistributor  # on the cluster
    return distributor(num_processes=args.processes, local_mode=False, use_gpu=True).run(rank_main, argv)


def launch_serverless(args: argparse.Namespace, argv: list[str], distributed: Any = None,
                      local_gpus: int | None = None) -> Any:
    """Start ``args.gpus`` ranks on this serverless GPU node: the Serverless GPU Python API's ``@distributed``
    (docs.databricks.com/aws/en/machine-learning/ai-runtime/distributed-training, read 2026-12-06: DDP, FSDP and
    DeepSpeed on the GPUs of one node; ``remote=False`` runs here, spawning one torchrun-style process per GPU).
    Raises `UsageError` when the node has fewer GPUs than asked (a job task on compute.hardware_accelerator is one
    node)."""
    have = torch.cuda.device_count() if local_gpus is None else local_gpus
    if args.gpus > have:
        raise UsageError(f"--gpus {args.gpus} asks for more GPUs than this node has ({have}): a serverless GPU job "
                         f"task (compute.hardware_accelerator) runs on one node; use gpus: {have} in the stack, or the "
                         f"AI Runtime task (ai_runtime_task, accelerator_count) for several nodes")
    if distributed is None:
        distributed = importlib.import_module("serverless_gpu").distributed  # serverless GPU environment 5
    return distributed(gpus=args.gpus, remote=False)(rank_main).distributed(argv)


class UsageError(ValueError):
    """The arguments cannot run here: exit 2."""


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--checkpoint-dir", default=os.environ.get("CHECKPOINT_DIR"))
    parser.add_argument("--resume-from-latest", action="store_true")
    parser.add_argument("--model", help="a Hugging Face model id, or a directory with the weights")
    parser.add_argument("--data", help="a .txt file, or a directory of them, on a Volume")
    parser.add_argument("--dtype", choices=DTYPES, default="bf16", help="the weights' precision (default bf16)")
    parser.add_argument("--method", choices=METHODS, default="full", help="full (every weight) or lora (adapters)")
    parser.add_argument("--lora-r", type=int, default=16)
    parser.add_argument("--lora-alpha", type=int, default=32)
    parser.add_argument("--lora-targets", default="all-linear", help="comma-separated module names, or all-linear")
    parser.add_argument("--sharding", choices=SHARDINGS, default="none", help="none (DDP) or fsdp (FSDP2)")
    parser.add_argument("--processes", type=int, default=0, help="ranks on the workers (0: one process here)")
    parser.add_argument("--gpus", type=int, default=0, help="ranks on this serverless GPU node (0: one process)")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-4)
    args, _ = parser.parse_known_args(argv)
    return args


def _usage_error(args: argparse.Namespace) -> str | None:
    if args.checkpoint_dir is None or not str(args.checkpoint_dir).startswith(VOLUME_ROOT):
        return f"--checkpoint-dir (or CHECKPOINT_DIR) must be a {VOLUME_ROOT}... path"
    if not args.model or not args.data:
        return ("--model and --data name the model and the training data (the stack's training.job.parameters: "
                "[--model, <id or path>, --data, /Volumes/...])")
    if min(args.processes, args.gpus) < 0 or min(args.steps, args.checkpoint_every, args.batch_size, args.lora_r,
                                                 args.lora_alpha) < 1 or args.seq_len < 2:
        return ("--processes and --gpus must be 0 or more; --steps, --checkpoint-every, --batch-size, --lora-r and "
                "--lora-alpha 1 or more; --seq-len 2 or more")
    if args.processes and args.gpus:
        return ("--processes (ranks on a classic cluster's workers) and --gpus (a serverless GPU node) exclude each "
                "other")
    return None


def _run(args: argparse.Namespace, argv: list[str], loader: Loader | None, distributor: Any,
         distributed: Any) -> None:
    if args.processes > 0:
        launch(args, argv, distributor)
    elif args.gpus > 1:
        launch_serverless(args, argv, distributed)
    else:
        train(args, loader)


def main(argv: list[str] | None = None, loader: Loader | None = None, distributor: Any = None,
         distributed: Any = None) -> int:
    args = parse(argv)
    if (problem := _usage_error(args)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        _run(args, list(sys.argv[1:] if argv is None else argv), loader, distributor, distributed)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a failed run exits 1 with its cause; the job retries it from the last checkpoint
        print(f"error: training failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
