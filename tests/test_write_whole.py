"""`dbx_ai_infra.write_whole`: the caches' one way to write a file (the Terraform parse cache, the provider's
lazy-annotations bytecode): whole or not at all."""

from __future__ import annotations

import os

import pytest

from dbx_ai_infra import write_whole


def test_a_file_is_written_whole_in_a_directory_made_for_it(tmp_path):
    target = tmp_path / "a" / "b" / "entry.bin"
    assert write_whole(target, b"data") and target.read_bytes() == b"data"
    assert [p.name for p in target.parent.iterdir()] == ["entry.bin"]  # no temporary file left


def test_what_cannot_be_written_is_false_and_leaves_nothing(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file where a directory would be")
    assert write_whole(blocked / "entry.bin", b"data") is False
    (tmp_path / "dir").mkdir()
    assert write_whole(tmp_path / "dir", b"data") is False  # a directory in the way of the rename
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "file"] and not list((tmp_path / "dir").iterdir())


def test_an_interrupted_write_leaves_no_temporary_file_and_is_raised(tmp_path, monkeypatch):
    def interrupted(src, dst):  # noqa: ANN001, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_whole(tmp_path / "entry.bin", b"data")
    assert list(tmp_path.iterdir()) == []
