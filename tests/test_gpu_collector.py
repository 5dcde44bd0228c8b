"""The GPU collector init script (issue 14), run for real on recorded nvidia-smi output (a stand-in nvidia-smi on
PATH prints it), one sample, into a temporary directory."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "dbx_ai_infra" / "collector" / "gpu_collector.sh"
RECORDED = ROOT / "tests" / "data" / "nvidia-smi" / "a100x8.csv"
COLUMNS = ["cluster_id", "instance_id", "driver", "gpu_index", "start_time", "end_time", "gpu_util_percent",
           "gpu_mem_used_mb", "gpu_mem_total_mb"]

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("awk") is None,
                                reason="the collector is a bash script")


def _env(tmp_path: Path, *, driver: str = "FALSE", output: Path | None = RECORDED,
         out: Path | None = None) -> dict[str, str]:
    """The script's environment: a stand-in nvidia-smi (none at all when ``output`` is None: a CPU node), and every
    path it writes (Volume, local spool, log) under ``tmp_path``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if output is not None:
        fake = bin_dir / "nvidia-smi"
        fake.write_text(f"#!/bin/bash\nif [ \"$1\" = -L ]; then echo 'GPU 0: NVIDIA A100 (UUID: GPU-0)'; "
                        f"else cat '{output}'; fi\n")
        fake.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin",
            "GPU_TIMELINE_DIR": str(out or tmp_path / "volume" / "gpu_timeline"),
            "DB_CLUSTER_ID": "0101-abc", "DB_IS_DRIVER": driver, "COLLECTOR_INSTANCE_ID": "i-0123",
            "COLLECTOR_ONCE": "1", "COLLECTOR_SPOOL_DIR": str(tmp_path / "spool"),
            "COLLECTOR_LOG": str(tmp_path / "collector.log")}


def _collect(tmp_path: Path, *, driver: str = "FALSE", output: Path = RECORDED) -> list[Path]:
    out = tmp_path / "volume" / "gpu_timeline"
    subprocess.run(["bash", str(SCRIPT)], env=_env(tmp_path, driver=driver, output=output), check=True, timeout=30)
    return sorted(out.rglob("*"))


def test_one_sample_is_one_whole_csv_file_per_node_with_a_row_per_gpu(tmp_path):
    files = [p for p in _collect(tmp_path) if p.is_file()]
    assert len(files) == 1 and files[0].parent.parts[-2:] == ("0101-abc", "i-0123")
    assert files[0].suffix == ".csv" and ":" not in files[0].name  # a name every file system takes
    with files[0].open() as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == COLUMNS
    assert [r["gpu_index"] for r in rows] == [str(i) for i in range(8)]
    assert {(r["cluster_id"], r["instance_id"], r["driver"]) for r in rows} == {("0101-abc", "i-0123", "false")}
    assert rows[0]["gpu_util_percent"] == "97" and rows[0]["gpu_mem_used_mb"] == "38211"
    assert rows[0]["gpu_mem_total_mb"] == "40960"
    assert rows[5]["gpu_util_percent"] == ""  # [N/A] is unknown, never 0
    assert rows[0]["start_time"] < rows[0]["end_time"] and rows[0]["start_time"].endswith("Z")


def test_the_driver_is_marked_and_no_partial_file_is_left(tmp_path):
    paths = _collect(tmp_path, driver="TRUE")
    assert not [p for p in paths if p.name.endswith(".tmp")]
    (data,) = [p for p in paths if p.is_file()]
    assert {r["driver"] for r in csv.DictReader(data.open())} == {"true"}


def test_garbage_lines_are_skipped(tmp_path):
    odd = tmp_path / "odd.csv"
    odd.write_text("No devices were found\n0, 50, 100, 24576\n")
    (data,) = [p for p in _collect(tmp_path, output=odd) if p.is_file()]
    rows = list(csv.DictReader(data.open()))
    assert [(r["gpu_index"], r["gpu_util_percent"]) for r in rows] == [("0", "50")]


def test_a_node_without_a_gpu_runs_no_collector(tmp_path):
    """A CPU driver has no nvidia-smi: nothing is written (it used to write header-only files every minute)."""
    run = subprocess.run(["bash", str(SCRIPT)], env=_env(tmp_path, output=None), timeout=30, check=False)
    assert run.returncode == 0
    assert not (tmp_path / "volume").exists() and not (tmp_path / "spool").exists()
    assert "no GPU on this node" in (tmp_path / "collector.log").read_text()


def test_a_volume_that_cannot_be_written_keeps_the_sample_on_local_disk_until_it_can(tmp_path):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the Volume directory should be")
    env = _env(tmp_path, out=blocked / "gpu_timeline")
    assert subprocess.run(["bash", str(SCRIPT)], env=env, timeout=30, check=False).returncode == 0
    kept = sorted((tmp_path / "spool").glob("*.csv"))
    assert len(kept) == 1 and "kept on local disk" in (tmp_path / "collector.log").read_text()
    # the Volume is back: the next minute moves the kept sample and the new one, whole
    blocked.unlink()
    subprocess.run(["bash", str(SCRIPT)], env=env, timeout=30, check=True)
    moved = sorted((blocked / "gpu_timeline" / "0101-abc" / "i-0123").glob("*"))
    assert kept[0].name in {p.name for p in moved} and not [p for p in moved if p.name.endswith(".tmp")]
    assert not list((tmp_path / "spool").glob("*.csv"))


def test_without_a_volume_directory_it_refuses_to_start(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GPU_TIMELINE_DIR"}
    done = subprocess.run(["bash", str(SCRIPT)], env={**env, "COLLECTOR_ONCE": "1"}, capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode != 0 and "set GPU_TIMELINE_DIR" in done.stderr


# --- attached to the stack's clusters ---------------------------------------------------------------------------------

def test_the_program_uploads_the_collector_and_every_cluster_runs_it(plan_of):
    import base64

    from conftest import resources

    plan = plan_of("prod")
    # the script lives on the code Volume, which only the deployer writes (the telemetry Volume is writable by the
    # clusters' identity, which could then replace what every cluster runs at start)
    (script,) = [r for r in resources(plan, "file:File") if r["inputs"]["path"].endswith("gpu_collector.sh")]
    assert script["inputs"]["path"] == "/Volumes/ai_prod/platform/code/init/gpu_collector.sh"
    assert base64.b64decode(script["inputs"]["contentBase64"]).decode() == SCRIPT.read_text()
    clusters = [r["inputs"] for r in resources(plan, "cluster:Cluster")]
    clusters += [jc["newCluster"] for r in resources(plan, "job:Job") for jc in r["inputs"]["jobClusters"]]
    assert len(clusters) == 2  # the inference cluster and the training job's
    for c in clusters:
        assert c["initScripts"] == [{"volumes": {"destination": script["inputs"]["path"]}}]
        assert c["sparkEnvVars"]["GPU_TIMELINE_DIR"] == "/Volumes/ai_prod/ops/telemetry/gpu_timeline"
        assert c["sparkEnvVars"]["COLLECTOR_INTERVAL_SECONDS"] == "60"
    # the clusters' identity may write the samples
    sp = "6f1c2b8e-4d3a-4b7e-9c21-0a5e8d7f3b64"
    (grant,) = [r for r in resources(plan, "grant:Grant") if r["inputs"].get("volume") == "ai_prod.ops.telemetry"
                and r["inputs"]["principal"] == sp]
    assert grant["inputs"]["privileges"] == ["READ_VOLUME", "WRITE_VOLUME"]


def test_monitoring_can_be_switched_off(write_stack):
    from conftest import BASE_CONFIG, resources

    from dbx_ai_infra.engine.engine import run_program
    from dbx_ai_infra.stackspec import load_stack

    plan = run_program(load_stack(str(write_stack({**BASE_CONFIG, "dbx-ai-infra:monitoring": {"enabled": False}},
                                                  name="quiet")))).to_json()
    assert resources(plan, "file:File") == []
    assert all("initScripts" not in r["inputs"] for r in resources(plan, "cluster:Cluster"))
    assert not [r for r in resources(plan, "schema:Schema") if r["inputs"]["name"] == "ops"]


def test_every_cluster_and_job_cluster_names_its_stack_and_workload_in_tags(plan_of):
    """Telemetry rows carry a cluster's tags (system.compute.clusters.tags); a job run's cluster has a name Databricks
    makes up, so the tags make the match to the stack's workload certain: dbx_stack + workload_type."""
    from conftest import resources

    for stack in ("prod", "dev", "azure-prod", "gcp-dev"):
        plan = plan_of(stack)
        tags = [(r["name"], r["inputs"]["customTags"]) for r in resources(plan, "cluster:Cluster")]
        tags += [(r["name"], jc["newCluster"]["customTags"]) for r in resources(plan, "job:Job")
                 for jc in r["inputs"].get("jobClusters") or []]
        assert tags
        for name, t in tags:
            assert t["dbx_stack"] == stack, name
            assert t["workload_type"] in ("training", "inference", "interactive"), name
