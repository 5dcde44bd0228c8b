import os
import sys

from .cli import main

code = main()
# Tearing the interpreter down after pulumi_databricks is imported takes about a second (bench/RESULTS.md),
# and nothing is left to clean up: outputs are written and closed. Flush and leave at once.
try:
    sys.stdout.flush()
    sys.stderr.flush()
except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
    pass
os._exit(code)
