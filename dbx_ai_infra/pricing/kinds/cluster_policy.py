"""``databricks:index/clusterPolicy:ClusterPolicy``: the limits a cluster made under it must keep; no cost."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER_POLICY

from .kind import ResourceKind


def facts(inputs: Mapping[str, Any]) -> str:
    return f"{len(json.loads(inputs.get('definition') or '{}'))} limited attributes"


KIND = ResourceKind(CLUSTER_POLICY, "ClusterPolicy", facts)
