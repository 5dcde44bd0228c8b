"""The GPU collector init script (``gpu_collector.sh``), read by the Pulumi program to upload it."""

from __future__ import annotations

from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "gpu_collector.sh"


def script_text() -> str:
    return SCRIPT.read_text(encoding="utf-8")
