"""Databricks Runtime releases (data file ``runtimes.yaml``): LTS or not, and when support ends, with sources."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from dbxtypes.documents import parse_packaged_yaml, read_text

RUNTIMES_FILE = Path(__file__).resolve().parent / "runtimes.yaml"
#: ``15.4.x-gpu-ml-scala2.12`` -> ``15.4``.
_VERSION = re.compile(r"^(\d+)\.(\d+)\.x-")


@dataclass(frozen=True)
class RuntimeRelease:
    version: str
    lts: bool
    released: date
    end_of_support: date
    source: str


@functools.cache
def releases() -> dict[str, RuntimeRelease]:
    data = parse_packaged_yaml(read_text(str(RUNTIMES_FILE), "runtime table"), str(RUNTIMES_FILE))
    out = {}
    for row in data["runtimes"]:
        released, ends = (date.fromisoformat(str(row[k])) for k in ("released", "end_of_support"))
        out[str(row["version"])] = RuntimeRelease(str(row["version"]), bool(row["lts"]), released, ends,
                                                  str(row["source"]))
    return out


def release_of(spark_version: str) -> RuntimeRelease | None:
    """The release a ``spark_version`` key names (``15.4.x-gpu-ml-scala2.12``), when the table lists it."""
    found = _VERSION.match(spark_version or "")
    return releases().get(f"{found.group(1)}.{found.group(2)}") if found else None
