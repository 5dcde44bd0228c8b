"""Training entry point for the TrainingCluster's job: fine-tunes a causal language model with plain PyTorch,
checkpoints on a Volume, resumes after a spot reclaim.

The job runs ``train.py --checkpoint-dir /Volumes/<catalog>/<schema>/<volume>/<run> --resume-from-latest
--model NAME --data PATH [--processes N] ...`` and retries the task when a spot reclaim kills it. Each retry starts
here again, finds the newest complete checkpoint (model, optimizer and step) and goes on from the step after it.
Checkpoints are written to a temporary name and renamed, so a reclaim in the middle of a write never leaves a
half-written checkpoint that looks complete.

- ``--model``: a Hugging Face model id or a directory with its weights (a ``/Volumes/...`` path), loaded with
  transformers' ``AutoModelForCausalLM`` and ``AutoTokenizer`` (both ship with the Databricks ML runtime).
- ``--data``: a text file, or a directory of ``.txt`` files, on a Volume: tokenized into blocks of ``--seq-len``.
- ``--processes N``: N ranks on the *workers*, started by pyspark's ``TorchDistributor`` with ``local_mode=False``
  (each rank one GPU; DistributedDataParallel; rank 0 writes the checkpoints). The driver runs no rank, only this
  launcher, so a CPU driver is enough (the stack's default for a job that runs this file on workers: issue 52 item
  10). 0 (the default on a single node): one process here, on this node's GPU.

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
except ImportError:
    torch = None

CHECKPOINT = re.compile(r"^step-(\d{9})\.ckpt$")
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


def _state(model: Any, optimizer: Any, step: int) -> bytes:
    buffer = io.BytesIO()
    torch.save({"model": _unwrap(model).state_dict(), "optimizer": optimizer.state_dict(), "step": step}, buffer)
    return buffer.getvalue()


def fit(model: Any, blocks: Any, checkpoint_dir: Path, *, steps: int, every: int = 50, lr: float = 1e-4,
        batch_size: int = 1, resume: bool = True, rank: int = 0, world: int = 1) -> float:
    """Train ``model`` (called as ``model(input_ids=..., labels=...)``, returning an object with ``.loss``, as a
    transformers causal LM does) on ``blocks`` to ``steps``, resuming from the newest checkpoint; rank 0 writes a
    checkpoint every ``every`` steps and at the end. Returns the last loss."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    start = 0
    if resume and (latest := latest_checkpoint(checkpoint_dir)) is not None:
        state = torch.load(io.BytesIO(latest[1].read_bytes()), map_location="cpu", weights_only=True)
        _unwrap(model).load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = latest[0] + 1
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
        if rank == 0 and ((step + 1) % every == 0 or step == steps - 1):
            save_checkpoint(checkpoint_dir, step, _state(model, optimizer, step))
    return loss_value


Loader = Callable[[str], tuple[Any, Callable[[str], Sequence[int]]]]


def load_pretrained(name: str) -> tuple[Any, Callable[[str], Sequence[int]]]:
    """The model and a text -> token ids function, from transformers (on the Databricks ML runtime)."""
    transformers = importlib.import_module("transformers")  # on the cluster only (the ML runtime)
    tokenizer = transformers.AutoTokenizer.from_pretrained(name)
    model = transformers.AutoModelForCausalLM.from_pretrained(name)

    def encode(text: str) -> Sequence[int]:
        ids = list(tokenizer(text)["input_ids"])
        return ids + ([tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else [])
    return model, encode


def train(args: argparse.Namespace, loader: Loader | None = None, rank: int = 0, world: int = 1) -> float:
    """One rank's run: load the model and the data, wrap the model for several ranks, fit."""
    if torch is None:
        raise TrainingFailed("PyTorch is not installed: run on the Databricks ML runtime (or pip install -r "
                             "requirements-train.txt)")
    model, encode = (loader or load_pretrained)(args.model)
    ids = [i for text in read_texts(Path(args.data)) for i in encode(text)]
    blocks = token_blocks(ids, args.seq_len)
    if torch.cuda.is_available():
        model = model.to(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}")
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    return fit(model, blocks, Path(args.checkpoint_dir), steps=args.steps, every=args.checkpoint_every, lr=args.lr,
               batch_size=args.batch_size, resume=args.resume_from_latest, rank=rank, world=world)


def rank_main(argv: list[str]) -> float:
    """A rank started by TorchDistributor on a worker (it sets MASTER_ADDR, RANK, WORLD_SIZE, LOCAL_RANK)."""
    dist = torch.distributed

    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    try:
        return train(parse(argv), rank=dist.get_rank(), world=dist.get_world_size())
    finally:
        dist.destroy_process_group()


def launch(args: argparse.Namespace, argv: list[str], distributor: Any = None) -> Any:
    """Start ``args.processes`` ranks on the workers, none on the driver (TorchDistributor, local_mode False:
    pyspark.ml.torch.distributor, Apache Spark 3.4+, on the Databricks ML runtime)."""
    if distributor is None:
        distributor = importlib.import_module("pyspark.ml.torch.distributor").TorchDistributor  # on the cluster
    return distributor(num_processes=args.processes, local_mode=False, use_gpu=True).run(rank_main, argv)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--checkpoint-dir", default=os.environ.get("CHECKPOINT_DIR"))
    parser.add_argument("--resume-from-latest", action="store_true")
    parser.add_argument("--model", help="a Hugging Face model id, or a directory with the weights")
    parser.add_argument("--data", help="a .txt file, or a directory of them, on a Volume")
    parser.add_argument("--processes", type=int, default=0, help="ranks on the workers (0: one process here)")
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
    if args.processes < 0 or args.steps < 1 or args.checkpoint_every < 1 or args.seq_len < 2 or args.batch_size < 1:
        return ("--processes must be 0 or more; --steps, --checkpoint-every and --batch-size 1 or more; --seq-len 2 "
                "or more")
    return None


def main(argv: list[str] | None = None, loader: Loader | None = None, distributor: Any = None) -> int:
    args = parse(argv)
    if (problem := _usage_error(args)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        if args.processes > 0:
            launch(args, list(sys.argv[1:] if argv is None else argv), distributor)
        else:
            train(args, loader)
    except Exception as exc:  # a failed run exits 1 with its cause; the job retries it from the last checkpoint
        print(f"error: training failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
