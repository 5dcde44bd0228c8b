#!/bin/bash
# dbx-ai-infra GPU collector: a Databricks cluster init script that samples every GPU once a minute and writes the
# samples as whole CSV files (never appends) under a Unity Catalog Volume, the gpu_timeline input of
# `python -m stackplan advise` (issue 14). System tables have no GPU metrics; this fills that gap.
#
# Columns (a contract): cluster_id,instance_id,driver,gpu_index,start_time,end_time,gpu_util_percent,
#                       gpu_mem_used_mb,gpu_mem_total_mb
# One file per node and minute: $GPU_TIMELINE_DIR/<cluster_id>/<instance_id>/<start>.csv, written to a temporary
# name then renamed, so a reader never sees half a file.
#
# Environment: DB_CLUSTER_ID and DB_IS_DRIVER are set by Databricks for init scripts; GPU_TIMELINE_DIR is the
# Volume directory (e.g. /Volumes/ai/ops/telemetry/gpu_timeline). COLLECTOR_ONCE=1 takes one sample and exits (tests);
# COLLECTOR_INTERVAL_SECONDS changes the minute. nvidia-smi comes from the GPU runtime.
set -euo pipefail

OUT_DIR="${GPU_TIMELINE_DIR:?set GPU_TIMELINE_DIR to a Volume directory}"
CLUSTER_ID="${DB_CLUSTER_ID:-unknown-cluster}"
DRIVER="$([ "${DB_IS_DRIVER:-FALSE}" = "TRUE" ] && echo true || echo false)"
INSTANCE_ID="${COLLECTOR_INSTANCE_ID:-$(hostname)}"
INTERVAL="${COLLECTOR_INTERVAL_SECONDS:-60}"

# nvidia-smi CSV (index, utilization.gpu, memory.used, memory.total; no header, no units) -> timeline rows.
# Values that are not numbers ("[N/A]", "[Not Supported]") are written empty, never as 0.
to_rows() {
  awk -F', *' -v c="$CLUSTER_ID" -v i="$INSTANCE_ID" -v d="$DRIVER" -v s="$1" -v e="$2" '
    function num(x) { gsub(/^ +| +$/, "", x); return (x ~ /^[0-9]+(\.[0-9]+)?$/) ? x : "" }
    NF >= 4 && num($1) != "" { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", c, i, d, num($1), s, e, num($2), num($3), num($4) }'
}

sample() {
  local start end dir tmp name
  start="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  end="$(date -u -d "@$(( $(date -u +%s) + INTERVAL ))" +%Y-%m-%dT%H:%M:%SZ)"
  dir="$OUT_DIR/$CLUSTER_ID/$INSTANCE_ID"
  mkdir -p "$dir"
  name="${start//:/-}"  # 2026-12-03T01-30-00Z: no ':' in file names
  tmp="$dir/.${name}.csv.tmp"
  {
    echo "cluster_id,instance_id,driver,gpu_index,start_time,end_time,gpu_util_percent,gpu_mem_used_mb,gpu_mem_total_mb"
    nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits \
      | to_rows "$start" "$end"
  } > "$tmp"
  mv "$tmp" "$dir/${name}.csv"
}

if [ "${COLLECTOR_ONCE:-0}" = "1" ]; then
  sample
  exit 0
fi
# In the background: an init script must return for the cluster to start.
( while true; do sample || true; sleep "$INTERVAL"; done ) >> /tmp/dbx-gpu-collector.log 2>&1 &
