"""Custom checkov checks for ``databricks_cluster``: the benchmark's Terraform twins of our cluster rules.

checkov loads every ``.py`` file of this folder (``--external-checks-dir bench/checkov_checks``); one check per file,
sharing the readers of ``dbx_bench_common.py``. Node-type knowledge (cloud, GPU or not) comes from the JSON file named
by the environment variable ``BENCH_NODE_TYPES`` (bench/run.py writes it from gpucatalog), so both engines decide
with the same facts; without it a naming-pattern fallback is used.
"""
