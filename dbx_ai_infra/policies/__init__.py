"""Policy rules for Databricks AI infrastructure.

The rules are pure functions of resource properties (``dbx_ai_infra/policies/rules/``). Three front ends share them:

* the CrossGuard pack (``dbx_ai_infra/policies/pack.py``, started by ``policies/__main__.py``),
* the offline evaluator over a plan (``dbx_ai_infra.policies.registry.evaluate_plan``),
* the evaluator over a workspace export's items (``dbx_ai_infra.policies.registry.evaluate_export``; the reader that
  makes the items from what a workspace returns is ``dbx_ai_infra.sources.exports``).

This module stays light: it imports nothing, so ``import dbx_ai_infra.policies.common`` costs no more than that module.
"""
