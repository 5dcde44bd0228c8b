"""The training entry point trains a real model with PyTorch, on the CPU, with a tiny model built here (issue 52 item
9: its step only counted before). These tests need torch: `make test-train` runs them in .venv-train, which installs
the CPU build from requirements-train.txt (CI runs it); in the main suite they are skipped."""

from __future__ import annotations

import os
import socket
from pathlib import Path
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


def loader(name: str, dtype: str = "bf16"):
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


class ReclaimedAt(TinyLM):
    """The tiny model, killed at its ``at``-th forward pass (a spot reclaim in the middle of a run)."""

    def __init__(self, at: int) -> None:
        torch.manual_seed(0)
        super().__init__()
        self.at, self.calls = at, 0

    def forward(self, input_ids, labels):
        self.calls += 1
        if self.calls > self.at:
            raise Reclaimed()
        return super().forward(input_ids, labels)


def test_a_reclaimed_run_resumes_from_its_last_checkpoint_and_ends_where_an_unbroken_one_does(tmp_path):
    whole = tiny()
    T.fit(whole, blocks(), tmp_path / "whole", steps=20, every=5, lr=1e-2, batch_size=2)
    with pytest.raises(Reclaimed):
        T.fit(ReclaimedAt(at=12), blocks(), tmp_path / "broken", steps=20, every=5, lr=1e-2, batch_size=2)
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


# --- LoRA (issue 52 item 9: stacks say method lora) --------------------------------------------------------------

def lora_args(targets: str = "head") -> SimpleNamespace:
    return SimpleNamespace(lora_r=4, lora_alpha=8, lora_targets=targets)


def test_lora_trains_the_adapter_alone_and_checkpoints_only_it(tmp_path):
    model = T.with_lora(tiny(), lora_args())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    T.fit(model, blocks(), tmp_path, steps=20, every=10, lr=1e-2, batch_size=4)
    after = model.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all("lora_" in k for k in changed)  # the base (emb, head) stays as loaded
    assert torch.equal(after["base_model.model.emb.weight"], tiny().emb.weight)
    state = torch.load(T.latest_checkpoint(tmp_path)[1], weights_only=True)
    assert set(state["model"]) == {k for k, p in model.named_parameters() if p.requires_grad}
    assert set(state["model"]) and all("lora_" in k for k in state["model"])


def test_a_reclaimed_lora_run_resumes_its_adapter_and_ends_where_an_unbroken_one_does(tmp_path):
    whole = T.with_lora(tiny(), lora_args())
    T.fit(whole, blocks(), tmp_path / "whole", steps=12, every=4, lr=1e-2, batch_size=2)
    with pytest.raises(Reclaimed):
        T.fit(T.with_lora(ReclaimedAt(at=7), lora_args()), blocks(), tmp_path / "broken", steps=12, every=4,
              lr=1e-2, batch_size=2)
    assert T.latest_checkpoint(tmp_path / "broken")[0] == 3
    resumed = T.with_lora(tiny(), lora_args())
    T.fit(resumed, blocks(), tmp_path / "broken", steps=12, every=4, lr=1e-2, batch_size=2)
    for (name, a), b in zip(whole.state_dict().items(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b), name


def test_the_entry_point_trains_lora_when_asked(tmp_path, monkeypatch):
    ckpt, data = _volume(tmp_path, monkeypatch)
    argv = ["--checkpoint-dir", str(ckpt), "--model", "tiny-lm", "--data", str(data), "--seq-len", "8",
            "--steps", "2", "--method", "lora", "--lora-targets", "head"]
    assert T.main(argv, loader=loader) == 0
    state = torch.load(T.latest_checkpoint(ckpt)[1], weights_only=True)
    assert sorted(state["model"]) == ["base_model.model.head.lora_A.default.weight",
                                      "base_model.model.head.lora_B.default.weight"]


# --- Several ranks on the CPU (gloo): DistributedDataParallel and FSDP2 --------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank(rank: int, world: int, port: int, argv: list[str], marks: str) -> None:
    """One rank, in its own process, as TorchDistributor or the serverless launcher starts it: it records who
    wrote which checkpoint and how the model was wrapped."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    T.load_pretrained = loader
    save, wrap = T.save_checkpoint, T.wrap

    def saving(directory, step, state, keep=3):
        (Path(marks) / f"step{step}-rank{rank}").touch()
        return save(directory, step, state, keep)

    def wrapping(model, sharding, world):
        wrapped = wrap(model, sharding, world)
        (Path(marks) / f"wrapped-rank{rank}-{type(wrapped).__name__}").touch()
        return wrapped
    T.save_checkpoint, T.wrap = saving, wrapping
    T.rank_main(argv)


def _ranks(tmp_path, name: str, steps: int, *extra: str, world: int = 2) -> tuple[Path, set[str]]:
    ckpt, data, marks = tmp_path / "ckpt", tmp_path / "data", tmp_path / f"marks-{name}"
    data.mkdir(exist_ok=True)
    (data / "a.txt").write_text(TEXT)
    marks.mkdir()
    argv = ["--checkpoint-dir", str(ckpt), "--resume-from-latest", "--model", "tiny-lm", "--data", str(data),
            "--seq-len", "8", "--steps", str(steps), "--checkpoint-every", "2", "--lr", "0.01", *extra]
    torch.multiprocessing.spawn(_rank, args=(world, _free_port(), argv, str(marks)), nprocs=world)
    return ckpt, {p.name for p in marks.iterdir()}


def test_two_ddp_ranks_train_rank_0_alone_checkpoints_and_the_run_resumes(tmp_path):
    ckpt, marks = _ranks(tmp_path, "first", 4)
    assert marks == {"wrapped-rank0-DistributedDataParallel", "wrapped-rank1-DistributedDataParallel",
                     "step1-rank0", "step3-rank0"}
    ckpt, marks = _ranks(tmp_path, "resumed", 6)
    assert marks == {"wrapped-rank0-DistributedDataParallel", "wrapped-rank1-DistributedDataParallel",
                     "step5-rank0"}  # from step 4 on: the steps before came from the checkpoint of step 3
    state = torch.load(T.latest_checkpoint(ckpt)[1], weights_only=True)
    assert state["step"] == 5 and set(state["model"]) == set(tiny().state_dict())  # no DDP "module." prefix


def test_two_fsdp_ranks_shard_the_model_and_checkpoint_it_whole(tmp_path):
    ckpt, marks = _ranks(tmp_path, "fsdp", 4, "--sharding", "fsdp")
    assert marks == {"wrapped-rank0-FSDPTinyLM", "wrapped-rank1-FSDPTinyLM", "step1-rank0", "step3-rank0"}
    state = torch.load(T.latest_checkpoint(ckpt)[1], weights_only=True)
    shapes = {k: tuple(v.shape) for k, v in state["model"].items()}
    assert shapes == {k: tuple(v.shape) for k, v in tiny().state_dict().items()}  # whole tensors, not shards
    model = tiny()  # and one process goes on from it: a checkpoint does not depend on the number of ranks
    T.fit(model, blocks(), ckpt, steps=6, every=2, lr=1e-2)
    assert T.latest_checkpoint(ckpt)[0] == 5


def test_a_single_rank_is_never_wrapped():
    model = tiny()
    assert T.wrap(model, "fsdp", 1) is model and T.wrap(model, "none", 1) is model


# --- Serverless GPU: ranks on the accelerator node ---------------------------------------------------------------

def test_with_gpus_the_ranks_start_on_this_node_through_the_serverless_launcher(tmp_path, monkeypatch):
    ckpt, data = _volume(tmp_path, monkeypatch)
    started = []

    def distributed(**kw):  # serverless_gpu.distributed(gpus=..., remote=False)(fn).distributed(*args)
        started.append(kw)

        def decorate(fn):
            return SimpleNamespace(distributed=lambda argv: started.append((fn, argv)))
        return decorate

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
    argv = ["--checkpoint-dir", str(ckpt), "--model", "tiny-lm", "--data", str(data), "--gpus", "8"]
    assert T.main(argv, distributed=distributed) == 0
    assert started == [{"gpus": 8, "remote": False}, (T.rank_main, argv)]


def test_more_gpus_than_the_node_has_exit_2_naming_the_multi_node_path(tmp_path, monkeypatch, capsys):
    ckpt, data = _volume(tmp_path, monkeypatch)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)
    argv = ["--checkpoint-dir", str(ckpt), "--model", "tiny-lm", "--data", str(data), "--gpus", "16"]
    assert T.main(argv, distributed=lambda **kw: pytest.fail("launched")) == 2
    assert "runs on one node" in capsys.readouterr().err
    assert T.main([*argv[:-2], "--gpus", "8", "--processes", "8"]) == 2


def test_lora_on_fsdp_ranks_checkpoints_the_whole_adapter_alone(tmp_path):
    """A LoRA model that the sizing spreads over GPUs (the serverless stack's 70B): adapters on FSDP2 shards."""
    ckpt, marks = _ranks(tmp_path, "lora-fsdp", 2, "--sharding", "fsdp", "--method", "lora", "--lora-targets", "head",
                         "--lora-r", "4")
    assert "wrapped-rank0-FSDPPeftModel" in marks and "step1-rank0" in marks
    state = torch.load(T.latest_checkpoint(ckpt)[1], weights_only=True)
    assert {k: tuple(v.shape) for k, v in state["model"].items()} == {
        "base_model.model.head.lora_A.default.weight": (4, 16), "base_model.model.head.lora_B.default.weight": (32, 4)}
    # whole: each of the two ranks holds half of every tensor
