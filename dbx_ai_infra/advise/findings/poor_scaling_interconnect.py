"""poor-scaling-interconnect: multi-node training whose GPUs wait on a slow network: fewer, larger nodes."""

from __future__ import annotations

import math
from dataclasses import replace

from dbx_ai_infra.advise.edits import node_edit, resize
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, figure, num
from dbx_ai_infra.advise.targets import Target
from dbx_ai_infra.gpucatalog import load_catalog


def build(row: Row, t: Target, c: Context) -> Outcome:
    evidence = (f"multi-node training on {t.min_workers} workers of {t.node_type_id} "
                f"({figure(t.bandwidth_gbps) if t.bandwidth_gbps else 'unknown'} Gbps, no GPU interconnect): median "
                f"GPU use {num(row, 'median_busy_util'):.0f}% while each node moved "
                f"{num(row, 'network_mbps'):,.0f} Mbit/s: the GPUs wait on the network.")
    catalog = load_catalog()
    node = catalog.get(t.node_type_id)
    if node is None:
        return Outcome(evidence)
    larger = [n for n in catalog.family_nodes(node.cloud, node.family)
              if n.gpu_count > node.gpu_count and not n.deprecated and not n.retired]
    if not larger:
        return Outcome(evidence, note="no larger node in this family: a family with a GPU interconnect is what is "
                                      "left.")
    total = t.min_workers * node.gpu_count  # the GPUs the run has now: keep them, on fewer nodes
    holding = [n for n in larger if n.gpu_count >= total]
    big = min(holding, key=lambda n: (n.gpu_count, n.usd_per_hour_on_demand or math.inf)) if holding \
        else max(larger, key=lambda n: n.gpu_count)
    workers = max(1, math.ceil(total / big.gpu_count))
    edit, current = resize(t, c, lo=workers)
    pinned, now = node_edit(t, c, big.node_type_id)
    return Outcome(evidence, Proposal(f"fewer, larger nodes: {t.min_workers} x {t.node_type_id} ({node.gpu_count} "
                                      f"GPU) -> {workers} x {big.node_type_id} ({big.gpu_count} GPUs): more of the "
                                      "gradient exchange stays inside a node", edit | pinned, current | now))


SPEC = FindingSpec(
    id="poor-scaling-interconnect",
    severity="warning",
    summary="multi-node training on a slow network with waiting GPUs",
    sql="""\
SELECT workload, CAST(NULL AS STRING) AS cluster_id, median_busy_util, network_mbps, min_workers, busy_minutes
FROM workload_summary
WHERE {{ busy }} AND median_busy_util < {{ t.gpu_low_percent }} AND {{ net_bound }}
""",
    build=build,
    thresholds=("min_busy_minutes", "gpu_low_percent", "network_high_mbps", "low_bandwidth_gbps"),
    plant=Plant("training", run=lambda run, target: replace(run, util=20.0, net_mbps=8000.0)),
)
