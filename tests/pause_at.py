"""``python tests/pause_at.py POINT ARGS...``: ``python -m stackplan ARGS...`` that stops at POINT, says so on stderr
(`READY`), and waits there until a signal ends it. The interrupt tests signal it only after that line, so what they
check never depends on how fast the machine is (a sleep before the signal did: on a loaded machine the signal came
before or after the point it meant).

POINT is where a user's Ctrl-C may land:
- ``import``: while the provider SDK is being imported (the first seconds of a run);
- ``program``: inside the Pulumi program under the mock runtime, at the first resource it registers;
- ``write``: with the output's temporary file written, before it is renamed into place.
"""

from __future__ import annotations

import importlib.abc
import os
import runpy
import sys
import time
from pathlib import Path

READY = "pause_at: ready"
#: The longest wait at POINT; the test signals within moments, so reaching it means the signal never came.
WAIT_SECONDS = 120

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def ready_and_wait() -> None:
    print(READY, file=sys.stderr, flush=True)
    time.sleep(WAIT_SECONDS)


class _PauseOnImport(importlib.abc.MetaPathFinder):
    """Pauses when the provider's input types (the bulk of its import) are about to be imported."""

    def find_spec(self, name, path, target=None):  # noqa: ANN001 - the finder protocol
        if name == "pulumi_databricks._inputs":
            sys.meta_path.remove(self)
            ready_and_wait()
        return None


def install(point: str) -> None:
    if point == "import":
        sys.meta_path.insert(0, _PauseOnImport())
    elif point == "program":
        from stackplan import engine

        register = engine._Mocks.new_resource

        def new_resource(self, args):  # noqa: ANN001, ANN202
            if not getattr(new_resource, "paused", False):
                new_resource.paused = True  # type: ignore[attr-defined]
                ready_and_wait()
            return register(self, args)

        engine._Mocks.new_resource = new_resource  # type: ignore[method-assign]
    elif point == "write":
        from stackplan import output

        class _Os:  # os, with a pause before the rename that puts the output in place
            def __getattr__(self, name):  # noqa: ANN001, ANN204
                return getattr(os, name)

            @staticmethod
            def replace(src, dst):  # noqa: ANN001, ANN205
                ready_and_wait()
                os.replace(src, dst)

        output.os = _Os()  # type: ignore[assignment]
    else:
        raise SystemExit(f"pause_at: unknown point {point!r}")


if __name__ == "__main__":
    install(sys.argv[1])
    sys.argv = ["stackplan", *sys.argv[2:]]
    runpy.run_module("stackplan", run_name="__main__", alter_sys=True)
