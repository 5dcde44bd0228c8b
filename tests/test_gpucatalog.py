"""The GPU node catalog: the packaged data file, lookups, ordering, id recognition and data-file validation."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest
import yaml

from dbx_ai_infra import gpucatalog
from dbx_ai_infra.dbxtypes.errors import InputError
from dbx_ai_infra.gpucatalog import CLOUDS, GPU_FAMILIES, Catalog, NodeType, load_catalog
from dbx_ai_infra.gpucatalog.catalog import DEFAULT_CATALOG_PATH


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _is_iso_date(text: object) -> bool:
    if not isinstance(text, str) or len(text) != 10:
        return False
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


# --- the packaged data file -----------------------------------------------------------------------------------


def test_default_catalog_loads_and_is_cached(catalog):
    assert len(catalog.nodes) > 0
    assert load_catalog() is catalog
    # An explicit path is read afresh, and gives the same content.
    fresh = load_catalog(DEFAULT_CATALOG_PATH)
    assert fresh is not catalog
    assert fresh.nodes == catalog.nodes
    assert fresh.sources == catalog.sources


def test_every_entry_carries_known_sources_and_dates(catalog):
    for node in catalog.nodes:
        assert node.sources, node.node_type_id
        assert set(node.sources) <= set(catalog.sources), node.node_type_id
        assert len(set(node.sources)) == len(node.sources), node.node_type_id
        # Every figure has a date: prices and DBU rates.
        assert node.usd_per_hour_on_demand is not None and node.usd_per_hour_on_demand > 0, node.node_type_id
        assert node.price_region, node.node_type_id
        assert _is_iso_date(node.price_date), node.node_type_id
        assert node.dbu_per_hour is not None and node.dbu_per_hour > 0, node.node_type_id
        assert _is_iso_date(node.dbu_date), node.node_type_id
        # The Databricks DBU sheet is the source of every DBU rate: its GPU rows' own date, 2024-10-16 (issue 43: not
        # the day a bundle of it was read).
        assert "dbx_instance_xlsx" in node.sources, node.node_type_id
        assert node.dbu_date == "2024-10-16", node.node_type_id


def test_every_listed_source_is_used_and_described(catalog):
    used = {key for node in [*catalog.nodes, *catalog.cpu_nodes] for key in node.sources}
    assert used == set(catalog.sources)
    for key, description in catalog.sources.items():
        assert description.strip() and "\n" not in description.strip(), key


def test_prices_are_dated_per_cloud_consistently(catalog):
    # One price snapshot per cloud: a single region and a single date for all its node types.
    for cloud in CLOUDS:
        nodes = [n for n in catalog.nodes if n.cloud == cloud]
        assert nodes
        assert len({n.price_region for n in nodes}) == 1, cloud
        assert len({n.price_date for n in nodes}) == 1, cloud


def test_header_comment_names_the_reference_and_read_date():
    head = DEFAULT_CATALOG_PATH.read_text(encoding="utf-8").split("\nsources:", 1)[0]
    assert head.lstrip().startswith("#")
    assert "gpu-node-catalog.yaml" in head and "pricing.md" in head
    assert "read on" in head


def test_node_fields_have_the_right_types(catalog):
    for node in catalog.nodes:
        assert node.cloud in CLOUDS
        assert node.family in GPU_FAMILIES
        assert isinstance(node.gpu_count, int) and node.gpu_count >= 1
        assert isinstance(node.vcpus, int) and node.vcpus >= 1
        assert node.gpu_memory_gb > 0 and node.memory_gb > 0
        assert isinstance(node.sources, tuple)
        assert node.total_gpu_memory_gb == node.gpu_count * node.gpu_memory_gb


def test_node_ids_are_unique_and_named_like_their_cloud(catalog):
    ids = [n.node_type_id for n in catalog.nodes]
    assert len(ids) == len(set(ids))
    bare = Catalog([], {})  # pattern recognition only, no catalog knowledge
    for node in catalog.nodes:
        assert bare.cloud_of(node.node_type_id) == node.cloud, node.node_type_id


@pytest.mark.parametrize(
    "cloud, required",
    [
        ("aws", {"t4", "a10g", "v100", "a100", "a100-80gb", "h100", "l4"}),
        ("azure", {"t4", "a10g", "a100", "a100-80gb", "h100"}),
        ("gcp", {"a100", "a100-80gb", "h100", "l4"}),
    ],
)
def test_required_families_per_cloud(catalog, cloud, required):
    families = catalog.families(cloud)
    assert required <= set(families)
    # families() keeps the GPU_FAMILIES order.
    assert list(families) == [f for f in GPU_FAMILIES if f in families]
    for family in required:
        assert catalog.family_nodes(cloud, family), (cloud, family)


def test_intended_gaps(catalog):
    assert "t4" not in catalog.families("gcp")
    assert "v100" not in catalog.families("gcp")
    assert "l4" not in catalog.families("azure")
    assert catalog.family_nodes("gcp", "t4", include_retired=True) == []


@pytest.mark.parametrize(
    "node_type_id",
    [
        "p5.4xlarge",  # no Databricks DBU rate
        "Standard_ND96amsr_A100_v4",  # no Databricks DBU rate
        "Standard_NV6ads_A10_v5",  # fractional A10
        "Standard_NV12ads_A10_v5",
        "Standard_NV18ads_A10_v5",
        "n1-standard-4 + 1x nvidia-tesla-t4",  # not a Databricks node type id
        "n1-standard-4",
    ],
)
def test_node_types_without_databricks_dbu_rate_are_left_out(catalog, node_type_id):
    assert catalog.get(node_type_id) is None


def test_azure_full_gpu_a10_is_the_a10g_family(catalog):
    a10g = {n.node_type_id for n in catalog.family_nodes("azure", "a10g")}
    assert a10g == {"Standard_NV36ads_A10_v5", "Standard_NV36adms_A10_v5", "Standard_NV72ads_A10_v5"}
    assert all(n.gpu_memory_gb == 24 for n in catalog.family_nodes("azure", "a10g"))


def test_gpu_family_matches_gpu_model(catalog):
    markers = {
        "t4": "T4", "a10g": "A10", "v100": "V100", "a100": "A100", "a100-80gb": "A100",
        "h100": "H100", "l4": "L4", "l40s": "L40S",
    }
    for node in catalog.nodes:
        assert markers[node.family] in node.gpu, node.node_type_id
        if node.family == "a100":
            assert node.gpu_memory_gb == 40, node.node_type_id
        if node.family == "a100-80gb":
            assert node.gpu_memory_gb == 80, node.node_type_id


# --- retired Azure V100 ---------------------------------------------------------------------------------------


def test_azure_v100_is_kept_but_retired(catalog):
    retired = catalog.family_nodes("azure", "v100", include_retired=True)
    assert {n.node_type_id for n in retired} == {"Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3"}
    assert all(n.retired and n.retired_on == "2025-09-30" for n in retired)
    assert "ms_ncv3_retire" in retired[0].sources
    assert catalog.family_nodes("azure", "v100") == []
    assert "v100" not in catalog.families("azure")
    # Still recognised as a GPU node type (legacy configs).
    assert catalog.get("Standard_NC6s_v3").retired
    assert catalog.is_gpu_node("Standard_NC6s_v3") is True
    assert catalog.cloud_of("Standard_NC6s_v3") == "azure"


def test_only_azure_ncv3_is_retired(catalog):
    retired = {n.node_type_id for n in catalog.nodes if n.retired}
    assert retired == {"Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3"}
    assert all(n.retired_on is None for n in catalog.nodes if not n.retired)


# --- ordering -------------------------------------------------------------------------------------------------


def _key(node: NodeType):
    price = node.usd_per_hour_on_demand
    return (node.total_gpu_memory_gb, math.inf if price is None else price, node.vcpus)


def test_family_nodes_are_sorted_smallest_first(catalog):
    for cloud in CLOUDS:
        for family in GPU_FAMILIES:
            nodes = catalog.family_nodes(cloud, family, include_retired=True)
            keys = [_key(n) for n in nodes]
            assert keys == sorted(keys), (cloud, family)
            assert all(n.cloud == cloud and n.family == family for n in nodes)


def test_family_nodes_sort_by_total_not_per_gpu_memory(catalog):
    ids = [n.node_type_id for n in catalog.family_nodes("aws", "t4")]
    # g4dn.16xlarge has one T4 (16 GB), g4dn.12xlarge four (64 GB): the 12xlarge is the largest.
    assert ids[0] == "g4dn.xlarge"
    assert ids[-1] == "g4dn.12xlarge"
    assert ids.index("g4dn.16xlarge") < ids.index("g4dn.12xlarge")


def _node(node_type_id: str, gpu_count: int = 1, price: float | None = 1.0, vcpus: int = 8, **kw) -> NodeType:
    fields = dict(
        cloud="aws", node_type_id=node_type_id, family="a10g", gpu="NVIDIA A10G", gpu_count=gpu_count,
        gpu_memory_gb=24.0, vcpus=vcpus, memory_gb=32.0, usd_per_hour_on_demand=price, dbu_per_hour=1.0,
        price_region="us-east-1", price_date="2026-07-20", dbu_date="2026-04-10", sources=("test",),
    )
    fields.update(kw)
    return NodeType(**fields)


def test_family_nodes_ties_break_on_price_then_vcpus():
    cat = Catalog(
        [
            _node("x.unpriced", price=None),
            _node("x.big", gpu_count=2, price=0.1),
            _node("x.dear", price=3.0),
            _node("x.cheap-wide", price=1.0, vcpus=16),
            _node("x.cheap-narrow", price=1.0, vcpus=4),
            _node("x.old", price=0.01, retired=True, retired_on="2025-01-01"),
        ],
        {"test": "test"},
    )
    ids = [n.node_type_id for n in cat.family_nodes("aws", "a10g")]
    assert ids == ["x.cheap-narrow", "x.cheap-wide", "x.dear", "x.unpriced", "x.big"]
    assert cat.family_nodes("aws", "a10g", include_retired=True)[0].node_type_id == "x.old"


def test_families_ignore_retired_only_families():
    cat = Catalog(
        [_node("x.old", family="v100", retired=True, retired_on="2025-01-01"), _node("x.new"), _node("y.l4", family="l4")],
        {"test": "test"},
    )
    assert cat.families("aws") == ("a10g", "l4")
    assert cat.families("gcp") == ()


def test_unknown_cloud_or_family_is_an_error(catalog):
    with pytest.raises(ValueError, match="cloud"):
        catalog.families("oci")
    with pytest.raises(ValueError, match="family"):
        catalog.family_nodes("aws", "mi300x")


def test_duplicate_ids_are_rejected():
    with pytest.raises(InputError, match="x.one"):
        Catalog([_node("x.one"), _node("x.one")], {"test": "test"})


# --- get / cloud_of / is_gpu_node -----------------------------------------------------------------------------


def test_get(catalog):
    node = catalog.get("g5.xlarge")
    assert node is not None
    assert (node.cloud, node.family, node.gpu_count, node.gpu_memory_gb) == ("aws", "a10g", 1, 24.0)
    assert catalog.get("g5.xlarge ") is None
    assert catalog.get("nope") is None


@pytest.mark.parametrize(
    "node_type_id, cloud",
    [
        ("g4dn.xlarge", "aws"),
        ("p4d.24xlarge", "aws"),
        ("Standard_NC24ads_A100_v4", "azure"),
        ("Standard_ND96isr_H100_v5", "azure"),
        ("a2-ultragpu-8g", "gcp"),
        ("g2-standard-4", "gcp"),
    ],
)
def test_cloud_of_catalog_nodes(catalog, node_type_id, cloud):
    assert catalog.get(node_type_id) is not None
    assert catalog.cloud_of(node_type_id) == cloud


@pytest.mark.parametrize(
    "node_type_id, cloud",
    [
        ("i3.xlarge", "aws"),
        ("m5d.2xlarge", "aws"),
        ("r6gd.metal", "aws"),
        ("c5n.18xlarge", "aws"),
        ("m7i-flex.large", "aws"),
        ("p5.4xlarge", "aws"),
        ("Standard_DS3_v2", "azure"),
        ("Standard_E8ds_v5", "azure"),
        ("Standard_ND96amsr_A100_v4", "azure"),
        ("n2-highmem-8", "gcp"),
        ("n1-standard-4", "gcp"),
        ("e2-medium", "gcp"),
        ("n2d-standard-2", "gcp"),
        ("a3-megagpu-8g", "gcp"),
        ("n2-custom-4-16384", "gcp"),
        ("", None),
        ("xlarge", None),
        ("banana", None),
        ("n1 standard 4", None),
        ("g5.xlarge.extra", None),
    ],
)
def test_cloud_of_by_naming_pattern(catalog, node_type_id, cloud):
    assert catalog.get(node_type_id) is None
    assert catalog.cloud_of(node_type_id) == cloud


def test_catalog_wins_over_pattern():
    # A catalog entry decides the cloud even when the id looks like another cloud's.
    cat = Catalog([_node("Standard_Weird1", cloud="aws")], {"test": "test"})
    assert cat.cloud_of("Standard_Weird1") == "aws"
    assert cat.is_gpu_node("Standard_Weird1") is True


@pytest.mark.parametrize(
    "node_type_id, expected",
    [
        ("g5.xlarge", True),
        ("Standard_NC4as_T4_v3", True),
        ("a3-highgpu-8g", True),
        ("m5.xlarge", False),
        ("r5.2xlarge", False),
        ("i3.xlarge", False),
        ("c5.4xlarge", False),
        ("m6gd.large", False),
        ("Standard_D4s_v3", False),
        ("Standard_DS3_v2", False),
        ("Standard_E16_v3", False),
        ("Standard_F8s_v2", False),
        ("Standard_L8s_v2", False),
        ("n1-standard-4", False),
        ("n2-highmem-8", False),
        ("n2d-standard-2", False),
        ("e2-standard-4", False),
        ("c2-standard-8", False),
        ("p5.4xlarge", None),  # a GPU machine, but not a Databricks-listed node type
        ("inf2.xlarge", None),
        ("Standard_ND96amsr_A100_v4", None),
        ("Standard_NV6ads_A10_v5", None),
        ("a3-megagpu-8g", None),
        ("banana", None),
        ("", None),
    ],
)
def test_is_gpu_node(catalog, node_type_id, expected):
    assert catalog.is_gpu_node(node_type_id) is expected


# --- validation of the data file ------------------------------------------------------------------------------

_VALID = {
    "sources": {"src_a": "Source A, read 2026-04-10.", "src_b": "Source B."},
    "node_types": [
        {
            "cloud": "aws", "node_type_id": "g5.xlarge", "family": "a10g", "gpu": "NVIDIA A10G", "gpu_count": 1,
            "gpu_memory_gb": 24, "vcpus": 4, "memory_gb": 16, "usd_per_hour_on_demand": 1.006,
            "price_region": "us-east-1", "price_date": "2026-07-20", "dbu_per_hour": 1.3637,
            "dbu_date": "2026-04-10", "sources": ["src_a", "src_b"],
        },
        {
            "cloud": "azure", "node_type_id": "Standard_NC6s_v3", "family": "v100", "gpu": "NVIDIA V100",
            "gpu_count": 1, "gpu_memory_gb": 16, "vcpus": 6, "memory_gb": 112, "usd_per_hour_on_demand": 3.06,
            "price_region": "eastus", "price_date": "2026-06-18", "dbu_per_hour": 5.0, "dbu_date": "2026-04-10",
            "sources": ["src_a"], "retired": True, "retired_on": "2025-09-30",
        },
    ],
}


def _write(tmp_path: Path, data) -> Path:
    path = tmp_path / "node_types.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _mutated(index: int, **changes):
    data = yaml.safe_load(yaml.safe_dump(_VALID))
    for key, value in changes.items():
        if value is _DELETE:
            del data["node_types"][index][key]
        else:
            data["node_types"][index][key] = value
    return data


_DELETE = object()


def test_valid_minimal_file_loads(tmp_path):
    cat = load_catalog(_write(tmp_path, _VALID))
    assert [n.node_type_id for n in cat.nodes] == ["g5.xlarge", "Standard_NC6s_v3"]
    assert cat.sources == _VALID["sources"]
    node = cat.get("g5.xlarge")
    assert isinstance(node.gpu_memory_gb, float) and node.sources == ("src_a", "src_b")
    assert cat.get("Standard_NC6s_v3").retired_on == "2025-09-30"
    assert cat.families("azure") == ()


def test_unquoted_yaml_dates_are_accepted_as_iso_strings(tmp_path):
    text = _write(tmp_path, _VALID).read_text().replace("'2026-07-20'", "2026-07-20")
    assert "price_date: 2026-07-20" in text
    cat = load_catalog(_write(tmp_path, text))
    assert cat.get("g5.xlarge").price_date == "2026-07-20"


@pytest.mark.parametrize(
    "index, changes, problem",
    [
        (0, {"family": "a10"}, "family"),
        (0, {"cloud": "oci"}, "cloud"),
        (0, {"dbu_date": _DELETE}, "dbu_date"),
        (0, {"gpu_count": 0.5}, "gpu_count"),
        (0, {"gpu_count": True}, "gpu_count"),
        (0, {"gpu_memory_gb": -1}, "gpu_memory_gb"),
        (0, {"vcpus": "4"}, "vcpus"),
        (0, {"usd_per_hour_on_demand": "cheap"}, "usd_per_hour_on_demand"),
        (0, {"price_date": "July 2026"}, "price_date"),
        (0, {"price_date": None}, "price_date"),
        (0, {"dbu_date": None}, "dbu_date"),
        (0, {"sources": []}, "sources"),
        (0, {"sources": ["src_a", "nowhere"]}, "nowhere"),
        (0, {"colour": "green"}, "colour"),
        (1, {"retired_on": _DELETE}, "retired_on"),
        (1, {"retired": "yes"}, "retired"),
        (0, {"retired_on": "2025-01-01"}, "retired"),
        (1, {"node_type_id": "g5.xlarge"}, "duplicate"),
    ],
)
def test_invalid_entries_name_the_file_and_the_entry(tmp_path, index, changes, problem):
    path = _write(tmp_path, _mutated(index, **changes))
    with pytest.raises(InputError) as excinfo:
        load_catalog(path)
    message = str(excinfo.value)
    assert str(path) in message
    assert f"node_types[{index}]" in message
    assert problem in message


def test_invalid_entry_names_the_node_type_id(tmp_path):
    path = _write(tmp_path, _mutated(1, family="v200"))
    with pytest.raises(InputError, match=r"node_types\[1\] \(Standard_NC6s_v3\)"):
        load_catalog(path)


@pytest.mark.parametrize(
    "content, problem",
    [
        ("- just\n- a list\n", "mapping"),
        ("sources: {a: b}\n", "node_types"),
        ("node_types: []\nsources: {a: b}\n", "node_types"),
        ("sources: {}\nnode_types: [{}]\n", "sources"),
        ("sources: {a: b}\nnode_types: [oops]\n", "node_types[0]"),
        ("sources: [unclosed\n", "YAML"),
    ],
)
def test_invalid_file_structure(tmp_path, content, problem):
    path = _write(tmp_path, content)
    with pytest.raises(InputError) as excinfo:
        load_catalog(path)
    assert str(path) in str(excinfo.value)
    assert problem in str(excinfo.value)


def test_missing_file_is_a_catalog_error(tmp_path):
    path = tmp_path / "absent.yaml"
    with pytest.raises(InputError, match="absent.yaml"):
        load_catalog(path)
    assert issubclass(InputError, ValueError)


def test_package_exports_the_public_api():
    for name in ("CLOUDS", "GPU_FAMILIES", "NodeType", "Catalog", "load_catalog",
                 "BYTES_PER_PARAM", "INFERENCE_OVERHEAD", "memory_need_gb", "SizingError", "pick_node_type"):
        assert hasattr(gpucatalog, name), name
    assert gpucatalog.CLOUDS == ("aws", "azure", "gcp")
    assert gpucatalog.GPU_FAMILIES == ("t4", "a10g", "v100", "a100", "a100-80gb", "h100", "l4", "l40s")
    node = load_catalog().nodes[0]
    with pytest.raises(AttributeError):
        node.gpu_count = 99  # frozen


def test_data_file_ships_inside_the_package():
    assert DEFAULT_CATALOG_PATH.parent == Path(gpucatalog.__file__).parent
    assert DEFAULT_CATALOG_PATH.name == "node_types.yaml"
    catalog = load_catalog()
    assert DEFAULT_CATALOG_PATH.read_text(encoding="utf-8").count("- cloud:") == len(catalog.nodes)
    # the CPU node types: generated beside it (issue 53), in the package too
    cpu = DEFAULT_CATALOG_PATH.with_name("cpu_node_types.json").read_text(encoding="utf-8")
    assert cpu.count('{"cloud": ') == len(catalog.cpu_nodes)
