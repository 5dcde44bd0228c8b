"""A token the configuration creates expires: ``lifetime_seconds`` is set (and, when the policy config says so, no
longer than a maximum).

``databricks_token`` and ``databricks_obo_token`` (Pulumi ``databricks.Token``, ``databricks.OboToken``):
"If no lifetime is specified, the token remains valid indefinitely" (the provider's docs, resources/token.md and
obo_token.md, read 2026-12-05). A credential that never expires outlives the person or pipeline it was made for;
the checks peers make on Databricks Terraform flag it too (KICS, "Databricks Token Without Lifetime"). A workspace
export's token (the token API's ``token_infos``) says the same with ``expiry_time: -1``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from dbx_ai_infra.dbxtypes.shape import as_number
from dbx_ai_infra.dbxtypes.vocabulary import OBO_TOKEN, TOKEN, UNKNOWN_VALUE
from dbx_ai_infra.policies.rule import ResourceView, Rule, Thresholds

NEVER = -1  # the token API's expiry_time of a token with no lifetime


def check(view: ResourceView, config: Settings) -> list[str]:
    props = view.props
    what = "on-behalf-of token" if view.resource_type == OBO_TOKEN else "token"
    if "expiry_time" in props and "lifetime_seconds" not in props:  # the token API's view of an existing token
        if as_number(props.get("expiry_time")) == NEVER:
            return [f"{what} {props.get('comment') or props.get('token_id') or ''} never expires (expiry_time -1). "
                    "Fix: revoke it and create one with a lifetime (lifetime_seconds)."]
        return []
    lifetime = props.get("lifetime_seconds")
    if lifetime == UNKNOWN_VALUE:
        return []
    seconds = as_number(lifetime)
    if seconds is None or seconds <= 0:
        return [f"{what} without lifetime_seconds: it stays valid indefinitely, after the person or pipeline it was "
                "made for has gone. Fix: set lifetime_seconds (e.g. 7776000 for 90 days) and rotate it."]
    ceiling = config.max_lifetime_seconds
    if ceiling is not None and seconds > ceiling:
        return [f"{what} lifetime_seconds {seconds:.0f} is longer than the policy's maximum {ceiling:.0f}. "
                f"Fix: set lifetime_seconds to at most {ceiling:.0f} and rotate it."]
    return []


class Settings(Thresholds):
    """Thresholds of databricks-token-require-lifetime."""

    max_lifetime_seconds: Annotated[int | None, Field(
        ge=1, description="Longest lifetime_seconds allowed; none by default (any lifetime passes).",
    )] = None


RULE = Rule(
    name="databricks-token-require-lifetime",
    order=160,
    description="Personal access tokens and on-behalf-of tokens must expire: lifetime_seconds set, within the "
                "policy's maximum when it sets one.",
    details=("The resources are `databricks_token` and `databricks_obo_token`; without lifetime_seconds a token never "
             "expires. A workspace export's token with `expiry_time: -1` is reported too."),
    enforcement="mandatory",
    resource_types=(TOKEN, OBO_TOKEN),
    check=check,
    takes=(ResourceView,),
    remediation="Set lifetime_seconds on the token (and keep it within max_lifetime_seconds), and rotate it.",
    severity="high",
    settings=Settings,
)
