"""The training entry point resumes from its newest complete checkpoint after a reclaim."""

from __future__ import annotations

import pytest

from dbx_ai_infra.workloads.train import checkpoint_path, latest_checkpoint, main, run, save_checkpoint


class Reclaimed(Exception):
    pass


def counting(fail_at: int | None = None):
    seen = []

    def step(state: bytes, i: int) -> bytes:
        if i == fail_at:
            raise Reclaimed(i)
        seen.append(i)
        return state + bytes([i % 256])
    return step, seen


def test_a_reclaimed_run_resumes_after_its_last_checkpoint(tmp_path):
    step, seen = counting(fail_at=7)
    with pytest.raises(Reclaimed):
        run(tmp_path, 10, step, every=3)
    assert latest_checkpoint(tmp_path)[0] == 5  # steps 0-5 done, checkpoints after 2 and 5
    retry, seen_again = counting()
    state = run(tmp_path, 10, retry, every=3)
    assert seen_again == [6, 7, 8, 9]  # nothing before the checkpoint is redone
    assert state == bytes(range(10))  # same result as an uninterrupted run


def test_without_resume_the_run_starts_over(tmp_path):
    save_checkpoint(tmp_path, 4, b"x")
    step, seen = counting()
    run(tmp_path, 3, step, resume=False)
    assert seen == [0, 1, 2]


def test_a_half_written_checkpoint_is_never_taken_for_the_latest(tmp_path):
    save_checkpoint(tmp_path, 1, b"good")
    (tmp_path / f".{checkpoint_path(tmp_path, 2).name}.tmp").write_bytes(b"partial")
    assert latest_checkpoint(tmp_path) == (1, checkpoint_path(tmp_path, 1))


def test_only_the_newest_checkpoints_are_kept(tmp_path):
    for i in range(6):
        save_checkpoint(tmp_path, i, b"s", keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-000000004.ckpt", "step-000000005.ckpt"]


def test_entry_point_insists_on_a_volume_path(tmp_path, capsys):
    assert main(["--checkpoint-dir", str(tmp_path), "--steps", "2"]) == 2
    assert "/Volumes/" in capsys.readouterr().err
