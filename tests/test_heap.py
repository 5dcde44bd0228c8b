"""dbx_ai_infra.engine.heap.settled: imports run with the cyclic collector paused, and what they loaded is frozen once."""

from __future__ import annotations

import gc
import sys

import pytest

from dbx_ai_infra.engine.heap import settled


@pytest.fixture
def collector():
    """The collector as a test found it, restored after (frozen objects stay frozen: thawing costs nothing)."""
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_paused_inside_and_back_on_after(collector):
    gc.enable()
    with settled():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(collector):
    gc.disable()
    with settled():
        pass
    assert not gc.isenabled()


def test_it_is_back_on_when_the_block_raises(collector):
    gc.enable()
    with pytest.raises(ImportError), settled():
        import a_module_that_does_not_exist  # type: ignore[import-not-found]  # noqa: F401
    assert gc.isenabled()


def test_what_an_import_loaded_is_frozen_and_a_block_that_loads_nothing_freezes_nothing(collector, tmp_path,
                                                                                      monkeypatch):
    (tmp_path / "heap_probe_module.py").write_text("class Probe:\n    pass\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "heap_probe_module", raising=False)
    with settled():
        import heap_probe_module
    frozen = gc.get_freeze_count()
    assert frozen > 0
    assert heap_probe_module.Probe.__name__ == "Probe"
    garbage = [[] for _ in range(100)]
    for item in garbage:
        item.append(item)  # cycles made after the freeze, that the block below must not freeze
    del garbage, item
    with settled():
        import heap_probe_module as again  # already loaded: nothing new
    assert again is heap_probe_module
    assert gc.get_freeze_count() == frozen
