"""Library pins per GPU ML runtime (issue 52, item 9): a bare library name takes its runtime's pin from the runtime
library table; a pin the runtime's Python cannot install is refused (exit 2); a vllm pin that brings another torch
than the runtime's is a preview note; a runtime whose release notes were not found keeps the stack's pins, noted."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest
from conftest import BASE_CONFIG, REPO, resources

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.dbxtypes.pip import is_bare_pip, is_pinned_pip
from dbx_ai_infra.gpucatalog.runtime_libraries import library_table, resolve_libraries
from dbx_ai_infra.gpucatalog.runtimes import releases
from dbx_ai_infra.stackspec import load_stack

KNOWN = [row for row in library_table().runtimes.values() if row.unknown is None]


def _config(runtime: str, **libraries: list[str]) -> dict[str, Any]:
    """BASE_CONFIG on ``runtime``, with the libraries of its training and inference sections."""
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:runtime"] = runtime
    for section, libs in libraries.items():
        config[f"dbx-ai-infra:{section}"]["libraries"] = libs
    return config


def _key(version: str) -> str:
    return f"{version}.x-gpu-ml-scala2.13"


@pytest.mark.parametrize("row", KNOWN, ids=lambda r: r.version)
def test_a_bare_name_takes_its_runtimes_pin(row: Any, write_stack: Any) -> None:
    names = sorted(row.pins)
    loaded = load_stack(str(write_stack(_config(_key(row.version), inference=names))))
    assert list(loaded.resolved.libraries["inference"]) == [f"{n}=={row.pins[n]}" for n in names]
    assert not [w for w in loaded.resolved.warnings if ".libraries" in w]  # the table's own pins fit their runtime


def test_the_cluster_installs_the_pins_the_resolution_gives(write_stack: Any, plan_of: Any) -> None:
    pin = library_table().runtimes["17.3"].pins["vllm"]
    path = write_stack(_config("17.3.x-gpu-ml-scala2.13", inference=["vllm"]))
    (cluster,) = [c for c in resources(plan_of(str(path)), "cluster:Cluster")
                  if c["inputs"]["customTags"]["workload_type"] == "inference"]
    assert cluster["inputs"]["libraries"] == [{"pypi": {"package": f"vllm=={pin}"}}]


def test_a_pin_of_the_stacks_own_is_kept() -> None:
    assert resolve_libraries(["peft==0.21.0", "bitsandbytes==0.45.0"], "17.3.x-gpu-ml-scala2.13").libraries == \
        ["peft==0.21.0", "bitsandbytes==0.45.0"]


def test_vllm_pinned_against_another_torch_is_noted_with_its_fix(write_stack: Any) -> None:
    # the 2024 prod pin: vllm 0.5.4 pins torch 2.4.0, 17.3 LTS ML ships 2.7.0
    row = library_table().runtimes["17.3"]
    loaded = load_stack(str(write_stack(_config("17.3.x-gpu-ml-scala2.13", inference=["vllm==0.5.4"]))))
    (note,) = [w for w in loaded.resolved.warnings if "inference.libraries" in w]
    assert note.startswith("dbx-ai-infra:inference.libraries: vllm==0.5.4 needs torch==2.4.0")
    assert f"torch {row.torch}" in note and f"Fix: vllm=={row.pins['vllm']}" in note
    assert loaded.resolved.libraries["inference"] == ("vllm==0.5.4",)  # a note: the stack's own pin stays


def test_a_pin_the_runtimes_python_cannot_install_exits_2_naming_file_field_and_fix(write_stack: Any,
                                                                                     capsys: Any) -> None:
    # transformers 5.25.0 needs Python 3.11; 14.3 LTS ML runs 3.10
    path = write_stack(_config("14.3.x-gpu-ml-scala2.12", training=["transformers==5.25.0"]))
    assert main(["preview", "--stack", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path.name) in err and "dbx-ai-infra:training.libraries" in err
    assert "Python >=3.11" in err and "Python 3.10" in err
    assert f"transformers=={library_table().runtimes['14.3'].pins['transformers']}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("runtime", "why"), [
    ("19.x-gpu-ml-scala2.13", "no vllm pin for runtime 19"),  # no vllm release pins its torch 2.12
    ("18.0.x-gpu-ml-scala2.13", "unknown here"),  # its release notes were not found
    ("13.3.x-gpu-ml-scala2.12", "has no row"),  # older than the table
])
def test_a_bare_name_with_no_pin_exits_2(runtime: str, why: str, write_stack: Any, capsys: Any) -> None:
    assert main(["preview", "--stack", str(write_stack(_config(runtime, inference=["vllm"])))]) == 2
    err = capsys.readouterr().err
    assert "dbx-ai-infra:inference.libraries" in err and why in err and "vllm==x.y.z" in err


def test_a_runtime_whose_notes_were_not_found_keeps_the_stacks_pins_with_a_note(write_stack: Any) -> None:
    loaded = load_stack(str(write_stack(_config("18.0.x-gpu-ml-scala2.13", training=["peft==0.21.2"]))))
    assert loaded.resolved.libraries["training"] == ("peft==0.21.2",)
    (note,) = [w for w in loaded.resolved.warnings if "training.libraries" in w]
    assert "unknown here" in note and "kept, unchecked" in note


def test_a_release_the_table_does_not_know_is_named_unchecked() -> None:
    (note,) = resolve_libraries(["vllm==0.0.1"], "17.3.x-gpu-ml-scala2.13").notes
    assert note.startswith("vllm==0.0.1: not in the runtime library table") and "unknown here" in note


def test_a_serverless_workload_takes_no_runtime_pin(write_stack: Any, capsys: Any) -> None:
    config = copy.deepcopy(BASE_CONFIG)
    config["dbx-ai-infra:gpu_family"] = "h100"
    config["dbx-ai-infra:single_user_name"] = "3b9e7c1a-2f4d-4c6b-8a1e-5d7f9b0c2e4a"
    config["dbx-ai-infra:usage_policy_id"] = "8a4c6e2f-1b3d-4f5a-9c7e-0d2b4f6a8c1e"
    config["dbx-ai-infra:training"] = {"compute": "serverless_gpu", "accelerator": "GPU_8xH100", "gpus": 8,
                                       "model": {"params_billions": 7, "precision": "bf16"}, "libraries": ["peft"],
                                       "job": {"python_file": "/Workspace/train.py"}}
    config.pop("dbx-ai-infra:inference")
    config.pop("dbx-ai-infra:dev")
    assert main(["preview", "--stack", str(write_stack(config))]) == 2
    assert "serverless GPU workload has no runtime" in capsys.readouterr().err


def test_every_row_states_its_source_and_every_pin_is_a_release_it_judges() -> None:
    table = library_table()
    for row in table.runtimes.values():
        assert row.version in releases() and row.source.startswith("https://docs.databricks.com/")
        date.fromisoformat(row.read)
        if row.unknown is None:
            assert row.python and row.cuda and row.torch
            assert all(version in table.releases[name] for name, version in row.pins.items())


def test_every_supported_gpu_ml_runtime_on_the_tables_day_has_a_row() -> None:
    day = max(date.fromisoformat(row.read) for row in library_table().runtimes.values())
    supported = [r.version for r in releases().values()
                 if r.released <= day and (r.end_of_support is None or r.end_of_support > day)]
    assert supported and all(v in library_table().runtimes for v in supported)


@pytest.mark.parametrize(("spec", "bare"), [("peft", True), ("transformers[torch]", True), ("peft==0.21.2", False),
                                            ("peft>=0.2", False), ("git+https://x/peft.git", False), ("", False)])
def test_a_bare_name_is_a_project_name_alone(spec: str, bare: bool) -> None:
    assert is_bare_pip(spec) is bare
    assert not (is_bare_pip(spec) and is_pinned_pip(spec))


def test_the_docs_table_is_the_yaml_table() -> None:
    page = (REPO / "docs" / "stack-inputs.md").read_text(encoding="utf-8")
    for row in KNOWN:
        pins = [row.pins.get(n, "none") for n in ("transformers", "peft", "accelerate", "vllm")]
        cells = [row.label, row.python, row.cuda, row.torch,
                 f"{row.preinstalled['transformers']}, {row.preinstalled['accelerate']}", *pins]
        assert f"| {' | '.join(str(c) for c in cells)} | [{row.version} ML]({row.source}) ({row.read}) |" in page
