"""Entry point of the CrossGuard pack: ``pulumi preview --policy-pack policies`` (the pack's rules are
dbx_ai_infra.policies, installed in the project's .venv).

Constructing ``PolicyPack`` starts the gRPC analyzer server and blocks, so nothing but the CLI (and the gRPC test,
as a subprocess) may run this file; tests never import it.
"""

from pulumi_policy import Policy, PolicyPack

from dbx_ai_infra.policies.pack import PACK_DESCRIPTION, PACK_NAME, build_policies, team_rules_from_environment

team_rules_from_environment()  # DBX_AI_INFRA_RULES=DIR: the team's own rules, as `--rules DIR` offline
policies: list[Policy] = list(build_policies())
PolicyPack(name=PACK_NAME, policies=policies, description=PACK_DESCRIPTION)
