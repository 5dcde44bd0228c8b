"""``python -m stackplan``: the same entry as the installed ``stackplan`` command."""

from dbx_ai_infra.__main__ import run

if __name__ == "__main__":
    run()
