"""gpu-memory-near-oom: GPU memory use at the GPUs' limit: the next larger node before a run dies of it."""

from __future__ import annotations

from dataclasses import replace

from dbx_ai_infra.advise.edits import node_edit, workload_spec
from dbx_ai_infra.advise.record import Context, FindingSpec, Outcome, Plant, Proposal, Row, num
from dbx_ai_infra.advise.targets import Target
from dbx_ai_infra.gpucatalog import load_catalog


def build(row: Row, t: Target, c: Context) -> Outcome:
    evidence = (f"P99 of GPU memory use {num(row, 'gpu_mem_p99_percent'):.0f}% of a GPU's "
                f"{num(row, 'gpu_mem_total_mb') / 1024:,.0f} GB (peak {num(row, 'gpu_mem_peak_percent'):.0f}%; the "
                f"line is {c.settings.gpu_mem_near_oom_percent:g}%) over {int(num(row, 'busy_minutes')):,} busy "
                f"minutes on {t.node_type_id}: a larger batch, a longer sequence or a new model version runs out of "
                "memory (CUDA OOM) and fails the run.")
    catalog = load_catalog()
    node = catalog.get(t.node_type_id)
    if node is None:
        return Outcome(evidence, note=f"{t.node_type_id} is not in the node catalog: no larger node to propose.")
    larger = [n for n in catalog.family_nodes(node.cloud, node.family)
              if n.total_gpu_memory_gb > node.total_gpu_memory_gb and not n.deprecated]
    if not larger:
        return Outcome(evidence, note=(f"{node.node_type_id} is the largest {node.family} node: a family with more "
                                       "GPU memory per GPU (gpu_family), a lower precision or LoRA is what is left."))
    bigger = larger[0]  # the family's order: total GPU memory, then price
    section = workload_spec(t, c)
    edit, current = node_edit(t, c, bigger.node_type_id)
    if getattr(section, "memory_need_gb", None) is not None:  # the measured need proved too small: drop it
        edit[f"{t.key}.memory_need_gb"] = None
        current[f"{t.key}.memory_need_gb"] = section.memory_need_gb
    return Outcome(evidence, Proposal(
        f"the next larger node: {node.node_type_id} ({node.total_gpu_memory_gb:g} GB) -> {bigger.node_type_id} "
        f"({bigger.gpu_count} x {bigger.gpu}, {bigger.total_gpu_memory_gb:g} GB)", edit, current))


SPEC = FindingSpec(
    id="gpu-memory-near-oom",
    severity="critical",
    summary="the P99 of GPU memory use at or above the near-OOM line",
    sql="""\
-- The fullest GPU's memory use, per cluster minute, at the limit in the fullest 1% of minutes (busy workloads only).
SELECT workload, CAST(NULL AS STRING) AS cluster_id, gpu_mem_p99_percent, gpu_mem_peak_percent, gpu_mem_total_mb,
       busy_minutes
FROM workload_summary
WHERE {{ busy }} AND gpu_mem_p99_percent >= {{ t.gpu_mem_near_oom_percent }}
""",
    build=build,
    thresholds=("min_busy_minutes", "gpu_mem_near_oom_percent"),
    plant=Plant("inference", run=lambda run, target: replace(run, mem_share=0.97)),
)
