"""Training entry point for the TrainingCluster's job: checkpoints on a Volume, resumes after a spot reclaim.

The job runs ``train.py --checkpoint-dir /Volumes/<catalog>/<schema>/<volume>/<run> --resume-from-latest ...``
and retries the task when a spot reclaim kills it. Each retry starts here again, finds the newest complete
checkpoint and goes on from the step after it. Checkpoints are written to a temporary name and renamed, so a
reclaim in the middle of a write never leaves a half-written checkpoint that looks complete.

The model code plugs in through ``train_step(state, step) -> state``; state is bytes (serialise your model and
optimizer with torch.save into a buffer, for example). Upload this file to the job's ``python_file`` path.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

CHECKPOINT = re.compile(r"^step-(\d{9})\.ckpt$")


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
    """Train to ``total_steps``, checkpointing every ``every`` steps; resume from the newest checkpoint."""
    state, start = initial, 0
    if resume and (latest := latest_checkpoint(checkpoint_dir)) is not None:
        start, path = latest[0] + 1, latest[1]
        state = path.read_bytes()
    for step in range(start, total_steps):
        state = train_step(state, step)
        if (step + 1) % every == 0 or step == total_steps - 1:
            save_checkpoint(checkpoint_dir, step, state)
    return state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint-dir", type=Path, default=os.environ.get("CHECKPOINT_DIR"), required=False)
    parser.add_argument("--resume-from-latest", action="store_true")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--checkpoint-every", type=int, default=50)
    args, _ = parser.parse_known_args(argv)
    if args.checkpoint_dir is None or not str(args.checkpoint_dir).startswith("/Volumes/"):
        print("error: --checkpoint-dir (or CHECKPOINT_DIR) must be a /Volumes/... path", file=sys.stderr)
        return 2

    def count_step(state: bytes, step: int) -> bytes:  # replace with the model's training step
        return str(int(state or b"0") + 1).encode()

    run(args.checkpoint_dir, args.steps, count_step, resume=args.resume_from_latest, every=args.checkpoint_every)
    return 0


if __name__ == "__main__":
    sys.exit(main())
