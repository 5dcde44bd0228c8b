"""`dbx_ai_infra.dbxtypes.kept`: what a run makes of the shipped data files, kept between runs under a key of the
files' bytes, and the packaged node catalog read through it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dbx_ai_infra.dbxtypes.kept import kept, kept_path

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def writable(monkeypatch, tmp_path):
    """Kept files under tmp_path (``sys.pycache_prefix``), where this run may write them."""
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path


def _reader(calls: list[str], path: Path):
    def build() -> dict:
        calls.append("read")
        return json.loads(path.read_text())
    return build


def test_a_value_is_built_once_and_read_back_while_the_files_are_the_same(writable) -> None:
    data = writable / "table.json"
    data.write_text('{"a": [1, 2.5, "x"]}')
    calls: list[str] = []
    first = kept("table", [str(data)], _reader(calls, data))
    second = kept("table", [str(data)], _reader(calls, data))
    assert first == second == {"a": [1, 2.5, "x"]}
    assert calls == ["read"]  # the second run read the kept value, not the file
    assert Path(kept_path("table", str(writable))).is_file()
    assert second is not first  # each read is a value of its own (a caller may change it)


def test_a_changed_file_of_the_key_is_read_afresh(writable) -> None:
    data, code = writable / "table.json", writable / "reader.py"
    data.write_text('{"a": 1}')
    code.write_text("# the reading code\n")
    calls: list[str] = []
    assert kept("table", [str(data), str(code)], _reader(calls, data)) == {"a": 1}
    data.write_text('{"a": 2}')  # the same length: the bytes, not the size, are the key
    assert kept("table", [str(data), str(code)], _reader(calls, data)) == {"a": 2}
    code.write_text("# the reading code, changed\n")
    assert kept("table", [str(data), str(code)], _reader(calls, data)) == {"a": 2}
    assert calls == ["read", "read", "read"]


@pytest.mark.parametrize("damage", [b"", b"not a kept file", None])
def test_a_damaged_kept_file_is_read_afresh_and_replaced(writable, damage) -> None:
    data = writable / "table.json"
    data.write_text('{"a": 1}')
    calls: list[str] = []
    kept("table", [str(data)], _reader(calls, data))
    where = Path(kept_path("table", str(writable)))
    whole = where.read_bytes()
    where.write_bytes(whole[:-5] if damage is None else damage)  # None: cut short inside the pickle
    assert kept("table", [str(data)], _reader(calls, data)) == {"a": 1}
    assert kept("table", [str(data)], _reader(calls, data)) == {"a": 1}
    assert calls == ["read", "read"]  # read afresh once, then kept again


def test_nothing_is_kept_where_no_bytecode_may_be_written(writable, monkeypatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    data = writable / "table.json"
    data.write_text('{"a": 1}')
    calls: list[str] = []
    kept("table", [str(data)], _reader(calls, data))
    kept("table", [str(data)], _reader(calls, data))
    assert calls == ["read", "read"]
    assert not (writable / "cache").exists()


def test_an_error_of_the_read_is_raised_and_nothing_is_kept(writable) -> None:
    data = writable / "table.json"
    data.write_text("{broken")
    with pytest.raises(json.JSONDecodeError):
        kept("table", [str(data)], _reader([], data))
    assert not Path(kept_path("table", str(writable))).exists()


def test_a_missing_file_is_left_to_the_reader(writable) -> None:
    missing = writable / "gone.json"
    with pytest.raises(FileNotFoundError):
        kept("table", [str(missing)], _reader([], missing))


_CATALOG_PROBE = """
import json, os, sys
sys.pycache_prefix, sys.dont_write_bytecode = sys.argv[1], False
from dbx_ai_infra.gpucatalog import catalog
found = catalog.load_catalog()
print(json.dumps({"nodes": [n.node_type_id for n in found.nodes], "cpu": [n.node_type_id for n in found.cpu_drivers],
                  "sources": sorted(found.sources), "g5": found.get("g5.12xlarge").usd_per_hour_on_demand,
                  "built": catalog._CatalogFile.__pydantic_complete__}), flush=True)
os._exit(0)
"""


def test_the_packaged_catalog_read_from_what_was_kept_is_the_catalog_read_from_its_files(tmp_path) -> None:
    """The first run reads node_types.yaml and cpu_node_types.json (and builds the catalog's pydantic models); the
    second reads what the first kept, with the same node types, drivers, sources and figures, and builds no model."""
    runs = [json.loads(subprocess.run([sys.executable, "-c", _CATALOG_PROBE, str(tmp_path)], cwd=REPO, check=True,
                                      capture_output=True, text=True).stdout) for _ in range(2)]
    assert runs[0]["built"] is True and runs[1]["built"] is False
    assert {k: v for k, v in runs[0].items() if k != "built"} == {k: v for k, v in runs[1].items() if k != "built"}
    assert len(runs[1]["nodes"]) > 50 and runs[1]["g5"] > 0
    assert list(tmp_path.rglob("node_catalog.*.kept"))

