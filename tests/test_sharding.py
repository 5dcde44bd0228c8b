"""Sharded multi-node training (issue 28, part 5): `model.sharding: fsdp | deepspeed_zero3` splits the training
need over every GPU of the workers; the sizing line shows the arithmetic."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import BASE_CONFIG

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.gpucatalog import SizingError, choose_sharded_node, load_catalog
from dbx_ai_infra.gpucatalog.sizing import SHARDING_OVERHEAD, per_gpu_need_gb


def seventy_b(sharding: str | None, workers: int = 4, **over) -> dict:
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:gpu_family"] = "h100"
    model = {"params_billions": 70, "precision": "bf16", "method": "full"}
    if sharding:
        model["sharding"] = sharding
    config["dbx-ai-infra:training"] = {"num_workers": workers, "model": model, **over}
    config.pop("dbx-ai-infra:inference")
    config.pop("dbx-ai-infra:dev")
    return config


def test_a_70b_full_fine_tune_is_refused_on_one_node_and_the_message_names_sharding(write_stack, capsys):
    assert main(["preview", "--stack", str(write_stack(seventy_b(None)))]) == 2
    err = capsys.readouterr().err
    assert "1120 GB" in err and "model.sharding: fsdp (or deepspeed_zero3)" in err


@pytest.mark.parametrize(("how", "label"), [("fsdp", "FSDP (full sharding)"), ("deepspeed_zero3", "DeepSpeed ZeRO-3")])
def test_sharded_over_four_p5_nodes_it_fits_and_the_line_shows_the_arithmetic(write_stack, capsys, how, label):
    assert main(["preview", "--stack", str(write_stack(seventy_b(how))), "--json"]) in (0, 1)
    plan = json.loads(capsys.readouterr().out)
    (line,) = [s for s in plan["sizing"] if s["workload"] == "training"]
    assert line["node_type_id"] == "p5.48xlarge"
    per_gpu = 1120 * SHARDING_OVERHEAD / 32
    assert line["sharded"] == (f"{label} across 4 workers x 8 GPUs = 32 GPUs: 1120 GB x {SHARDING_OVERHEAD:g} / 32 = "
                               f"{per_gpu:g} GB per GPU (of 80 GB)")
    # each node is tagged with its share, so the GPU-memory-fit policy judges the node it runs on
    (cluster,) = [r for r in plan["resources"] if r["type"] == "databricks:index/cluster:Cluster"]
    assert float(cluster["inputs"]["customTags"]["gpu_memory_need_gb"]) == round(1120 * SHARDING_OVERHEAD / 4, 2)
    assert not [v for v in plan["violations"] if v["policy"] == "databricks-cluster-require-gpu-memory-fit"]


def test_the_node_choice_honours_the_workers_and_refuses_too_few():
    catalog = load_catalog()
    assert choose_sharded_node(catalog, "aws", "h100", 1120, 4, "fsdp").node.node_type_id == "p5.48xlarge"
    assert per_gpu_need_gb(1120, 32) == 42.0
    with pytest.raises(SizingError, match="Add workers"):
        choose_sharded_node(catalog, "aws", "h100", 1120, 1, "fsdp")  # 8 GPUs: 168 GB each


def test_sharding_across_nodes_is_for_training(write_stack, capsys):
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:inference"]["model"]["sharding"] = "fsdp"
    assert main(["preview", "--stack", str(write_stack(config))]) == 2
    assert "dbx-ai-infra:inference.model.sharding: is fsdp, but sharding across nodes is for training" in \
        capsys.readouterr().err
