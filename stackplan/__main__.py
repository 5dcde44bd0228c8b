import os
import signal
import sys


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM ends the run like Ctrl-C: partial outputs removed, exit 130


signal.signal(signal.SIGTERM, _terminate)
try:
    from .cli import main

    code = main()
except KeyboardInterrupt:  # before main() could take over (while importing): nothing was opened yet
    print("interrupted: nothing was written.", file=sys.stderr)
    from .exits import EXIT_INTERRUPTED

    code = EXIT_INTERRUPTED
# Tearing the interpreter down after pulumi_databricks is imported takes about a second (bench/RESULTS.md),
# and nothing is left to clean up: outputs are written and closed. Flush and leave at once.
try:
    sys.stdout.flush()
    sys.stderr.flush()
except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
    pass
os._exit(code)
