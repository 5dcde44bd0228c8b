"""The training entry point trains a real model with PyTorch, on the CPU, with a tiny model built here (issue 52 item
9: its step only counted before). These tests need torch: `make test-train` runs them in .venv-train, which installs
the CPU build from requirements-train.txt (CI runs it); in the main suite they are skipped."""

from __future__ import annotations

import os
import socket
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from dbx_ai_infra.workloads import train as T  # noqa: E402

VOCAB = 32


class TinyLM(torch.nn.Module):
    """A causal LM as transformers' are called: ``model(input_ids=..., labels=...).loss``."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, 16)
        self.head = torch.nn.Linear(16, VOCAB)

    def forward(self, input_ids, labels):
        logits = self.head(self.emb(input_ids))
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels[:, 1:].reshape(-1))
        return SimpleNamespace(loss=loss)


def tiny() -> TinyLM:
    torch.manual_seed(0)
    return TinyLM()


def encode(text: str) -> list[int]:
    return [ord(c) % VOCAB for c in text]


def loader(name: str):
    assert name == "tiny-lm"
    return tiny(), encode


TEXT = "the cat sat on the mat. " * 40


def blocks():
    return T.token_blocks(encode(TEXT), 8)


def test_the_loss_falls_and_checkpoints_land_on_the_directory(tmp_path):
    model = tiny()
    first = model(input_ids=blocks()[:4], labels=blocks()[:4]).loss.item()
    last = T.fit(model, blocks(), tmp_path, steps=60, every=20, lr=1e-2, batch_size=4)
    assert last < first / 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "step-000000019.ckpt", "step-000000039.ckpt", "step-000000059.ckpt"]


class Reclaimed(Exception):
    pass


class ReclaimedAt(torch.nn.Module):
    """The tiny model, killed at its ``at``-th forward pass (a spot reclaim in the middle of a run)."""

    def __init__(self, inner: TinyLM, at: int) -> None:
        super().__init__()
        self.inner, self.at, self.calls = inner, at, 0

    def forward(self, **kw):
        self.calls += 1
        if self.calls > self.at:
            raise Reclaimed()
        return self.inner(**kw)

    def state_dict(self, *a, **kw):  # checkpoints hold the model's own weights
        return self.inner.state_dict(*a, **kw)


def test_a_reclaimed_run_resumes_from_its_last_checkpoint_and_ends_where_an_unbroken_one_does(tmp_path):
    whole = tiny()
    T.fit(whole, blocks(), tmp_path / "whole", steps=20, every=5, lr=1e-2, batch_size=2)
    with pytest.raises(Reclaimed):
        T.fit(ReclaimedAt(tiny(), at=12), blocks(), tmp_path / "broken", steps=20, every=5, lr=1e-2, batch_size=2)
    assert T.latest_checkpoint(tmp_path / "broken")[0] == 9
    resumed = tiny()  # the retry starts from scratch and loads model and optimizer from step 9
    T.fit(resumed, blocks(), tmp_path / "broken", steps=20, every=5, lr=1e-2, batch_size=2)
    for (name, a), b in zip(whole.state_dict().items(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b), name


def _volume(tmp_path, monkeypatch):
    monkeypatch.setattr(T, "VOLUME_ROOT", str(tmp_path))
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text(TEXT)
    return tmp_path / "ckpt", data


def test_the_entry_point_trains_the_model_and_data_it_is_given_and_resumes(tmp_path, monkeypatch):
    ckpt, data = _volume(tmp_path, monkeypatch)
    argv = ["--checkpoint-dir", str(ckpt), "--resume-from-latest", "--model", "tiny-lm", "--data", str(data),
            "--seq-len", "8", "--checkpoint-every", "2", "--lr", "0.01"]
    assert T.main([*argv, "--steps", "4"], loader=loader) == 0
    assert T.latest_checkpoint(ckpt)[0] == 3
    assert T.main([*argv, "--steps", "6"], loader=loader) == 0
    state = torch.load(T.latest_checkpoint(ckpt)[1], weights_only=True)
    assert state["step"] == 5 and set(state) == {"model", "optimizer", "step"}


def test_a_failed_run_exits_1_with_its_cause_and_wrong_arguments_exit_2(tmp_path, monkeypatch, capsys):
    ckpt, data = _volume(tmp_path, monkeypatch)
    base = ["--checkpoint-dir", str(ckpt), "--data", str(data), "--seq-len", "8", "--steps", "3"]

    def diverging(name):
        model = tiny()
        with torch.no_grad():
            model.head.weight.fill_(float("nan"))
        return model, encode

    assert T.main([*base, "--model", "tiny-lm"], loader=diverging) == 1
    assert "training failed: TrainingFailed: step 0: the loss is nan" in capsys.readouterr().err
    (data / "a.txt").write_text("")
    assert T.main([*base, "--model", "tiny-lm"], loader=loader) == 1
    assert "no training text" in capsys.readouterr().err
    assert T.main(base, loader=loader) == 2  # no --model
    assert "--model and --data name the model and the training data" in capsys.readouterr().err


def test_with_processes_the_ranks_start_on_the_workers_and_none_on_the_driver(tmp_path, monkeypatch):
    ckpt, data = _volume(tmp_path, monkeypatch)
    started = []

    class Distributor:  # pyspark.ml.torch.distributor.TorchDistributor's constructor and run
        def __init__(self, **kw):
            started.append(kw)

        def run(self, fn, argv):
            started.append((fn, argv))

    argv = ["--checkpoint-dir", str(ckpt), "--model", "tiny-lm", "--data", str(data), "--processes", "16"]
    assert T.main(argv, distributor=Distributor) == 0
    assert started == [{"num_processes": 16, "local_mode": False, "use_gpu": True}, (T.rank_main, argv)]


def test_a_rank_joins_its_process_group_and_trains(tmp_path, monkeypatch):
    """What TorchDistributor runs on each worker, as a group of one over gloo on the loopback."""
    ckpt, data = _volume(tmp_path, monkeypatch)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for key, value in {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": "0", "WORLD_SIZE": "1"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(T, "load_pretrained", loader)
    loss = T.rank_main(["--checkpoint-dir", str(ckpt), "--model", "tiny-lm", "--data", str(data), "--seq-len", "8",
                        "--steps", "2"])
    assert loss == loss and T.latest_checkpoint(ckpt)[0] == 1  # a finite loss, the last checkpoint written
    assert not torch.distributed.is_initialized() and os.environ["WORLD_SIZE"] == "1"
