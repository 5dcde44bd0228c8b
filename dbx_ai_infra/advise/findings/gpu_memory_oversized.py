"""gpu-memory-oversized: the GPUs' memory peak stays far below what they hold: pin a smaller node that holds it."""

from __future__ import annotations

from dataclasses import replace

from dbx_ai_infra.advise.edits import node_edit, workload_spec
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import Target
from dbx_ai_infra.gpucatalog import load_catalog


def build(row: Row, t: Target, c: Context) -> Outcome:
    peak_mb, total_mb = num(row, "gpu_mem_peak_mb"), num(row, "gpu_mem_total_mb")
    catalog = load_catalog()
    node = catalog.get(t.node_type_id)
    gpus = node.gpu_count if node is not None else max(t.gpus_per_node, 1)
    headroom = float(c.settings.gpu_mem_headroom_percent)
    # what one node must hold: every GPU's observed peak, plus the headroom
    need_gb = round(peak_mb / 1024 * gpus * (1 + headroom / 100), 1)
    evidence = (f"peak GPU memory use {peak_mb / 1024:,.1f} GB of a GPU's {total_mb / 1024:,.0f} GB "
                f"({num(row, 'gpu_mem_peak_percent'):.0f}%, under {c.settings.gpu_mem_oversized_percent:g}%) "
                f"over {int(num(row, 'busy_minutes')):,} busy minutes on {t.node_type_id} ({gpus} GPU"
                f"{'s' if gpus > 1 else ''}): the node holds {gpus} x the peak + {headroom:g}% = {need_gb:g} GB "
                "with room to spare.")
    if node is None or node.usd_per_hour_on_demand is None:
        return Outcome(evidence, note=f"{t.node_type_id} is not in the node catalog: no smaller node to compare.")
    section = workload_spec(t, c)
    family = (getattr(section, "gpu_family", None) or (c.spec.gpu_family if c.spec is not None else node.family))
    holding = [n for n in catalog.nodes if n.cloud == node.cloud and not n.retired and not n.deprecated
               and n.usd_per_hour_on_demand is not None and n.total_gpu_memory_gb >= need_gb]
    # the cheapest that holds it, the workload's own family first among equals
    best = min(holding, key=lambda n: (n.usd_per_hour_on_demand or 0.0, n.family != family, n.total_gpu_memory_gb),
               default=None)
    if best is None or (best.usd_per_hour_on_demand or 0.0) >= node.usd_per_hour_on_demand:
        return Outcome(evidence, note=(f"no cheaper node of {node.cloud} holds {need_gb:g} GB: the memory is "
                                       "oversized but the node is already the cheapest that holds the peak."))
    edit, current = node_edit(t, c, best.node_type_id)
    edit[f"{t.key}.memory_need_gb"] = need_gb
    current[f"{t.key}.memory_need_gb"] = getattr(section, "memory_need_gb", None)
    if best.family != family:
        edit[f"{t.key}.gpu_family"] = best.family
        current[f"{t.key}.gpu_family"] = getattr(section, "gpu_family", None) or f"(the stack's: {family})"
    return Outcome(evidence, Proposal(
        f"pin {best.node_type_id} ({best.gpu_count} x {best.gpu}, {best.total_gpu_memory_gb:g} GB), the cheapest "
        f"node that holds the observed {need_gb:g} GB; memory_need_gb {need_gb:g} records the measured need, which "
        "overrides the sizer's estimate from the model", edit, current))


SPEC = FindingSpec(
    id="gpu-memory-oversized",
    severity="warning",
    summary="peak GPU memory use under the oversized line of a GPU's memory over the window",
    sql="""\
-- The fullest GPU's memory peak over the window stays under the oversized line (busy workloads only).
SELECT workload, CAST(NULL AS STRING) AS cluster_id, gpu_mem_peak_mb, gpu_mem_total_mb, gpu_mem_peak_percent,
       busy_minutes
FROM workload_summary
WHERE {{ busy }} AND gpu_mem_peak_percent < {{ t.gpu_mem_oversized_percent }}
""",
    build=build,
    thresholds=("min_busy_minutes", "gpu_mem_oversized_percent", "gpu_mem_headroom_percent"),
    plant=Plant("training", run=lambda run, target: replace(run, mem_share=0.2)),
)
