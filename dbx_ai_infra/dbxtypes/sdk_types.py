"""databricks-sdk's API types, as a snapshot the policies and the spec read without importing the SDK.

The source is databricks-sdk itself (pinned in requirements.txt): its dataclasses (``compute.ClusterSpec``, ...) and
enums (``catalog.Privilege``, ...). Importing the SDK costs about as much as importing the Pulumi provider (its
package imports every service), so every run would pay it twice; instead `dbx_ai_infra.dbxtypes.sdk_snapshot.generate`
walks the
types once and
``dbx_ai_infra/dbxtypes/data/sdk_types.json`` keeps the result. ``make sdk-types`` writes it, and a test regenerates it
from the installed SDK and fails when the two differ, so the snapshot can never drift from the pinned SDK.

A field is described as ``{"enum": NAME}``, ``{"type": NAME}`` (a nested dataclass), ``{"list": FIELD}``, or ``{}``
(a scalar or a map, not looked into).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).resolve().parent / "data" / "sdk_types.json"

Field = Mapping[str, Any]


@functools.cache
def _snapshot() -> Mapping[str, Any]:
    data: Mapping[str, Any] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return data


def fields_of(type_name: str) -> Mapping[str, Field]:
    """The fields of an API type (``compute.ClusterSpec``), each described as in the module docstring."""
    fields: Mapping[str, Field] = _snapshot()["types"][type_name]
    return fields


def enum_values(enum_name: str) -> tuple[str, ...]:
    """The values of an API enum (``catalog.Privilege``)."""
    return tuple(_snapshot()["enums"][enum_name])

