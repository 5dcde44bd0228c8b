"""One policy rule per module; each module defines ``RULE``. ``dbx_ai_infra.policies.registry.ALL_RULES`` lists
them in order."""
