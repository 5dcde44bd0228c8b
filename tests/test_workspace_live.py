"""`check --workspace`: the real databricks-sdk path against a local HTTP server replaying recorded API responses.

No mock of the SDK: it authenticates with a token from the environment, pages through clusters/list and jobs/list
with ``page_token``, retries a 429 after its ``Retry-After``, and turns a 403 into a clear exit 2. The responses are
written from the REST API reference (Clusters API 2.1, Jobs API 2.2, Instance Pools API 2.0, Cluster Policies API).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from test_workspace_audit import ETL, JOB, POLICY, POOL, _gpu

from dbx_ai_infra.cli.cli import main

GPU = _gpu(ETL, cluster_id="0202-gpu", cluster_name="chat-serving", spark_version="17.3.x-gpu-ml-scala2.13")

#: (path, page_token) -> the recorded JSON body; pages link with next_page_token as the API does.
PAGES = {
    ("/api/2.1/clusters/list", None): {"clusters": [ETL], "next_page_token": "p2"},
    ("/api/2.1/clusters/list", "p2"): {"clusters": [GPU], "prev_page_token": "p1"},
    ("/api/2.2/jobs/list", None): {"jobs": [JOB], "has_more": False},
    ("/api/2.0/instance-pools/list", None): {"instance_pools": [POOL]},
    ("/api/2.0/policies/clusters/list", None): {"policies": [POLICY]},
    # the caller's own tokens (Token API, token/list): one never expires
    ("/api/2.0/token/list", None): {"token_infos": [
        {"token_id": "5715498424f15ee0213be729257b53fc35a47d5953e3bdfd8ed22a0b93b339f4", "creation_time": 1733400000000,
         "expiry_time": -1, "comment": "laptop"}]},
}


class Replay(BaseHTTPRequestHandler):
    """Serves PAGES; ``server.script`` may hold (path, status, headers, body) to answer first, once each."""

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        url = urlparse(self.path)
        token = parse_qs(url.query).get("page_token", [None])[0]
        self.server.seen.append((url.path, token, self.headers.get("Authorization")))  # type: ignore[attr-defined]
        script = self.server.script  # type: ignore[attr-defined]
        for i, (path, status, headers, body) in enumerate(script):
            if path == url.path:
                del script[i]
                return self._send(status, body, headers)
        body = PAGES.get((url.path, token))
        if body is None:
            return self._send(404, {"error_code": "ENDPOINT_NOT_FOUND", "message": f"no {url.path}"}, {})
        return self._send(200, body, {})

    def _send(self, status: int, body: dict, headers: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class VirtualClock:
    """The SDK's clock for these tests: a retry's sleep moves time on at once instead of waiting (the SDK sleeps a
    Retry-After of 1 s plus up to 1 s of jitter), so the retry budget runs out as it would, in no time."""

    def __init__(self) -> None:
        self.slept = 0.0

    def time(self) -> float:
        return time.time() + self.slept

    def sleep(self, seconds: float) -> None:
        self.slept += seconds


@pytest.fixture
def workspace(monkeypatch, tmp_path):
    import databricks.sdk.config

    monkeypatch.setattr(databricks.sdk.config, "RealClock", VirtualClock)  # what a Config made with no clock takes
    server = ThreadingHTTPServer(("127.0.0.1", 0), Replay)
    server.seen, server.script = [], []  # type: ignore[attr-defined]
    # polled every 20 ms, not the default 0.5 s: shutdown() waits for the next poll, which was half a second of
    # every test's teardown
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    for key in [k for k in __import__("os").environ if k.startswith(("DATABRICKS_", "ARM_", "GOOGLE_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("DATABRICKS_HOST", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("DATABRICKS_TOKEN", "dapi-test-token")
    monkeypatch.setenv("DATABRICKS_CONFIG_FILE", str(tmp_path / "no.databrickscfg"))
    monkeypatch.setenv("HOME", str(tmp_path))
    yield server
    server.shutdown()
    server.server_close()


def test_a_live_read_pages_through_every_list_and_judges_like_an_export(workspace, capsys, tmp_path):
    saved = tmp_path / "export"
    assert main(["check", "--workspace", "--save-export", str(saved), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["checked"] == {"clusters": 2, "gpu_clusters": 1, "jobs": 1, "job_clusters": 2, "gpu_job_clusters": 1,
                              "instance_pools": 1, "cluster_policies": 1, "serving_endpoints": 0, "tokens": 1,
                              "unchanged": 0}
    assert [v["resource_name"] for v in doc["violations"] if v["policy"] == "databricks-token-require-lifetime"] == \
        ["laptop"]
    paths = [(path, token) for path, token, _ in workspace.seen]
    assert ("/api/2.1/clusters/list", "p2") in paths  # the second page was asked for
    assert all(auth == "Bearer dapi-test-token" for path, _, auth in workspace.seen if path.startswith("/api/"))
    # the saved export, read offline, gives the same verdicts
    assert sorted(p.name for p in saved.iterdir()) == ["cluster-policies.json", "clusters.json",
                                                       "instance-pools.json", "jobs.json", "serving-endpoints.json",
                                                       "tokens.json"]
    assert main(["check", "--cluster-json", str(saved), "--json"]) == 1
    offline = json.loads(capsys.readouterr().out)
    key = lambda v: (v["policy"], v["urn"], v["message"])  # noqa: E731
    assert sorted(map(key, offline["violations"])) == sorted(map(key, doc["violations"]))


def test_a_429_is_retried_after_its_retry_after(workspace, capsys):
    workspace.script.append(("/api/2.2/jobs/list", 429, {"Retry-After": "1"},
                             {"error_code": "REQUEST_LIMIT_EXCEEDED", "message": "slow down"}))
    assert main(["check", "--workspace", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["checked"]["jobs"] == 1
    assert [p for p, _, _ in workspace.seen].count("/api/2.2/jobs/list") == 2


def test_a_403_is_a_clear_invalid_input(workspace, capsys):
    workspace.script.append(("/api/2.1/clusters/list", 403, {},
                             {"error_code": "PERMISSION_DENIED", "message": "not allowed to list clusters"}))
    assert main(["check", "--workspace"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "refused to list clusters (403): not allowed to list clusters" in captured.err
    assert "Fix: use credentials that may read clusters" in captured.err and "Traceback" not in captured.err


def test_no_credentials_is_a_clear_invalid_input(workspace, monkeypatch, capsys):
    monkeypatch.delenv("DATABRICKS_HOST")
    monkeypatch.delenv("DATABRICKS_TOKEN")
    assert main(["check", "--workspace"]) == 2
    assert "gives no usable Databricks credentials" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "fragment"), [
    (["check", "--workspace", "--cluster-json", "x.json"], "two sources of clusters"),
    (["check", "--profile", "p", "--cluster-json", "x.json"], "go with --workspace"),
    (["check"], "nothing to check"),
])
def test_workspace_flags_that_do_not_go_together(capsys, argv, fragment):
    assert main(argv) == 2
    assert fragment in capsys.readouterr().err


def test_a_token_cannot_be_given_on_the_command_line(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["check", "--workspace", "--token", "dapi-x"])
    assert exited.value.code == 2
    assert not Path("dapi-x").exists()


def test_drift_against_the_live_workspace(workspace, capsys):
    """prod against a workspace that runs none of it: every stack resource is missing, the GPU cluster unowned."""
    assert main(["check", "--stack", "prod", "--workspace", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["against"].startswith("workspace http://127.0.0.1:")
    # missing: the inference cluster, its pool, the training job (prod makes no training cluster)
    assert doc["counts"]["drift-missing"] == 3 and doc["counts"]["drift-unowned-gpu"] == 2  # chat-serving, the job


def _closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_host_that_refuses_connections_is_invalid_input_at_once(workspace, monkeypatch, capsys):
    """It waited about 10 minutes in silence (the SDK retried for 300 s per list), then exited 1."""
    host = f"https://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("DATABRICKS_HOST", host)
    assert main(["check", "--workspace"]) == 2
    err = capsys.readouterr().err
    assert f"error: {host}: DATABRICKS_HOST: refuses connections on port" in err and "Fix: check the workspace URL" in err
    assert workspace.seen == []  # no API call was tried


def test_a_host_that_does_not_resolve_is_invalid_input(workspace, monkeypatch, capsys):
    monkeypatch.setenv("DATABRICKS_HOST", "https://no-such-workspace.invalid")
    assert main(["check", "--workspace"]) == 2
    assert "DATABRICKS_HOST: does not resolve (no-such-workspace.invalid" in capsys.readouterr().err


def test_a_host_that_does_not_answer_is_unavailable_not_the_inputs_fault(workspace, monkeypatch, capsys):
    import socket

    from dbx_ai_infra.sources import workspace as live

    def silent(address, timeout=None):  # noqa: ANN001, ANN202 - socket.create_connection's shape
        assert timeout == live.CONNECT_TIMEOUT_S  # the connect is bounded
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", silent)
    assert main(["check", "--workspace"]) == 1
    err = capsys.readouterr().err
    assert f"no answer to a connection within {live.CONNECT_TIMEOUT_S} s (not the input's fault" in err


def test_the_sdk_is_told_how_long_to_retry(workspace, monkeypatch, capsys):
    """A server that answers 503 for ever: the SDK gives up after the retry budget, not its 300 s default."""
    from dbx_ai_infra.sources import workspace as live

    monkeypatch.setattr(live, "RETRY_BUDGET_S", 1)
    for _ in range(50):
        workspace.script.append(("/api/2.1/clusters/list", 503, {"Retry-After": "1"},
                                 {"error_code": "TEMPORARILY_UNAVAILABLE", "message": "try later"}))
    assert main(["check", "--workspace"]) == 1
    err = capsys.readouterr().err
    assert "listing clusters took longer than 1 s with retries" in err and "not the input's fault" in err


def test_a_profile_without_a_config_file_says_the_file_is_missing(workspace, capsys, tmp_path):
    assert main(["check", "--workspace", "--profile", "nope"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'no.databrickscfg'}: --profile: names profile 'nope', but this file" in err
    assert "does not exist" in err and "Traceback" not in err


def test_on_a_terminal_a_live_read_says_where_it_connects_and_what_it_read(workspace, capsys):
    from dbx_ai_infra.sources.workspace import read_workspace

    host, doc = read_workspace(progress=True)
    err = capsys.readouterr().err
    assert err.startswith(f"connecting to {host}...\n")
    assert "read 2 clusters." in err and "read 1 jobs." in err and len(doc["clusters"]) == 2


def test_a_workspace_that_refuses_tokens_is_read_without_them(workspace, capsys):
    """Personal access tokens turned off (403 on token/list): the rest is read and judged, with a note."""
    workspace.script.append(("/api/2.0/token/list", 403, {},
                             {"error_code": "PERMISSION_DENIED", "message": "Personal access tokens are disabled"}))
    assert main(["check", "--workspace", "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["checked"]["tokens"] == 0 and json.loads(captured.out)["checked"]["clusters"] == 2
    assert "token infos not read, so not judged: Personal access tokens are disabled" in captured.err


@pytest.mark.parametrize(("command", "alias"), [
    (["audit", "--workspace", "--json"], ["check", "--workspace", "--json"]),
    (["drift", "--stack", "prod", "--workspace", "--json"], ["check", "--stack", "prod", "--workspace", "--json"]),
])
def test_audit_and_drift_of_the_live_workspace_print_what_their_check_aliases_print(workspace, capsys, command, alias):
    """Issue 56, item 3: the live read is audit's and drift's; ``check --workspace`` is their alias, a note on stderr
    the only difference."""
    code = main(command)
    out, err = capsys.readouterr()
    assert (code, out) == (main(alias), capsys.readouterr().out)
    assert json.loads(out) and "note: `check" not in err
