"""Code that runs on the clusters (not on the deploying machine)."""

from __future__ import annotations

from pathlib import Path

#: The training entry point the stack uploads to its code Volume for a training job that names no python_file.
TRAIN_SCRIPT = Path(__file__).resolve().parent / "train.py"


def train_script_text() -> str:
    return TRAIN_SCRIPT.read_text(encoding="utf-8")
