"""A live read of a workspace through databricks-sdk: clusters, jobs, instance pools and cluster policies.

The only module that calls the Databricks API. Authentication is the SDK's own (unified auth): the environment
(``DATABRICKS_HOST`` with ``DATABRICKS_TOKEN``, OAuth M2M, Azure or Google credentials) or a ``~/.databrickscfg``
profile named by ``--profile``; a token is never taken on the command line. The SDK pages through each list and
retries what the API asks it to (429 with ``Retry-After``, 503). What it read becomes the same export document that
``--cluster-json`` reads (``{"clusters": [...], "jobs": [...], ...}``), so a live audit and an offline one judge
the same data; ``--save-export DIR`` writes it for a later offline run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dbxtypes.errors import InputError

#: What is read, in order: the export key, the file ``--save-export`` writes, and how to list it.
LISTS: tuple[tuple[str, str, Callable[[Any], Iterable[Any]]], ...] = (
    ("clusters", "clusters.json", lambda w: w.clusters.list()),
    ("jobs", "jobs.json", lambda w: w.jobs.list(expand_tasks=True)),
    ("instance_pools", "instance-pools.json", lambda w: w.instance_pools.list()),
    ("policies", "cluster-policies.json", lambda w: w.cluster_policies.list()),
)


class WorkspaceUnavailable(RuntimeError):
    """The workspace could not be read for a reason that is not the user's input (network, server error)."""


def _client(profile: str | None) -> Any:
    from databricks.sdk import WorkspaceClient

    where = f"profile {profile!r} of ~/.databrickscfg" if profile else "the environment (DATABRICKS_HOST, ...)"
    try:
        return WorkspaceClient(profile=profile) if profile else WorkspaceClient()
    except ValueError as exc:  # the SDK's "cannot configure default credentials", an unknown profile
        raise InputError.single(where, "--workspace", f"gives no usable Databricks credentials: {_first_line(exc)}",
                                "set DATABRICKS_HOST and DATABRICKS_TOKEN (or another auth the SDK takes), or "
                                "name a profile with --profile.") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def read_workspace(profile: str | None = None, *, progress: bool = False
                   ) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """The workspace's host, and every cluster, job, instance pool and cluster policy in it, as API JSON (an export
    document)."""
    from databricks.sdk.errors import NotFound, PermissionDenied, Unauthenticated
    from databricks.sdk.errors.base import DatabricksError

    client = _client(profile)
    host = getattr(client.config, "host", None) or "the workspace"
    doc: dict[str, list[dict[str, Any]]] = {}
    for key, _file, lister in LISTS:
        items: list[dict[str, Any]] = []
        try:
            for n, obj in enumerate(lister(client), start=1):
                items.append(obj.as_dict())
                if progress and n % 100 == 0:
                    print(f"\rread {n} {key.replace('_', ' ')}...", end="", file=sys.stderr, flush=True)
        except (PermissionDenied, Unauthenticated) as exc:
            status = "403" if isinstance(exc, PermissionDenied) else "401"
            raise InputError.single(host, "--workspace", f"refused to list {key.replace('_', ' ')} ({status}): "
                                    f"{_first_line(exc)}", "use credentials that may read clusters, jobs, "
                                    "instance pools and cluster policies (workspace admin, or CAN_VIEW on each), or "
                                    "another --profile.") from None
        except NotFound as exc:
            raise InputError.single(host, "--workspace", f"has no {key} API here (404): {_first_line(exc)}",
                                    "check DATABRICKS_HOST: it must be the workspace URL.") from None
        except DatabricksError as exc:
            raise WorkspaceUnavailable(f"{host}: listing {key} failed: {_first_line(exc)}") from None
        except OSError as exc:  # connection refused, DNS, TLS
            raise WorkspaceUnavailable(f"{host}: cannot be reached: {_first_line(exc)}") from None
        if progress:
            print(f"\rread {len(items)} {key.replace('_', ' ')}.   ", file=sys.stderr, flush=True)
        doc[key] = items
    return host, doc


def save_export(doc: dict[str, list[dict[str, Any]]], directory: str) -> list[Path]:
    """Write what was read as one file per list (the shapes ``--cluster-json DIR`` reads back)."""
    from .output import write_text

    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise InputError.single(directory, "--save-export", "exists and is not a directory.", "pass a directory.")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for key, file, _lister in LISTS:
        write_text(json.dumps({key: doc.get(key, [])}, indent=2, sort_keys=True) + "\n", str(out / file), ())
        written.append(out / file)
    return written
