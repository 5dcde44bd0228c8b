"""The entry point: ``python -m stackplan`` and the installed ``stackplan`` command both run `run`."""

import os
import sys
from typing import NoReturn

from stackplan import heap, interrupts


def run() -> NoReturn:
    """Install the signal handlers, run the command line, and leave at once with its exit code."""
    interrupts.install()
    try:
        with heap.settled():
            from stackplan_cli.cli import main

        code = main()
    except KeyboardInterrupt:  # before main() could take over (while importing): nothing was opened yet
        interrupts.exit_now()
    # Tearing the interpreter down after pulumi_databricks is imported takes about a second (bench/RESULTS.md),
    # and nothing is left to clean up: outputs are written and closed. Flush and leave at once.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
