"""Policy rules for Databricks AI infrastructure.

The rules are pure functions of resource properties (``policies/rules/``). Three front ends share them:

* the CrossGuard pack (``policies/pack.py``, started by ``policies/__main__.py``),
* the offline evaluator over a plan (``policies.registry.evaluate_plan``),
* the evaluator over exported Clusters API JSON (``policies.registry.evaluate_cluster_json``).

This module stays light: it imports nothing, so ``import policies.common`` costs no more than that module.
"""
