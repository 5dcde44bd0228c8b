"""The Pulumi program's entry point (Pulumi.yaml's project runs this file): the program is dbx_ai_infra/program.py,
the same one the offline engine runs (``python -m stackplan preview``)."""

import runpy

runpy.run_module("dbx_ai_infra.program", run_name="__main__")
