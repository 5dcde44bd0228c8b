"""One policy rule per module; each module defines ``RULE`` (a `dbx_ai_infra.policies.rule.Rule`) and is found
there: `dbx_ai_infra.policies.ruleset.registered` lists them in `Rule.order`."""
