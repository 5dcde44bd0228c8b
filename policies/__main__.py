"""Entry point of the CrossGuard pack: ``pulumi preview --policy-pack policies``.

Constructing ``PolicyPack`` starts the gRPC analyzer server and blocks, so nothing but the CLI (and the gRPC test,
as a subprocess) may run this file; tests never import it.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root: policies, gpucatalog

from pulumi_policy import Policy, PolicyPack  # noqa: E402

from policies.pack import PACK_DESCRIPTION, PACK_NAME, build_policies, team_rules_from_environment  # noqa: E402

team_rules_from_environment()  # DBX_AI_INFRA_RULES=DIR: the team's own rules, as `--rules DIR` offline
policies: list[Policy] = list(build_policies())
PolicyPack(name=PACK_NAME, policies=policies, description=PACK_DESCRIPTION)
