"""``python -m stackplan``: the same entry as the installed ``stackplan`` command, in an interpreter that has the
dependencies; one without them (the system's Python, outside the virtualenv) is told how to run it, exit 2. Both
imports are of the standard library only."""

import sys

from dbx_ai_infra.__main__ import run
from stackplan.needs import how_to_run, missing_requirements

if __name__ == "__main__":
    if missing := missing_requirements():
        sys.stderr.write(how_to_run(missing) + "\n")
        sys.exit(2)
    run()
