"""``python -m stackplan``: the same entry as the installed ``stackplan`` command. An interpreter without the
dependencies (the system's Python, outside the virtualenv) is told how to run it, exit 2
(`dbx_ai_infra.engine.needs`)."""

from dbx_ai_infra.__main__ import run

if __name__ == "__main__":
    run()
