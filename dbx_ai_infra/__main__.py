"""The entry point: ``python -m stackplan`` and the installed ``stackplan`` command both run `run`."""

import os
import sys
from typing import NoReturn

from dbx_ai_infra.engine import heap, interrupts
from dbx_ai_infra.engine.crash import internal_error_line, stdout_problem
from dbx_ai_infra.engine.exits import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK
from dbx_ai_infra.engine.needs import missing_line


def _flushed(code: int) -> int:
    """Flush what the run printed and return its exit code: standard output that cannot take it (closed by its
    reader, ``| head``; a full disk, ``> /dev/full``) is exit 2 with its own line, unless the run failed already."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        if code in (EXIT_INVALID, EXIT_INTERNAL, EXIT_INTERRUPTED):  # the run said why it ended already
            return code
        problem, fix = stdout_problem(exc)
        _say(f"error: standard output: {problem} Fix: {fix}")
        return EXIT_INVALID
    try:
        sys.stderr.flush()
    except OSError:  # nowhere to say anything
        pass
    return code


def _say(line: str) -> None:
    try:
        os.write(2, f"{line}\n".encode())
    except OSError:  # stderr is closed or full too: the exit code says it
        pass


def run() -> NoReturn:
    """Install the signal handlers, run the command line, and leave at once with its exit code."""
    interrupts.install()
    try:
        with heap.settled():
            from dbx_ai_infra.cli.cli import main

        code = main()
    except KeyboardInterrupt:  # before main() could take over (while importing): nothing was opened yet
        interrupts.exit_now()
    except SystemExit as exc:  # argparse's --help, --version and usage errors
        code = exc.code if isinstance(exc.code, int) else EXIT_OK if exc.code is None else EXIT_INVALID
    except Exception as exc:  # noqa: BLE001 - outside main()'s own guard (the parser): exit 3, never a traceback
        if (missing := missing_line(exc)) is not None:  # this Python lacks the dependencies: how to run it, exit 2
            _say(missing)
            code = EXIT_INVALID
        elif os.environ.get("STACKPLAN_DEBUG"):
            raise
        else:
            _say(internal_error_line(exc))
            code = EXIT_INTERNAL
    # Tearing the interpreter down after pulumi_databricks is imported takes about a second (bench/RESULTS.md),
    # and nothing is left to clean up: outputs are written and closed. Flush and leave at once.
    os._exit(_flushed(code))


if __name__ == "__main__":
    run()
