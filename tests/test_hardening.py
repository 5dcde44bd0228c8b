"""Bad, hostile and interrupted input: every case a clear exit 2 (130 when interrupted), nothing damaged, nothing
left behind. Outputs go only under pytest's temporary directories: a device node or FIFO made there stands in for
/dev/null."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import BASE_CONFIG, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbx_ai_infra.cli.cli import main
from tests.pause_at import READY

REPO = Path(__file__).resolve().parent.parent


def stack(write_stack, name: str = "test", **sections) -> str:
    config = copy.deepcopy(BASE_CONFIG)
    for key, value in sections.items():
        config[f"dbx-ai-infra:{key}"] = value
    return str(write_stack(config, name=name))


# --- damage ------------------------------------------------------------------------------------------------------

def _device(path: Path, minor: int) -> Path:
    """A character device of the memory driver (major 1: 3 is null, 7 is full), made inside a test's tmp_path."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


def test_a_character_device_is_written_never_replaced(tmp_path, capsys):
    node = _device(tmp_path / "null", 3)
    assert run_cli(capsys, "check", "--stack", "dev", "--out", str(node))[0] == 0
    assert stat.S_ISCHR(node.stat().st_mode) and list(tmp_path.iterdir()) == [node]


def test_a_full_device_is_invalid_output_and_stays_a_device(tmp_path, capsys):
    node = _device(tmp_path / "full", 7)
    code, _, err = run_cli(capsys, "cost", "--stack", "dev", "--out", str(node))
    assert code == 2 and "No space left" in err and "Fix:" in err
    assert stat.S_ISCHR(node.stat().st_mode) and list(tmp_path.iterdir()) == [node]


def test_a_fifo_is_written_never_replaced(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    assert run_cli(capsys, "check", "--stack", "dev", "--out", str(fifo))[0] == 0
    reader.join(10)
    assert b"Policies" in received[0] and stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("which", ["stack", "prices", "cluster-json"])
def test_out_may_not_be_an_input(tmp_path, capsys, write_stack, which):
    path = Path(stack(write_stack))
    prices = tmp_path / "prices.yaml"
    prices.write_text("tier: premium\n")
    clusters = tmp_path / "clusters.json"
    clusters.write_text(json.dumps({"cluster_name": "c", "spark_version": "17.3.x-gpu-ml-scala2.13"}))
    argv = {"stack": ["preview", "--stack", str(path), "--out", str(path)],
            "prices": ["cost", "--stack", str(path), "--prices", str(prices), "--out", str(prices)],
            "cluster-json": ["check", "--cluster-json", str(clusters), "--out", str(clusters)]}[which]
    before = {p: p.read_bytes() for p in (path, prices, clusters)}
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and "is an input of this run" in err
    assert {p: p.read_bytes() for p in before} == before


def test_outputs_follow_the_umask_and_keep_a_replaced_files_mode(tmp_path, capsys):
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.json"
        assert run_cli(capsys, "check", "--stack", "dev", "--json", "--out", str(fresh))[0] == 0
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.json"
        kept.write_text("{}")
        kept.chmod(0o640)
        assert run_cli(capsys, "check", "--stack", "dev", "--json", "--out", str(kept))[0] == 0
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and json.loads(kept.read_text())["stack"] == "dev"
    finally:
        os.umask(old)


@pytest.mark.parametrize("out,words", [("", "--out: is empty"), ("/proc/no-such-dir/report.md", "does not exist"),
                                        ("{tmp}", "is a directory")])
def test_an_unusable_out_is_invalid_input(tmp_path, capsys, out, words):
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--out", out.format(tmp=tmp_path))
    assert code == 2 and words in err and "Fix:" in err


# --- accepted silently before --------------------------------------------------------------------------------------

def test_duplicate_keys_are_refused(write_stack, capsys):
    text = ("config:\n  dbx-ai-infra:cloud: aws\n  dbx-ai-infra:cloud: gcp\n  dbx-ai-infra:gpu_family: a10g\n")
    code, _, err = run_cli(capsys, "check", "--stack", str(write_stack(text=text)))
    assert code == 2 and "dbx-ai-infra:cloud: is given twice" in err


@pytest.mark.parametrize("section,field", [
    ({"training": {"num_workers": True, "model": {"params_billions": 1}}}, "training.num_workers"),
    ({"dev": {"model": {"params_billions": True}}}, "dev.model.params_billions"),
])
def test_booleans_are_not_numbers(write_stack, capsys, section, field):
    code, _, err = run_cli(capsys, "check", "--stack", stack(write_stack, **section))
    assert code == 2 and f"dbx-ai-infra:{field}" in err and "got True" in err


def test_a_pool_smaller_than_its_cluster_is_refused(write_stack, capsys):
    code, _, err = run_cli(capsys, "check", "--stack", stack(write_stack, instance_pools={"inference": {"max_capacity": 3}}))
    assert code == 2 and "max_capacity 3 is below the 7 nodes" in err


@pytest.mark.parametrize("cloud,tags,words", [
    ("gcp", {"workload": "GenAI", "cost_center": "ai"}, "is not a GCP label"),
    ("aws", {"workload": "w", "cost_center": "c", "k" * 129: "v"}, "longer than AWS allows"),
    ("azure", {"workload": "w", "cost_center": "c", "a/b": "v"}, "Azure refuses"),
])
def test_tags_the_cloud_refuses(write_stack, capsys, cloud, tags, words):
    from conftest import config_for

    config = config_for(cloud)
    config["dbx-ai-infra:tags"] = tags
    code, _, err = run_cli(capsys, "check", "--stack", str(write_stack(config)))
    assert code == 2 and words in err


def test_a_repeated_checkpoint_flag_is_refused(write_stack, capsys):
    training = {"num_workers": 1, "model": {"params_billions": 1},
                "job": {"python_file": "/Workspace/t.py", "parameters": ["--checkpoint-dir=/Volumes/x/y/z"]}}
    code, _, err = run_cli(capsys, "check", "--stack", stack(write_stack, training=training))
    assert code == 2 and "repeats --checkpoint-dir" in err


def test_stack_names_the_cli_refuses(write_stack, capsys):
    code, _, err = run_cli(capsys, "check", "--stack", stack(write_stack, name="my stack"))
    assert code == 2 and "the Pulumi CLI refuses" in err


def test_nan_in_cluster_json_is_invalid(tmp_path, capsys):
    path = tmp_path / "clusters.json"
    path.write_text('{"cluster_name": "c", "spark_version": "17.3.x-scala2.13", "autotermination_minutes": NaN}')
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(path))
    assert code == 2 and "NaN is not a number JSON allows" in err


# --- resource limits and odd files ---------------------------------------------------------------------------------

def test_an_alias_bomb_is_refused(write_stack, capsys):
    lines = ["config:", "  dbx-ai-infra:x:", "    a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(8):
        prev, cur = chr(97 + i), chr(98 + i)
        lines.append(f"    {cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    code, _, err = run_cli(capsys, "check", "--stack", str(write_stack(text="\n".join(lines) + "\n")))
    assert code == 2 and "expand it beyond" in err


def test_deep_json_and_symlink_loops_and_non_files(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    assert run_cli(capsys, "check", "--cluster-json", str(deep))[0] == 2
    loop = tmp_path / "Pulumi.loop.yaml"
    loop.symlink_to(loop)
    code, _, err = run_cli(capsys, "check", "--stack", str(loop))
    assert code == 2 and "symbolic link loop" in err
    code, _, err = run_cli(capsys, "check", "--stack", str(tmp_path))
    assert code == 2 and "is a directory" in err
    fifo = tmp_path / "Pulumi.fifo.yaml"
    os.mkfifo(fifo)
    code, _, err = run_cli(capsys, "check", "--stack", str(fifo))
    assert code == 2 and "is a FIFO" in err


def test_duplicate_keys_in_json_are_refused(tmp_path, capsys):
    cluster = tmp_path / "c.json"
    cluster.write_text('{"clusters": [{"cluster_name": "a", "num_workers": 2, "num_workers": 0}]}')
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(cluster))
    assert code == 2 and "'num_workers' is given twice" in err and "Fix:" in err


def test_a_device_given_as_stack_is_named_as_such(capsys):
    code, _, err = run_cli(capsys, "check", "--stack", "/dev/zero")
    assert code == 2 and "is a device, not a file" in err and "not found" not in err


def test_a_plan_with_a_wrong_cloud_or_cost_is_invalid_input(tmp_path, capsys):
    bad = tmp_path / "plan.json"
    bad.write_text(json.dumps({"cloud": "mars", "cost": 5}))
    code, _, err = run_cli(capsys, "cost", "--stack", "dev", "--against", str(bad))
    assert code == 2 and str(bad) in err and "cloud" in err and "cost" in err and "unexpected" not in err


def test_quoted_input_is_cut_to_a_readable_length(tmp_path, capsys):
    cluster = tmp_path / "c.json"
    cluster.write_text(_CLUSTER_TEXT)
    listing = tmp_path / "policies.json"
    listing.write_text(json.dumps({"policies": [{"name": "gpu", "definition": "y" * 2000}]}))
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(cluster), "--cluster-policy", str(listing))
    assert code == 2 and "List policies" in err and "'gpu'" in err and max(map(len, err.splitlines())) < 300
    element = tmp_path / "element.json"
    element.write_text(json.dumps({"spark_version": {"type": "y" * 2000}}))
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(cluster), "--cluster-policy", str(element))
    assert code == 2 and "unknown type" in err and max(map(len, err.splitlines())) < 300


def test_huge_prices_are_refused_and_tiny_ones_are_numbers(write_stack, tmp_path, capsys):
    huge = tmp_path / "huge.yaml"
    huge.write_text("node_types:\n  g5.xlarge: {usd_per_hour_on_demand: 1.0e+308}\n")
    code, _, err = run_cli(capsys, "cost", "--stack", "dev", "--prices", str(huge), "--format", "json")
    assert code == 2 and "not a finite number" in err
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text("node_types:\n  g5.xlarge: {usd_per_hour_on_demand: 1e-300}\n")
    assert run_cli(capsys, "cost", "--stack", "dev", "--prices", str(tiny), "--format", "json")[0] == 0


# --- interrupted runs ----------------------------------------------------------------------------------------------

def _interrupt_at(point: str, sig: int, argv: list[str], tmp_path: Path, *, group: bool = False) -> None:
    """Run ``argv`` paused at ``point`` (tests/pause_at.py), signal it once it says it stands there (never after a
    sleep: the outcome does not depend on the machine's speed), and check the one line, exit 130, nothing left.
    ``group``: the signal goes to the run's whole process group, as a terminal's Ctrl-C does (a JVM the run started
    gets it too), and its temporary directory is ``tmp_path/tmp``, which must be empty after."""
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)

    # No preexec_fn: it makes Popen fork this pytest worker in full, and a worker that ran the gRPC tests has gRPC's
    # fork handlers, which restart its poller thread in the child; closing the child's descriptors then broke that
    # thread's epoll, and its complaint ("Epoll1Poller ... Bad file descriptor") came first on the run's stderr (CI,
    # 2026-12-06). pause_at.py restores Python's SIGINT handler itself.
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "pause_at.py"), point, *argv], cwd=REPO,
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, process_group=0 if group else None,
                            env={**os.environ, "TMPDIR": str(scratch)})
    first = proc.stderr.readline().decode()
    while first.startswith("note: "):  # what the stack says before the pause (an endpoint's model comes first)
        first = proc.stderr.readline().decode()
    if first.strip() != READY:  # the run ended or failed before reaching the point: show why
        proc.kill()
        pytest.fail(f"never reached {point}: {first}{proc.communicate()[1].decode()}")
    if point == "write":
        assert [p.name for p in tmp_path.iterdir()] != [], "the temporary output exists at the pause"
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"hung after the signal at {point}")
    assert proc.returncode == 130, err
    assert err.decode().strip().splitlines() == ["interrupted: nothing was written."]
    assert not [p for p in tmp_path.iterdir() if p.name not in ("usage", "tmp")]
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("stackplan")]  # scratch directories removed
    if group:  # the JVM the run started ends too (at its stdin's end), and leaves nothing in the temporary directory
        _wait_until_gone(proc.pid)
        assert [p.name for p in scratch.iterdir()] == []


def _wait_until_gone(group: int, seconds: float = 60) -> None:
    """Wait for every process of process group ``group`` to end (a test fails naming what is left)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    listing = subprocess.run(["ps", "-e", "-o", "pgid=,pid=,args="], capture_output=True, text=True).stdout
    left = "\n".join(line for line in listing.splitlines() if line.split()[:1] == [str(group)])
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    pytest.fail(f"processes of the interrupted run still running after {seconds} s:\n{left}")


@pytest.mark.parametrize(("point", "sig"), [
    ("import", signal.SIGTERM), ("program", signal.SIGINT), ("write", signal.SIGINT),
    # in the program's own code: Pulumi's runtime catches it there and waited for RPCs that never came (a hang)
    ("body:2", signal.SIGTERM),
])
def test_an_interrupted_run_says_one_line_exits_130_and_leaves_nothing(tmp_path, point, sig):
    _interrupt_at(point, sig, ["preview", "--stack", "prod", "--json", "--out", str(tmp_path / "plan.json")], tmp_path)


def test_an_interrupt_inside_a_duckdb_query_of_advise_is_an_interrupt(tmp_path):
    """DuckDB turned Ctrl-C into its own "Query interrupted" error (exit 1)."""
    assert main(["sample-usage", "--stack", "dev", "--out", str(tmp_path / "usage"), "--days", "1"]) == 0
    _interrupt_at("duckdb", signal.SIGINT, ["advise", "--stack", "dev", "--usage", str(tmp_path / "usage"),
                                            "--out", str(tmp_path / "advice.txt")], tmp_path)


@pytest.mark.spark
@pytest.mark.parametrize(("point", "sig"), [
    ("spark", signal.SIGINT), ("spark", signal.SIGTERM),
    # issue 54, item 11: as the session starts (9-24 s into a user's run), pyspark's own SIGINT handler stood: it
    # cancelled jobs over the py4j connection a call was waiting on, so the exit waited for that call (11-18 s) or
    # the call broke into "cannot start a session" (exit 2); and the line went to the JVM's log, not the terminal
    ("spark-start", signal.SIGINT), ("spark-launch", signal.SIGINT),
])
def test_an_interrupt_inside_spark_in_advise_is_an_interrupt(tmp_path, point, sig):
    """py4j turned Ctrl-C into tracebacks and "Spark could not run the analysis" (exit 2), and SIGTERM left the
    stackplan-spark-* scratch directory behind: the signal to the whole process group, as a terminal sends it. The
    pauses wait in the JVM (``spark-start``: a call the JVM answers after 120 s) or for it, so an exit within the
    60 s `_interrupt_at` allows never waited for the JVM; the JVM is gone after and the temporary directory empty."""
    assert main(["sample-usage", "--stack", "dev", "--out", str(tmp_path / "usage"), "--days", "1"]) == 0
    _interrupt_at(point, sig, ["advise", "--stack", "dev", "--usage", str(tmp_path / "usage"), "--engine", "spark",
                               "--spark-master", "local[1]", "--out", str(tmp_path / "advice.txt")], tmp_path,
                  group=True)


@settings(max_examples=3, deadline=None, derandomize=False)
@given(point=st.one_of(st.integers(1, 5).map(lambda n: f"body:{n}"), st.integers(1, 30).map(lambda n: f"program:{n}"),
                       st.just("write"), st.just("import")),
       sig=st.sampled_from([signal.SIGINT, signal.SIGTERM]))
def test_an_interrupt_at_a_random_moment_of_a_preview_ends_the_same_way(tmp_path_factory, point, sig):
    """Random moments of a run, each a place the run says it reached (a registration, the program's own code, the
    write, the import), so the outcome never depends on timing."""
    tmp_path = tmp_path_factory.mktemp("interrupt")
    _interrupt_at(point, sig, ["preview", "--stack", "dev", "--json", "--out", str(tmp_path / "plan.json")], tmp_path)


# --- keep the class closed: random and mutated inputs to every subcommand -----------------------------------------

_STACK_TEXT = (REPO / "stacks" / "Pulumi.dev.yaml").read_text()
_CLUSTER_TEXT = json.dumps({"clusters": [{"cluster_name": "c", "spark_version": "17.3.x-gpu-ml-scala2.13",
                                          "node_type_id": "g5.xlarge", "num_workers": 2,
                                          "custom_tags": {"workload": "w", "cost_center": "c"}}]})
_PRICES_TEXT = "tier: premium\nspot_factor: {aws: 0.4}\nnode_types:\n  g5.xlarge: {usd_per_hour_on_demand: 1.0}\n"
_POLICY_TEXT = json.dumps({"databricks-cluster-configure-worker-bounds": {"max_workers_cap": 32}})


def _mutated(text: str) -> st.SearchStrategy[bytes]:
    data = text.encode()
    return st.one_of(
        st.binary(max_size=300),
        st.tuples(st.integers(0, len(data)), st.integers(0, 40), st.binary(max_size=20)).map(
            lambda t: data[:t[0]] + t[2] + data[t[0] + t[1]:]),
        st.tuples(st.integers(0, len(data))).map(lambda t: data[:t[0]]),
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["stack", "cluster", "prices", "policy"]), content=st.data())
def test_fuzzed_inputs_exit_0_1_or_2_without_traceback_or_leftovers(tmp_path_factory, kind, content):
    base = tmp_path_factory.mktemp("fuzz")
    text = {"stack": _STACK_TEXT, "cluster": _CLUSTER_TEXT, "prices": _PRICES_TEXT, "policy": _POLICY_TEXT}[kind]
    name = {"stack": "Pulumi.fz.yaml", "cluster": "c.json", "prices": "p.yaml", "policy": "pc.json"}[kind]
    source = base / name
    source.write_bytes(content.draw(_mutated(text)))
    out = base / "out" / "report.txt"
    out.parent.mkdir()
    argv = {"stack": ["preview", "--stack", str(source)],
            "cluster": ["check", "--cluster-json", str(source)],
            "prices": ["cost", "--stack", "dev", "--prices", str(source)],
            "policy": ["check", "--stack", "dev", "--policy-config", str(source)]}[kind]
    # In-process: an exception escaping main() is the traceback a user would see (the process entry point,
    # stackplan/__main__.py, only adds the exit; tests/test_stackspec.py runs it as a real process).
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([*argv, "--out", str(out)])
    assert code in (0, 1, 2), err.getvalue()
    assert "Traceback" not in err.getvalue()
    leftovers = [p.name for p in out.parent.iterdir() if p.name != "report.txt"]
    assert leftovers == []
    assert out.exists() == (code in (0, 1)), "a report is written exactly when the run succeeds"


# --- text is never markup, and never reaches a terminal or XML raw (issue 27, items 3 and 6) ------------------------

_HOSTILE = ["/dbfs/cache[/x]", "[red]boom[/red] [bold]", "jobClusters[train]", ":smile: [link=x]y[/link]",
            "evil\x1b[2J\x1b]0;pwn\x07\x01\ufffe\u009b31m\r"]
_RAW = ("\x1b", "\x07", "\x01", "\ufffe", "\u009b", "\r")


def _hostile_stack(tmp_path: Path, value: str) -> Path:
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:dev"]["spark_env_vars"] = {"CACHE": "/dbfs/cache[/x]", "NOTE": value}
    config["dbx-ai-infra:exceptions"] = [{"rule": "databricks-cluster-require-volumes-for-caches",
                                          "resource": "test-dev-cluster", "reason": f"[TICKET-7] {value}"}]
    path = tmp_path / "Pulumi.test.yaml"
    import yaml

    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


@pytest.mark.parametrize("value", _HOSTILE, ids=range(len(_HOSTILE)))
def test_brackets_and_controls_in_a_stack_are_shown_as_written_and_alike_in_preview_and_check(tmp_path, capsys, value):
    """`/dbfs/cache[/x]` was "unexpected MarkupError"; the violations table was printed a second time through markup,
    dropping `[excepted until ...: reason]` and `[train]`; an escape sequence reached the terminal raw."""
    stack = _hostile_stack(tmp_path, value)
    tables = {}
    for command in ("preview", "cost", "check"):
        code, out, err = run_cli(capsys, command, "--stack", str(stack))
        assert code == 0 and "Traceback" not in err and "unexpected" not in err, err
        assert not any(c in out for c in _RAW), out
        tables[command] = out[out.index("Policy violations"):] if command != "cost" else ""
        if command != "cost":
            flat = re.sub(r"\s+", " ", out.replace("│", " "))  # a table's cells, read across their wrapped lines
            assert "/dbfs/cache[/x]" in out and "[excepted: [TICKET-7]" in flat
    assert tables["preview"] == tables["check"]


def test_controls_in_a_cluster_name_are_escaped_in_every_format(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    name = "evil\x1b[2J\x1b]0;pwn\x07\x01\ufffe[red]x[/red]"
    clusters = tmp_path / "c.json"
    clusters.write_text(json.dumps({"clusters": [{"cluster_name": name, "spark_version": "17.3.x-scala2.13",
                                                  "node_type_id": "g5.xlarge", "num_workers": 2}]}))
    for fmt in ("table", "github", "junit", "sarif", "json"):  # the formats an audit takes
        code, out, err = run_cli(capsys, "check", "--cluster-json", str(clusters), "--format", fmt)
        assert code in (0, 1) and "Traceback" not in err, (fmt, err)
        if fmt in ("sarif", "json"):  # JSON escapes them itself, and keeps the value exact
            assert "\\u001b" in out and "\x1b" not in out
            continue
        assert not any(c in out for c in _RAW), fmt
        assert "\\x1b[2J" in out, fmt  # shown, escaped: the reader sees what was there
        if fmt == "junit":
            ET.fromstring(out.encode())  # well-formed XML


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.text(alphabet=st.sampled_from(list("[]/:\\x ab") + ["\x1b", "\x00", "\x07", "\x9b", "\ufffe",
                                                                     "\ud800", "\r", "\n", "\t", "é"]),
                     min_size=1, max_size=24),
       field=st.sampled_from(["cluster_name", "tag", "spark_env", "policy_id"]))
def test_any_markup_or_control_in_any_string_field_is_shown_safely(tmp_path_factory, value, field):
    import xml.etree.ElementTree as ET

    cluster = {"cluster_name": "c", "spark_version": "17.3.x-scala2.13", "node_type_id": "g5.xlarge",
               "num_workers": 2, "custom_tags": {"workload": "w", "cost_center": "c"}}
    if field == "tag":
        cluster["custom_tags"]["team"] = value
    elif field == "spark_env":
        cluster["spark_env_vars"] = {"HF_HOME": f"/dbfs/{value}"}
    else:
        cluster[field] = value
    path = tmp_path_factory.mktemp("ctl") / "c.json"
    path.write_text(json.dumps({"clusters": [cluster]}), encoding="utf-8", errors="surrogatepass")
    for fmt in ("table", "github", "junit"):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(["check", "--cluster-json", str(path), "--format", fmt])
        assert code in (0, 1, 2) and "Traceback" not in err.getvalue() and "unexpected" not in err.getvalue()
        shown = out.getvalue() + err.getvalue()
        assert not any(c in shown for c in ("\x1b", "\x00", "\x07", "\x9b", "\ufffe", "\ud800", "\r"))
        if fmt == "junit" and code in (0, 1):
            ET.fromstring(out.getvalue().encode())


# --- values past Databricks' limits and past Python's (issue 27, item 7) --------------------------------------------

def _endpoint(**over):
    return {"entity": "a.b.c", "entity_version": "1", "model": {"params_billions": 7, "precision": "fp16"}, **over}


@pytest.mark.parametrize(("change", "fragment"), [
    ({"dbx-ai-infra:serving": {"endpoints": {"e": _endpoint(concurrency={"min": 4, "max": 4_000_000})}}},
     "serving.endpoints.e.concurrency.max: Input should be less than or equal to 1024"),
    ({"dbx-ai-infra:serving": {"endpoints": {f"e{i}": _endpoint(concurrency={"min": 4, "max": 1024})
                                             for i in range(5)}}},
     "concurrency.max add up to 5,120, over Model Serving's 4,096 per workspace"),
    ({"dbx-ai-infra:tags": {"workload": "w", "cost_center": "c", "": "x"}}, "tags: a tag key is empty"),
    ({"dbx-ai-infra:tags": {"workload": "w", "cost_center": "c", "AWS:team": "x"}}, "which AWS keeps for itself"),
    ({"dbx-ai-infra:tags": {"workload": "w", "cost_center": "c", "team": "a\x00b"}}, "control character \\x00"),
    ({"dbx-ai-infra:tags": {"workload": "w", "cost_center": "c\x1b[2J"}}, "control character \\x1b"),
])
def test_values_past_databricks_limits_are_invalid_input(write_stack, capsys, change, fragment):
    code, _, err = run_cli(capsys, "preview", "--stack", str(write_stack({**BASE_CONFIG, **change})))
    assert code == 2 and fragment in err and "Fix:" in err, err
    assert "\x1b" not in err and "\x00" not in err


@pytest.mark.parametrize(("text", "fragment"), [
    ('{"clusters": [{"cluster_name": "c", "num_workers": 1, "aws_attributes": {"first_on_demand": 1e400}}]}',
     "the number 1e400 is too large"),
    ('{"clusters": [{"cluster_name": "c", "num_workers": ' + "9" * 5000 + "}]}",
     "holds a number of more than 4,300 digits"),
])
def test_numbers_python_will_not_read_are_named_not_leaked(tmp_path, capsys, text, fragment):
    """`first_on_demand: 1e400` was read as infinity, hence absent; 5,000 digits leaked Python's limit text."""
    path = tmp_path / "c.json"
    path.write_text(text)
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(path))
    assert code == 2 and fragment in err and "set_int_max_str_digits" not in err, err


def test_a_stack_number_of_5000_digits_is_invalid_input(write_stack, capsys):
    text = write_stack(BASE_CONFIG).read_text().replace("num_workers: 2", "num_workers: " + "9" * 5000, 1)
    code, _, err = run_cli(capsys, "preview", "--stack", str(write_stack(text=text)))
    assert code == 2 and "more than 4,300 digits" in err and "set_int_max_str_digits" not in err


def test_a_plan_with_an_absurd_number_given_to_against_is_invalid_input(tmp_path, capsys):
    """-1e308 in a saved plan was "unexpected InvalidOperation" (the decimal arithmetic of costs)."""
    code, out, _ = run_cli(capsys, "preview", "--stack", "dev", "--json")
    plan = json.loads(out)
    plan["cost"]["total"]["monthly"]["expected"] = -1e308
    base = tmp_path / "base.json"
    base.write_text(json.dumps(plan))
    code, _, err = run_cli(capsys, "cost", "--stack", "dev", "--against", str(base))
    assert code == 2 and "cost.total.monthly.expected" in err and "unexpected" not in err


@pytest.mark.parametrize(("advise", "fragment"), [
    ({"gpu_low_percent": 80}, "advise.gpu_low_percent: puts gpu_low_percent (80) at or above gpu_high_percent (60)"),
    ({"gpu_high_percent": 20}, "advise.gpu_high_percent: puts gpu_low_percent (30) at or above gpu_high_percent (20)"),
    ({"gpu_idle_percent": 40}, "puts gpu_idle_percent (40) at or above gpu_low_percent (30)"),
    ({"idle_share_percent": 150}, "advise.idle_share_percent: must be at most 100"),
])
def test_advise_thresholds_out_of_order_or_range_are_refused(tmp_path, capsys, advise, fragment):
    config = tmp_path / "pc.json"
    config.write_text(json.dumps({"advise": advise}))
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--policy-config", str(config))
    assert code == 2 and fragment in err, err


def test_an_out_inside_a_directory_the_run_reads_is_refused(tmp_path, capsys):
    """`check --cluster-json DIR --out DIR/report.json` read its own report as an export on the next run."""
    exports = tmp_path / "export"
    exports.mkdir()
    (exports / "clusters.json").write_text(json.dumps({"clusters": []}))
    for out in (exports / "report.json", exports / "sub" / ".." / "r.json"):
        code, _, err = run_cli(capsys, "check", "--cluster-json", str(exports), "--json", "--out", str(out))
        assert code == 2 and "a directory this run reads" in err
    assert sorted(p.name for p in exports.iterdir()) == ["clusters.json"]
    code, _, _ = run_cli(capsys, "check", "--cluster-json", str(exports), "--json", "--out", str(tmp_path / "r.json"))
    assert code == 0 and (tmp_path / "r.json").exists()


def test_bidirectional_overrides_in_a_name_are_shown_escaped(tmp_path, capsys):
    """U+202E reverses what follows on screen ("gpu\u202etxt.exe" reads as "gpuexe.txt"): shown as an escape."""
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"clusters": [{"cluster_name": "gpu\u202etxt.exe", "num_workers": 1,
                                              "spark_version": "17.3.x-gpu-ml-scala2.13", "node_type_id": "g5.xlarge"}]}))
    for fmt in ("table", "github", "junit"):
        code, out, err = run_cli(capsys, "check", "--cluster-json", str(path), "--format", fmt)
        assert "\u202e" not in out + err and "gpu\\u202etxt.exe" in out, fmt
