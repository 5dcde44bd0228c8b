"""Policy rules for Databricks AI infrastructure.

The rules are pure functions of resource properties (``policies/rules/``). Three front ends share them:

* the CrossGuard pack (``policies/pack.py``, started by ``policies/__main__.py``),
* the offline evaluator over a plan (``policies.registry.evaluate_plan``),
* the evaluator over a workspace export's items (``policies.registry.evaluate_export``; the reader that makes the
  items from what a workspace returns, and ``evaluate_cluster_json`` over JSON data, are
  ``stackplan_sources.exports``).

This module stays light: it imports nothing, so ``import policies.common`` costs no more than that module.
"""
