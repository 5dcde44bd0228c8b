"""Issue 51, item 8: the parse of Terraform files cached by content in the user's cache directory (here always a
temporary one), safe against corrupt entries and runs at the same time, and parsed on all cores when there are
many files. The same findings with and without the cache, cold and warm."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from dbx_ai_infra.sources import tfcache, tfload
from dbx_ai_infra.sources.hcl import read_terraform
from dbx_ai_infra.sources.tfload import parse_text

CLUSTER = '''variable "workers_{i}" {{
  default = {i}
}}
locals {{
  name_{i} = "c-{i}"
}}
resource "databricks_cluster" "c{i}" {{
  cluster_name  = local.name_{i}
  spark_version = "15.4.x-scala2.12"
  node_type_id  = "i3.xlarge"
  num_workers   = var.workers_{i}
}}
'''


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(tfcache.CACHE_DIR_ENV, str(where))
    monkeypatch.delenv(tfcache.NO_CACHE_ENV, raising=False)
    return where


def entries(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.json") if not p.name.startswith(".tmp-"))


def module(tmp_path: Path, n: int) -> Path:
    code = tmp_path / "code"
    code.mkdir(exist_ok=True)
    for i in range(n):
        (code / f"c{i:04d}.tf").write_text(CLUSTER.format(i=i))
    return code


def test_a_second_run_reads_the_cache_and_gives_the_same_plan(cache: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    code = module(tmp_path, 3)
    cold, _, _ = read_terraform(str(code))
    assert len(entries(cache)) == 3 and all(tfcache.parser_version() in str(p) for p in entries(cache))
    calls: list[str] = []
    real, real_quick = tfcache._parse_chunk, tfload.quick_text

    def counted(parse, chunk):  # type: ignore[no-untyped-def]
        calls.extend(name for _, _, name in chunk)
        return real(parse, chunk)

    def counted_quick(text: str, syntax: str):  # type: ignore[no-untyped-def]  # the fast reader (hclfast)
        calls.append(f"quick {text[:20]}")
        return real_quick(text, syntax)

    monkeypatch.setattr(tfcache, "_parse_chunk", counted)
    monkeypatch.setattr(tfload, "quick_text", counted_quick)
    warm, _, _ = read_terraform(str(code))
    assert warm == cold and calls == []  # nothing parsed again
    (code / "c0001.tf").write_text(CLUSTER.format(i=1).replace("15.4", "16.4"))  # one file changed
    changed, _, _ = read_terraform(str(code))
    assert calls == ['quick variable "workers_1"']  # that file alone, read by the fast reader
    (code / "c0002.tf").write_text(CLUSTER.format(i=2).replace("var.workers_2", "-var.workers_2"))
    read_terraform(str(code))  # one file the fast reader declines: python-hcl2 parses it
    assert calls[1:] == ['quick variable "workers_2"', str(code / "c0002.tf")]
    assert changed["resource_changes"][1]["change"]["after"]["spark_version"].startswith("16.4")


def test_a_corrupt_or_foreign_entry_is_parsed_again_and_replaced(cache: Path, tmp_path: Path) -> None:
    code = module(tmp_path, 2)
    cold, _, _ = read_terraform(str(code))
    first, second = entries(cache)
    first.write_bytes(b"\x00garbage{")  # a torn or damaged file
    second.write_text(json.dumps({"key": "another", "doc": {"resource": []}}))  # not this entry
    again, _, _ = read_terraform(str(code))
    assert again == cold
    assert all(json.loads(p.read_text())["key"] == p.stem for p in entries(cache))


def test_the_cache_can_be_turned_off_and_an_unwritable_one_is_no_error(cache: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    code = module(tmp_path, 2)
    monkeypatch.setenv(tfcache.NO_CACHE_ENV, "1")
    off, _, _ = read_terraform(str(code))
    assert not cache.exists()
    monkeypatch.delenv(tfcache.NO_CACHE_ENV)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv(tfcache.CACHE_DIR_ENV, str(blocked))
    on, _, _ = read_terraform(str(code))
    assert on == off


def test_the_default_place_is_the_user_s_cache_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(tfcache.CACHE_DIR_ENV, raising=False)
    monkeypatch.delenv(tfcache.NO_CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tfcache.cache_dir() == tmp_path / "xdg" / "dbx-ai-infra" / "tfparse" / tfcache.parser_version()
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert str(tfcache.cache_dir()).startswith(str(tmp_path / "home" / ".cache" / "dbx-ai-infra"))


def test_an_entry_is_written_whole_or_not_at_all(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that dies while writing leaves no entry a later run would read (a temporary file, then os.replace)."""
    def dies(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", dies)
    tfcache.store(cache, "ab" + "0" * 62, {"resource": []})
    assert entries(cache) == [] and not list(cache.rglob(".tmp-*"))


def test_many_files_are_parsed_in_worker_processes_with_the_same_result(cache: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tfcache.NO_CACHE_ENV, "1")
    monkeypatch.setattr(tfcache, "PARALLEL_FROM", 4)
    monkeypatch.setattr(tfcache, "_workers", lambda: 2)
    code = module(tmp_path, 8)
    for path in code.iterdir():  # each in parentheses: the fast reader declines it, python-hcl2 parses it
        path.write_text(re.sub(r"num_workers   = (var\.workers_\d+)", r"num_workers   = (\1)", path.read_text()))
    assert all(tfload.quick_text(p.read_text(), "hcl") is None for p in code.iterdir())
    parallel, _, _ = read_terraform(str(code))
    monkeypatch.setattr(tfcache, "PARALLEL_FROM", 10_000)
    serial, _, _ = read_terraform(str(code))
    assert parallel == serial and len(parallel["resource_changes"]) == 8
    (code / "c0005.tf").write_text("resource {{{")  # a file that is not HCL, found by a worker
    monkeypatch.setattr(tfcache, "PARALLEL_FROM", 4)
    with pytest.raises(Exception, match="c0005.tf: is not HCL"):
        read_terraform(str(code))


def test_json_and_hcl_parses_of_one_text_are_kept_apart(cache: Path) -> None:
    text = '{"variable": {"x": {"default": 1}}}'
    docs = tfcache.parse_all([(text.encode(), "json", text, "a.tf.json"),
                              (text.encode(), "json-values", text, "a.tfvars.json")], parse_text)
    assert docs[0] == {"variable": [{"x": {"default": 1}}]} and docs[1] == {"variable": {"x": {"default": 1}}}


def test_the_number_of_parsing_processes_can_be_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tfcache.WORKERS_ENV, "1")
    assert tfcache._workers() == 1
    monkeypatch.setenv(tfcache.WORKERS_ENV, "not a number")
    assert tfcache._workers() >= 1
