"""GPU memory sizing: the need formulas and the choice of node type, with the errors a user sees."""

from __future__ import annotations

import doctest

import pytest

import dbx_ai_infra.gpucatalog.sizing
from dbx_ai_infra import gpucatalog
from dbx_ai_infra.gpucatalog import (
    BYTES_PER_PARAM,
    CLOUDS,
    INFERENCE_OVERHEAD,
    Catalog,
    NodeType,
    SizingError,
    load_catalog,
    memory_need_gb,
    pick_node_type,
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


# --- memory_need_gb -------------------------------------------------------------------------------------------


def test_worked_example_7b_fp16_inference(catalog):
    need = memory_need_gb(7, "fp16", "inference")
    assert need == 16.8  # 7 * 2 * 1.2
    # A T4 (16 GB) is too tight ...
    with pytest.raises(SizingError, match=r"16\.8 GB"):
        pick_node_type(catalog, "aws", "t4", need, pinned="g4dn.xlarge")
    assert all(n.total_gpu_memory_gb < need for n in catalog.family_nodes("aws", "t4") if n.gpu_count == 1)
    # ... an A10G (24 GB) fits: the smallest a10g node type on AWS.
    assert pick_node_type(catalog, "aws", "a10g", need).node_type_id == "g5.xlarge"


# --- the seeds' worked examples -------------------------------------------------------------------------------


def test_seed_7b_fp16_inference_is_an_a10g_not_a_t4(catalog):
    est = gpucatalog.estimate(7, "fp16", "inference")
    assert est.need_gb == 16.8 and est.formula == "7B x 2 B x 1.2 = 16.8 GB"
    assert pick_node_type(catalog, "aws", "a10g", est.need_gb).node_type_id == "g5.xlarge"
    single_t4 = catalog.get("g4dn.xlarge")
    assert single_t4.total_gpu_memory_gb < est.need_gb  # "T4 16GB would be tight"


def test_seed_7b_int4_inference_fits_a_t4(catalog):
    est = gpucatalog.estimate(7, "int4", "inference")
    assert est.need_gb == 4.2
    choice = gpucatalog.choose_node(catalog, "aws", "t4", est.need_gb)
    assert choice.node.node_type_id == "g4dn.xlarge" and choice.node.gpu_count == 1 and choice.sharded is None


@pytest.mark.parametrize("cloud,node", [("aws", "g5.xlarge"), ("azure", "Standard_NV36ads_A10_v5")])
def test_seed_7b_fp16_lora_fits_one_24gb_gpu(catalog, cloud, node):
    est = gpucatalog.estimate(7, "fp16", "training", "lora")
    assert est.need_gb == 18.67 and est.formula == "7B x 2 B x 4 / 3 = 18.67 GB" and "LoRA" in est.rule
    choice = gpucatalog.choose_node(catalog, cloud, "a10g", est.need_gb, workload="training")
    assert choice.node.node_type_id == node and choice.node.gpu_count == 1 and choice.sharded is None


def test_seed_7b_fp16_full_fine_tune_is_about_112_gb():
    est = gpucatalog.estimate(7, "fp16", "training", "full")
    assert est.need_gb == 112 and est.formula == "7B x 16 B = 112 GB"


def test_one_gpu_when_one_gpu_fits_else_sharded_with_the_next_smaller_named(catalog):
    # 16.8 GB on the t4 family: no single T4 holds it, so a 4 x T4 node, sharded, and the 1 x T4 named as too small
    choice = gpucatalog.choose_node(catalog, "aws", "t4", 16.8)
    assert choice.node.gpu_count > 1 and choice.node.total_gpu_memory_gb >= 16.8
    assert choice.sharded == f"sharded across {choice.node.gpu_count} GPUs (tensor parallel)"
    assert choice.next_smaller is not None and choice.next_smaller.total_gpu_memory_gb < 16.8
    training = gpucatalog.choose_node(catalog, "aws", "t4", 16.8, workload="training")
    assert "FSDP or DeepSpeed" in training.sharded
    # every single-GPU node that holds the need beats any multi-GPU node, whatever their order by total memory
    for cloud in CLOUDS:
        for family in catalog.families(cloud):
            nodes = catalog.family_nodes(cloud, family)
            for need in {n.gpu_memory_gb * 0.9 for n in nodes}:
                picked = gpucatalog.choose_node(catalog, cloud, family, need).node
                if any(n.gpu_count == 1 and n.gpu_memory_gb >= need for n in nodes):
                    assert picked.gpu_count == 1, (cloud, family, need, picked.node_type_id)


def test_module_docstring_examples_hold():
    result = doctest.testmod(dbx_ai_infra.gpucatalog.sizing, verbose=False)
    assert result.attempted >= 2
    assert result.failed == 0


@pytest.mark.parametrize(
    "params, precision, expected",
    [
        (7, "fp16", 7 * 2 * 1.2),
        (7, "bf16", 7 * 2 * 1.2),
        (7, "fp32", 7 * 4 * 1.2),
        (13, "int8", 13 * 1 * 1.2),
        (70, "int4", 70 * 0.5 * 1.2),
        (70, "bf16", 70 * 2 * 1.2),
        (1.1, "bf16", 1.1 * 2 * 1.2),
    ],
)
def test_inference_need(params, precision, expected):
    assert memory_need_gb(params, precision, "inference") == round(expected, 2)


@pytest.mark.parametrize(
    "params, precision, method, expected",
    [
        # Float precisions: 16 bytes per parameter (weights, gradients, Adam state).
        (7, "bf16", "full", 7 * 16),
        (7, "fp16", "full", 7 * 16),
        (7, "fp32", "full", 7 * 16),
        (70, "bf16", "full", 70 * 16),
        # Quantised: bytes per parameter x 4.
        (7, "int4", "full", 7 * 0.5 * 4),
        (13, "int8", "full", 13 * 1 * 4),
        # LoRA (QLoRA on int8/int4): parameters x bytes x 4 / 3, seed 000's rule.
        (7, "bf16", "lora", 7 * 2 * 4 / 3),
        (13, "fp16", "lora", 13 * 2 * 4 / 3),
        (7, "fp32", "lora", 7 * 4 * 4 / 3),
        (7, "int4", "lora", 7 * 0.5 * 4 / 3),
        (70, "int8", "lora", 70 * 1 * 4 / 3),
    ],
)
def test_training_need(params, precision, method, expected):
    assert memory_need_gb(params, precision, "training", method) == round(expected, 2)


def test_training_numbers_spelled_out():
    assert memory_need_gb(7, "bf16", "training") == 112.0
    assert memory_need_gb(7, "bf16", "training", "lora") == 18.67
    assert memory_need_gb(7, "int4", "training") == 14.0
    assert memory_need_gb(7, "int4", "training", "lora") == 4.67


def test_results_are_rounded_to_two_decimals():
    for params in (0.35, 1.1, 3.3, 6.7, 13.7):
        for precision in BYTES_PER_PARAM:
            for workload in ("inference", "training"):
                for method in ("full", "lora"):
                    need = memory_need_gb(params, precision, workload, method)
                    assert need == round(need, 2)


def test_need_grows_with_size_and_shrinks_with_precision():
    for workload in ("inference", "training"):
        for method in ("full", "lora"):
            sizes = [memory_need_gb(p, "bf16", workload, method) for p in (1, 3, 7, 13, 70)]
            assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
            by_precision = [memory_need_gb(7, p, workload, method) for p in ("fp32", "bf16", "int8", "int4")]
            assert by_precision == sorted(by_precision, reverse=True)


def test_inference_overhead_and_lora_are_consistent():
    # Inference always needs less than full training in the same precision, and LoRA less than full.
    for precision in BYTES_PER_PARAM:
        full = memory_need_gb(13, precision, "training", "full")
        assert memory_need_gb(13, precision, "training", "lora") < full
        assert memory_need_gb(13, precision, "inference") <= full
    assert INFERENCE_OVERHEAD == pytest.approx(memory_need_gb(10, "fp32", "inference") / (10 * 4))


def test_method_does_not_change_inference():
    assert memory_need_gb(7, "bf16", "inference", "lora") == memory_need_gb(7, "bf16", "inference")


@pytest.mark.parametrize(
    "args, word",
    [
        ((7, "bf16", "serving"), "workload"),
        ((7, "bf16", "Training"), "workload"),
        ((7, "fp8", "inference"), "precision"),
        ((7, "bf16", "training", "qlora"), "method"),
        ((0, "bf16", "inference"), "positive"),
        ((-7, "bf16", "inference"), "positive"),
        ((True, "bf16", "inference"), "positive"),
        (("7", "bf16", "inference"), "positive"),
    ],
)
def test_bad_inputs_are_value_errors(args, word):
    with pytest.raises(ValueError, match=word) as excinfo:
        memory_need_gb(*args)
    message = str(excinfo.value)
    assert message[0].isupper() and message.endswith(".")


# --- pick_node_type -------------------------------------------------------------------------------------------


def test_multi_gpu_selection_70b_bf16_inference(catalog):
    need = memory_need_gb(70, "bf16", "inference")
    assert need == 168.0
    node = pick_node_type(catalog, "aws", "a100", need)
    assert node.node_type_id == "p4d.24xlarge"
    assert node.total_gpu_memory_gb == 320
    assert node.gpu_memory_gb < need  # no single GPU holds it; the node does


@pytest.mark.parametrize(
    "cloud, family, need, expected",
    [
        ("gcp", "a100", 168.0, "a2-highgpu-8g"),  # 4g has 160 GB: too small
        ("gcp", "a100", 160.0, "a2-highgpu-4g"),  # exactly the node's memory fits
        ("azure", "a100-80gb", 168.0, "Standard_NC96ads_A100_v4"),
        ("azure", "a100-80gb", 80.0, "Standard_NC24ads_A100_v4"),
        ("aws", "a10g", 24.0, "g5.xlarge"),
        ("aws", "a10g", 24.01, "g5.12xlarge"),  # 4 x A10G
        ("aws", "t4", 16.8, "g4dn.12xlarge"),  # 4 x T4, the only t4 node with more than 16 GB
        ("azure", "t4", 16.8, "Standard_NC64as_T4_v3"),
        ("gcp", "l4", 30.0, "g2-standard-24"),  # 2 x L4
        ("aws", "l4", 20.0, "g6.xlarge"),
        ("aws", "h100", 500.0, "p5.48xlarge"),
        ("azure", "h100", 90.0, "Standard_NC40ads_H100_v5"),  # H100 NVL, 94 GB
        ("azure", "a10g", 30.0, "Standard_NV72ads_A10_v5"),
        ("aws", "l40s", 0.0, "g6e.xlarge"),
    ],
)
def test_picks_smallest_node_that_fits(catalog, cloud, family, need, expected):
    assert pick_node_type(catalog, cloud, family, need).node_type_id == expected


def test_pick_is_the_first_fit_in_family_order(catalog):
    for cloud in CLOUDS:
        for family in catalog.families(cloud):
            nodes = catalog.family_nodes(cloud, family)
            for need in sorted({n.total_gpu_memory_gb for n in nodes} | {1.0, 33.3, 100.0}):
                if need > nodes[-1].total_gpu_memory_gb:
                    continue
                picked = pick_node_type(catalog, cloud, family, need)
                assert picked.total_gpu_memory_gb >= need
                assert not picked.retired
                before = nodes[: nodes.index(picked)]
                assert all(n.total_gpu_memory_gb < need for n in before)


def test_cheaper_node_wins_among_equal_memory():
    def node(node_type_id, price, vcpus=8):
        return NodeType(
            cloud="aws", node_type_id=node_type_id, family="a10g", gpu="NVIDIA A10G", gpu_count=1,
            gpu_memory_gb=24.0, vcpus=vcpus, memory_gb=32.0, usd_per_hour_on_demand=price, dbu_per_hour=1.0,
            price_region="us-east-1", price_date="2026-07-20", dbu_date="2026-04-10", sources=("t",),
        )

    cat = Catalog([node("x.dear", 2.0), node("x.cheap", 1.0, vcpus=32), node("x.unpriced", None)], {"t": "t"})
    assert pick_node_type(cat, "aws", "a10g", 20).node_type_id == "x.cheap"


# --- errors -----------------------------------------------------------------------------------------------------


def test_family_not_offered_on_cloud(catalog):
    with pytest.raises(SizingError) as excinfo:
        pick_node_type(catalog, "gcp", "t4", 10)
    assert str(excinfo.value) == (
        "GPU family 't4' has no Databricks node type on gcp; families on gcp: a100, a100-80gb, h100, l4. "
        "Pick one of those."
    )


def test_family_not_offered_names_the_families_of_that_cloud(catalog):
    with pytest.raises(SizingError) as excinfo:
        pick_node_type(catalog, "azure", "l4", 10)
    message = str(excinfo.value)
    assert "'l4'" in message and "azure" in message
    assert "t4, a10g, a100, a100-80gb, h100" in message
    assert message.endswith("Pick one of those.")


def test_retired_azure_v100_is_never_picked(catalog):
    with pytest.raises(SizingError) as excinfo:
        pick_node_type(catalog, "azure", "v100", 10)
    message = str(excinfo.value)
    assert "'v100'" in message and "azure" in message
    assert "retired" in message and "2025-09-30" in message
    assert "Standard_NC6s_v3" in message
    assert "families on azure: t4, a10g, a100, a100-80gb, h100" in message


def test_pinned_valid_node_is_returned(catalog):
    node = pick_node_type(catalog, "aws", "a10g", 16.8, pinned="g5.4xlarge")
    assert node.node_type_id == "g5.4xlarge"
    assert node is catalog.get("g5.4xlarge")
    # A pin may be larger than needed.
    assert pick_node_type(catalog, "gcp", "h100", 1, pinned="a3-highgpu-8g").node_type_id == "a3-highgpu-8g"


@pytest.mark.parametrize("need, pinned, said", [
    pytest.param(("aws", "a100", memory_need_gb(70, "bf16", "training")), None,
                 ("1120 GB", "p4d.24xlarge", "320 GB", "precision", "LoRA", "larger GPU family", "a100-80gb"),
                 id="nothing big enough: the largest node, what shrinks the need, a larger family"),
    pytest.param(("aws", "t4", 100), None, ("100 GB", "g4dn.12xlarge", "64 GB", "v100 (p3.16xlarge, 128 GB)"),
                 id="nothing big enough: the smallest fit among the other families"),
    pytest.param(("aws", "h100", 5000), None, ("5000 GB", "p5.48xlarge", "640 GB", "split"),
                 id="nothing big enough anywhere: split"),
    pytest.param(("aws", "a10g", 16.8), "g5.mega", ("'g5.mega'", "not a known", "g5.xlarge", "g5.12xlarge",
                                                    "drop the pin"), id="unknown node type: a few of the family's"),
    pytest.param(("azure", "t4", 10), "Standard_D4s_v3", ("CPU node type", "Standard_NC4as_T4_v3"), id="cpu node"),
    pytest.param(("azure", "a10g", 16.8), "g5.xlarge", ("'g5.xlarge'", "belongs to aws", "not azure",
                                                        "Standard_NV36ads_A10_v5"), id="another cloud's"),
    pytest.param(("aws", "h100", 100), "a3-megagpu-8g", ("gcp",), id="unknown id named like another cloud's"),
    pytest.param(("azure", "v100", 10), "Standard_NC6s_v3", ("'Standard_NC6s_v3'", "retired", "2025-09-30",
                                                             "t4, a10g, a100, a100-80gb, h100"), id="retired"),
    pytest.param(("aws", "t4", 10), "g5.xlarge", ("'g5.xlarge'", "'a10g'", "not 't4'", "g4dn.xlarge"),
                 id="another family's"),
    pytest.param(("aws", "t4", 16.8), "g4dn.xlarge", ("'g4dn.xlarge'", "16 GB", "16.8 GB", "g4dn.12xlarge"),
                 id="too small: the family's node that would fit"),
    pytest.param(("gcp", "l4", 300), "g2-standard-96", ("192 GB", "300 GB", "precision", "LoRA"),
                 id="too small, nothing larger in the family"),
])
def test_a_need_no_node_type_serves_is_refused_saying_why(catalog, need, pinned, said):
    with pytest.raises(SizingError) as excinfo:
        pick_node_type(catalog, *need, pinned=pinned)
    message = str(excinfo.value)
    assert [part for part in said if part not in message] == [], message


@pytest.mark.parametrize(
    "args, word",
    [
        (("oci", "a100", 10), "cloud"),
        (("aws", "mi300x", 10), "GPU family"),
        (("aws", "a100", -1), "memory need"),
        (("aws", "a100", "lots"), "memory need"),
    ],
)
def test_bad_requests(catalog, args, word):
    with pytest.raises(SizingError, match=word):
        pick_node_type(catalog, *args)


def test_every_error_message_is_a_sentence_with_a_fix(catalog):
    cases = [
        ("gcp", "t4", 10, None),
        ("azure", "v100", 10, None),
        ("aws", "a100", 1120, None),
        ("aws", "a10g", 10, "g5.mega"),
        ("azure", "a10g", 10, "g5.xlarge"),
        ("azure", "v100", 10, "Standard_NC6s_v3"),
        ("aws", "t4", 10, "g5.xlarge"),
        ("aws", "t4", 16.8, "g4dn.xlarge"),
    ]
    fix_words = ("Pick", "Pin", "pin", "Use", "Set")
    for cloud, family, need, pinned in cases:
        with pytest.raises(SizingError) as excinfo:
            pick_node_type(catalog, cloud, family, need, pinned=pinned)
        message = str(excinfo.value)
        assert message[0].isupper() and message.endswith("."), message
        assert any(word in message for word in fix_words), message
        assert isinstance(excinfo.value, ValueError)
