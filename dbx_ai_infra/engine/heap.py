"""The cyclic garbage collector around the imports a command makes.

A command imports most of what it runs (pulumi, the provider SDK's modules, pydantic's models): several hundred
thousand long-lived objects. While they are loaded, CPython's collector scans the whole young heap again and again,
and every full collection walks everything imported so far (`preview --stack prod` spent about 560 ms of 2.8 s there,
four full collections of 50,000 to 250,000 objects; about 40 ms with `settled`, measured 2026-12-04 on the 2-vCPU
machine of bench/RESULTS.md). Imports make no garbage worth collecting, so `settled` pauses the collector while they
run and then freezes every object the collector tracks at that point (``gc.freeze``: out of every later collection's
sight and never freed; at start-up that is what the imports loaded, which lives as long as its module does) before
turning it back on. It freezes only when the block loaded a module: in a process that runs many commands (the tests,
``preview --all``) the imports happen once, and the garbage of one run is never frozen by the next. Garbage the
command itself makes is collected as before.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def settled() -> Iterator[None]:
    """Run a block of imports with the collector paused; if the block loaded a module, freeze (``gc.freeze``) every
    object the collector tracks when it ends."""
    was_enabled, modules = gc.isenabled(), len(sys.modules)
    gc.disable()
    try:
        yield
    finally:
        if len(sys.modules) != modules:
            gc.freeze()
        if was_enabled:
            gc.enable()
