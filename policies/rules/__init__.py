"""One policy rule per module; each module defines ``RULE``. ``policies.registry.ALL_RULES`` lists them in order."""
