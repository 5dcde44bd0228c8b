"""A live read of a workspace through databricks-sdk: clusters, jobs, instance pools, cluster policies, tokens and
Model Serving endpoints.

The only module that calls the Databricks API. Authentication is the SDK's own (unified auth): the environment
(``DATABRICKS_HOST`` with ``DATABRICKS_TOKEN``, OAuth M2M, Azure or Google credentials) or a ``~/.databrickscfg``
profile named by ``--profile``; a token is never taken on the command line. The SDK pages through each list and
retries what the API asks it to (429 with ``Retry-After``, 503). What it read becomes the same export document that
``--cluster-json`` reads (``{"clusters": [...], "jobs": [...], ...}``), so a live audit and an offline one judge
the same data; ``--save-export DIR`` writes it for a later offline run.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.engine.output import out_dir, write_text

#: How long a live read waits: to connect to the host (a preflight TCP connect, before any API call), for one HTTP
#: response, and for one API call with the SDK's retries of 429/503 and dropped connections (its own default is 300 s
#: of retries per call: a host that refused connections kept a run silent for about 10 minutes). `--help` states them;
#: this module is imported at start-up for them, so what it needs otherwise is imported where it is used.
CONNECT_TIMEOUT_S = 10
HTTP_TIMEOUT_S = 30
RETRY_BUDGET_S = 120

#: What is read, in order: the export key, the file ``--save-export`` writes, and how to list it.
LISTS: tuple[tuple[str, str, Callable[[Any], Iterable[Any]]], ...] = (
    ("clusters", "clusters.json", lambda w: w.clusters.list()),
    ("jobs", "jobs.json", lambda w: w.jobs.list(expand_tasks=True)),
    ("instance_pools", "instance-pools.json", lambda w: w.instance_pools.list()),
    ("policies", "cluster-policies.json", lambda w: w.cluster_policies.list()),
    ("token_infos", "tokens.json", lambda w: w.tokens.list()),
    ("endpoints", "serving-endpoints.json", lambda w: _endpoints(w)),
)
#: Lists a run goes on without, with a note, when the workspace refuses or lacks them: the caller's own tokens
#: (token/list; a workspace may turn personal access tokens off), and serving endpoints (a workspace without Model
#: Serving, or a caller who may not list them).
OPTIONAL = frozenset({"token_infos", "endpoints"})


def _endpoints(w: Any) -> Iterable[Any]:
    """Every serving endpoint, whole: ``serving-endpoints list`` gives summaries (databricks-sdk
    ``serving.ServingEndpoint``, whose served entities hold no workload type, size or provisioned throughput), so each
    is read with ``serving-endpoints get`` (``ServingEndpointDetailed``). One the caller may not get (CAN_QUERY
    without CAN_VIEW), or deleted since the list, stays the summary: its compute is then unknown, and said."""
    from databricks.sdk.errors import NotFound, PermissionDenied

    for summary in w.serving_endpoints.list():
        try:
            yield w.serving_endpoints.get(summary.name)
        except (PermissionDenied, NotFound):
            yield summary


class WorkspaceUnavailable(RuntimeError):
    """The workspace could not be read for a reason that is not the user's input (network, server error)."""


def _config_file() -> Path:
    """The file ``--profile`` names a profile of: ``DATABRICKS_CONFIG_FILE``, else ``~/.databrickscfg`` (the SDK's)."""
    return Path(os.environ.get("DATABRICKS_CONFIG_FILE") or "~/.databrickscfg").expanduser()


def _client(profile: str | None) -> Any:
    import logging

    from databricks.sdk import WorkspaceClient
    from databricks.sdk.config import Config

    if profile and not _config_file().is_file():
        raise InputError.single(str(_config_file()), "--profile", f"names profile {profile!r}, but this file, where "
                                "profiles live, does not exist.", "create it (`databricks auth login --profile "
                                f"{profile}` or `databricks configure`), point DATABRICKS_CONFIG_FILE at yours, or set "
                                "DATABRICKS_HOST and DATABRICKS_TOKEN and drop --profile.")
    where = f"profile {profile!r} of {_config_file()}" if profile else "the environment (DATABRICKS_HOST, ...)"
    host = _host_of(profile)
    if host:  # before the SDK's Config, which probes the host for its metadata (5 minutes on its default budget)
        _reach(host)
    sdk_config_log = logging.getLogger("databricks.sdk")  # the logger of databricks.sdk.config
    level = sdk_config_log.level
    sdk_config_log.setLevel(logging.ERROR)  # its warning that the metadata probe fell back is routine, not news
    try:
        return WorkspaceClient(config=Config(profile=profile, http_timeout_seconds=HTTP_TIMEOUT_S,
                                             retry_timeout_seconds=RETRY_BUDGET_S))
    except ValueError as exc:  # the SDK's "cannot configure default credentials", an unknown profile
        raise InputError.single(where, "--workspace", f"gives no usable Databricks credentials: {_first_line(exc)}",
                                "set DATABRICKS_HOST and DATABRICKS_TOKEN (or another auth the SDK takes), or "
                                "name a profile with --profile.") from None
    finally:
        sdk_config_log.setLevel(level)


def _host_of(profile: str | None) -> str | None:
    """The workspace URL the SDK will use, as far as the environment or the profile says (None: the SDK's other
    ways, such as an Azure resource id, decide it)."""
    import configparser

    if profile:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(_config_file(), encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            return None  # the SDK reads it and says what is wrong
        return parser.get(profile, "host", fallback=None) or None
    return os.environ.get("DATABRICKS_HOST") or None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def _reach(host: str) -> None:
    """Connect to the host once, bounded, before any API call: a name that does not resolve or a port that refuses
    the connection is the input's fault (exit 2); no answer in time is not (the network; exit 1)."""
    import socket
    from urllib.parse import urlparse

    url = urlparse(host if "://" in host else f"https://{host}")
    name, port = url.hostname, url.port or (80 if url.scheme == "http" else 443)
    if not name:
        raise InputError.single(host, "DATABRICKS_HOST", "is not a URL.", "set it to the workspace URL, "
                                "https://<workspace>.cloud.databricks.com (or your cloud's).")
    try:
        socket.create_connection((name, port), timeout=CONNECT_TIMEOUT_S).close()
    except socket.gaierror as exc:
        raise InputError.single(host, "DATABRICKS_HOST", f"does not resolve ({name}: {exc.strerror or exc}).",
                                "check the workspace URL (and the DNS this machine uses).") from None
    except ConnectionRefusedError:
        raise InputError.single(host, "DATABRICKS_HOST", f"refuses connections on port {port}.",
                                "check the workspace URL: it must be the workspace itself, on https (443).") from None
    except TimeoutError:
        raise WorkspaceUnavailable(f"{host}: no answer to a connection within {CONNECT_TIMEOUT_S} s") from None
    except OSError as exc:  # network unreachable, no route
        raise WorkspaceUnavailable(f"{host}: cannot be reached: {_first_line(exc)}") from None


def read_workspace(profile: str | None = None, *, progress: bool = False
                   ) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """The workspace's host, and every cluster, job, instance pool and cluster policy in it, and the caller's own
    tokens (token/list: a workspace that refuses them is read without them, with a note), as API JSON (an export
    document)."""
    if progress:
        print(f"connecting to {_host_of(profile) or 'the workspace'}...", file=sys.stderr, flush=True)
    client = _client(profile)
    host = getattr(client.config, "host", None) or "the workspace"
    doc: dict[str, list[dict[str, Any]]] = {}
    for key, _file, lister in LISTS:
        doc[key] = _read_list(client, host, key, lister, progress)
    return host, doc


def _read_list(client: Any, host: str, key: str, lister: Callable[[Any], Iterable[Any]],
               progress: bool) -> list[dict[str, Any]]:
    """One list of the workspace (what was read of it when an `OPTIONAL` one is refused part way, with a note)."""
    from databricks.sdk.errors import NotFound, PermissionDenied, Unauthenticated
    from databricks.sdk.errors.base import DatabricksError

    items: list[dict[str, Any]] = []
    if progress:
        print(f"\rreading {key.replace('_', ' ')}...", end="", file=sys.stderr, flush=True)
    try:
        _collect(lister(client), items, key, progress)
    except (PermissionDenied, NotFound) as exc:
        if key not in OPTIONAL:
            _refused(host, key, exc)
        print(f"note: {host}: {key.replace('_', ' ')} not read, so not judged: {_first_line(exc)}",
              file=sys.stderr)
    except Unauthenticated as exc:
        _refused(host, key, exc)
    except TimeoutError as exc:  # the SDK's retry budget spent (its TimeoutError), or a read timed out
        raise WorkspaceUnavailable(f"{host}: listing {key} took longer than {RETRY_BUDGET_S} s with retries: "
                                   f"{_first_line(exc)}") from None
    except DatabricksError as exc:
        raise WorkspaceUnavailable(f"{host}: listing {key} failed: {_first_line(exc)}") from None
    except OSError as exc:  # connection refused, DNS, TLS
        raise WorkspaceUnavailable(f"{host}: cannot be reached: {_first_line(exc)}") from None
    if progress:
        print(f"\rread {len(items)} {key.replace('_', ' ')}.   ", file=sys.stderr, flush=True)
    return items


def _collect(objects: Iterable[Any], items: list[dict[str, Any]], key: str, progress: bool) -> None:
    """Appends each object's API JSON to ``items`` as it is read (so that a list refused part way keeps what was
    read), counting every 100 on stderr."""
    for n, obj in enumerate(objects, start=1):
        items.append(obj.as_dict())
        if progress and n % 100 == 0:
            print(f"\rread {n} {key.replace('_', ' ')}...", end="", file=sys.stderr, flush=True)


def _refused(host: str, key: str, exc: Exception) -> NoReturn:
    """A list the workspace refused (401, 403) or lacks (404): invalid input naming the list and the fix."""
    from databricks.sdk.errors import NotFound, PermissionDenied  # noqa: PLC0415 - see the module's note

    if isinstance(exc, NotFound):
        raise InputError.single(host, "--workspace", f"has no {key} API here (404): {_first_line(exc)}",
                                "check DATABRICKS_HOST: it must be the workspace URL.") from None
    status = "403" if isinstance(exc, PermissionDenied) else "401"
    raise InputError.single(host, "--workspace", f"refused to list {key.replace('_', ' ')} ({status}): "
                            f"{_first_line(exc)}", "use credentials that may read clusters, jobs, "
                            "instance pools and cluster policies (workspace admin, or CAN_VIEW on each), or "
                            "another --profile.") from None


def save_export(doc: dict[str, list[dict[str, Any]]], directory: str) -> list[Path]:
    """Write what was read as one file per list (the shapes ``--cluster-json DIR`` reads back)."""
    out = out_dir(directory, "--save-export")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for key, file, _lister in LISTS:
        write_text(json.dumps({key: doc.get(key, [])}, indent=2, sort_keys=True) + "\n", str(out / file), ())
        written.append(out / file)
    return written
