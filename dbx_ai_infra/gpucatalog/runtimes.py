"""Databricks Runtime releases (data file ``runtimes.yaml``): LTS or not, and when support ends, with sources; and the
verdict on any runtime key, listed or not (`verdict`)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml, read_text

RUNTIMES_FILE = Path(__file__).resolve().parent / "runtimes.yaml"
#: ``15.4.x-gpu-ml-scala2.12`` -> 15, 4; ``18.x-gpu-ml-scala2.13`` (the latest release of 18) -> 18, None.
_VERSION = re.compile(r"^(\d+)(?:\.(\d+))?\.x-")
#: How long a release that is not LTS is supported (the support lifecycle policy: six months), at the most.
NON_LTS_SUPPORT = timedelta(days=184)
#: How long before an LTS release's end of support the rule warns: a year, the time a platform team needs to move a
#: fleet's jobs and pinned libraries to the next LTS (issue 52; an LTS release is supported three years).
END_OF_SUPPORT_WARNING = timedelta(days=365)


@dataclass(frozen=True)
class RuntimeRelease:
    version: str
    lts: bool
    released: date
    #: None: not set yet (a release whose end of support is decided when it becomes LTS).
    end_of_support: date | None
    source: str

    @property
    def key(self) -> tuple[int, int]:
        """The version to order by: ``18`` (a major alone) comes after every ``18.N`` the table lists."""
        return _order(self.version)

    @property
    def label(self) -> str:
        return f"{self.version}{' LTS' if self.lts else ''}"


def _order(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor) if minor else 10**6


@functools.cache
def releases() -> dict[str, RuntimeRelease]:
    data = parse_packaged_yaml(read_text(str(RUNTIMES_FILE), "runtime table"), str(RUNTIMES_FILE))
    out = {}
    for row in data["runtimes"]:
        ends = row.get("end_of_support")
        out[str(row["version"])] = RuntimeRelease(str(row["version"]), bool(row["lts"]),
                                                  date.fromisoformat(str(row["released"])),
                                                  date.fromisoformat(str(ends)) if ends else None, str(row["source"]))
    return out


def release_of(spark_version: str) -> RuntimeRelease | None:
    """The release a ``spark_version`` key names (``15.4.x-gpu-ml-scala2.12``), when the table lists it: its own row,
    or for ``18.x-...`` and an unlisted ``18.N.x-...`` the row of the major alone (``18``)."""
    found = _VERSION.match(spark_version or "")
    if not found:
        return None
    table = releases()
    major, minor = found.group(1), found.group(2)
    return (table.get(f"{major}.{minor}") if minor is not None else None) or table.get(major)


@dataclass(frozen=True)
class RuntimeVerdict:
    """What the support lifecycle says of one runtime key on one day: ``problem`` is None when it is a supported LTS
    release; else why not (past support, not LTS, or not known to the table)."""

    spark_version: str
    problem: str | None


def current_lts(today: date) -> list[RuntimeRelease]:
    """The LTS releases still supported on ``today``, newest first."""
    return sorted((r for r in releases().values() if r.lts and r.released <= today
                   and (r.end_of_support is None or r.end_of_support > today)), key=lambda r: r.key, reverse=True)


def verdict(spark_version: str, today: date) -> RuntimeVerdict:
    """The verdict on any Databricks Runtime key (``NN.M.x-...`` or ``NN.x-...``); a key of no runtime version (not
    ``NN[.M].x-``) gets none (another rule judges the key itself)."""
    found = _VERSION.match(spark_version or "")
    if not found:
        return RuntimeVerdict(spark_version, None)
    release = release_of(spark_version)
    shown = f"{found.group(1)}{'.' + found.group(2) if found.group(2) is not None else ''}"
    if release is not None:
        return RuntimeVerdict(spark_version, _listed(spark_version, release, today))
    later = sorted((r for r in releases().values() if r.key > _order(shown)), key=lambda r: r.released)
    if not later:  # newer than anything the table knows: it cannot be judged, so it is not passed
        newest = max(releases().values(), key=lambda r: r.key)
        return RuntimeVerdict(spark_version, f"runtime {spark_version} ({shown}) is newer than every release the "
                                             f"runtime table lists (its newest: {newest.label}): whether it is LTS and "
                                             f"supported is not known here")
    # every LTS release is listed, so an unlisted older one is not LTS: six months of support, which ended before
    # the next listed release had been out six months
    bound = later[0].released + NON_LTS_SUPPORT
    if bound <= today:
        return RuntimeVerdict(spark_version, f"runtime {spark_version} ({shown}) is a release the table does not list, "
                                             f"older than {later[0].label} (released {later[0].released}): not LTS, "
                                             f"so its six months of support ended by {bound} at the latest")
    return RuntimeVerdict(spark_version, f"runtime {spark_version} ({shown}) is not an LTS release (the table lists "
                                         f"every LTS release): its support ends by {bound} at the latest")


def _listed(spark_version: str, release: RuntimeRelease, today: date) -> str | None:
    if release.end_of_support is not None and release.end_of_support <= today:
        return (f"runtime {spark_version} ({release.label}) has been out of support since {release.end_of_support}: "
                f"no fixes, and it may leave the API")
    if not release.lts:
        ends = (f"its support ends {release.end_of_support}, six months after its release"
                if release.end_of_support else "its end of support is set only when it becomes LTS")
        return f"runtime {spark_version} ({release.version}) is not an LTS release: {ends}"
    if release.end_of_support is not None and release.end_of_support - today <= END_OF_SUPPORT_WARNING:
        return (f"runtime {spark_version} ({release.label}) reaches its end of support on {release.end_of_support}, "
                f"within {END_OF_SUPPORT_WARNING.days // 30} months: move before then")
    return None
