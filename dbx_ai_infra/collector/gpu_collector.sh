#!/bin/bash
# dbx-ai-infra GPU collector: a Databricks cluster init script that samples every GPU once a minute and writes the
# samples as whole CSV files (never appends) under a Unity Catalog Volume, the gpu_timeline input of
# `python -m stackplan advise` (issue 14). System tables have no GPU metrics; this fills that gap.
#
# Columns (a contract): cluster_id,instance_id,driver,gpu_index,start_time,end_time,gpu_util_percent,
#                       gpu_mem_used_mb,gpu_mem_total_mb
# The memory columns hold what nvidia-smi reports, MiB (2^20 bytes: it prints "MiB" with units on), under the
# contract's names: advise reads them as MiB (GB there is GiB, MiB / 1024), and the names stay as the contract has
# them.
# One file per node and minute: $GPU_TIMELINE_DIR/<cluster_id>/<instance_id>/<start>.csv. Each sample is written to
# local disk first (COLLECTOR_SPOOL_DIR) and then moved to the Volume under a temporary name and renamed, so a reader
# never sees half a file. Databricks documents Volume access for init scripts while they run, not for a process
# that keeps running after the script returns: when the Volume cannot be written (no credential yet, or any more),
# the files stay on local disk, the failure is logged, and the next minute tries again (the spool keeps at most a
# day of files, the oldest dropped first). A node without a GPU (a CPU driver) runs no collector.
#
# Environment: DB_CLUSTER_ID and DB_IS_DRIVER are set by Databricks for init scripts; GPU_TIMELINE_DIR is the
# Volume directory (e.g. /Volumes/ai/ops/telemetry/gpu_timeline). COLLECTOR_ONCE=1 takes one sample and exits (tests);
# COLLECTOR_INTERVAL_SECONDS changes the minute; COLLECTOR_LOOPS=N with COLLECTOR_FOREGROUND=1 runs N rounds of the
# loop in the foreground and returns (tests). nvidia-smi comes from the GPU runtime.
set -euo pipefail

OUT_DIR="${GPU_TIMELINE_DIR:?set GPU_TIMELINE_DIR to a Volume directory}"
CLUSTER_ID="${DB_CLUSTER_ID:-unknown-cluster}"
DRIVER="$([ "${DB_IS_DRIVER:-FALSE}" = "TRUE" ] && echo true || echo false)"
INSTANCE_ID="${COLLECTOR_INSTANCE_ID:-$(hostname)}"
INTERVAL="${COLLECTOR_INTERVAL_SECONDS:-60}"
SPOOL="${COLLECTOR_SPOOL_DIR:-/local_disk0/tmp/dbx-gpu-collector}"
SPOOL_MAX_FILES="${COLLECTOR_SPOOL_MAX_FILES:-1440}"
# The cluster's own log directory on the driver when there is one (delivered with the cluster logs), else /tmp.
LOG="${COLLECTOR_LOG:-$([ -d /databricks/driver/logs ] && echo /databricks/driver/logs || echo /tmp)/dbx-gpu-collector.log}"

log() { echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) dbx-gpu-collector: $*" >> "$LOG" 2>/dev/null || true; }

# A node without a GPU has nothing to sample: no collector (a CPU driver would write header-only files).
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  log "no GPU on this node ($INSTANCE_ID): the collector does not run"
  exit 0
fi

# nvidia-smi CSV (index, utilization.gpu, memory.used, memory.total; no header, no units) -> timeline rows.
# Values that are not numbers ("[N/A]", "[Not Supported]") are written empty, never as 0.
to_rows() {
  awk -F', *' -v c="$CLUSTER_ID" -v i="$INSTANCE_ID" -v d="$DRIVER" -v s="$1" -v e="$2" '
    function num(x) { gsub(/^ +| +$/, "", x); return (x ~ /^[0-9]+(\.[0-9]+)?$/) ? x : "" }
    NF >= 4 && num($1) != "" { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", c, i, d, num($1), s, e, num($2), num($3), num($4) }'
}

sample() {
  local start end tmp name
  start="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  end="$(date -u -d "@$(( $(date -u +%s) + INTERVAL ))" +%Y-%m-%dT%H:%M:%SZ)"
  mkdir -p "$SPOOL"
  name="${start//:/-}"  # 2026-12-03T01-30-00Z: no ':' in file names
  tmp="$SPOOL/.${name}.csv.tmp"
  {
    echo "cluster_id,instance_id,driver,gpu_index,start_time,end_time,gpu_util_percent,gpu_mem_used_mb,gpu_mem_total_mb"
    nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits \
      | to_rows "$start" "$end"
  } > "$tmp"
  mv "$tmp" "$SPOOL/${name}.csv"
}

# Move the spooled files to the Volume, oldest first, each whole (copied under a temporary name, then renamed);
# a file that cannot be moved stays in the spool for the next try.
flush() {
  local dir file base moved=0
  dir="$OUT_DIR/$CLUSTER_ID/$INSTANCE_ID"
  for file in "$SPOOL"/*.csv; do
    [ -e "$file" ] || continue
    base="$(basename "$file")"
    if mkdir -p "$dir" 2>/dev/null && cp "$file" "$dir/.${base}.tmp" 2>/dev/null \
        && mv "$dir/.${base}.tmp" "$dir/$base" 2>/dev/null; then
      rm -f "$file"
      moved=$((moved + 1))
    else
      rm -f "$dir/.${base}.tmp" 2>/dev/null || true
      log "cannot write $dir (the Volume, or a credential for it, is not there): $base kept on local disk"
      break
    fi
  done
  # keep at most SPOOL_MAX_FILES files: drop the oldest, saying so
  local extra
  extra=$(( $(find "$SPOOL" -maxdepth 1 -name '*.csv' | wc -l) - SPOOL_MAX_FILES ))
  if [ "$extra" -gt 0 ]; then
    # sed reads the whole list (head would close the pipe early, and sort take SIGPIPE on a long spool)
    find "$SPOOL" -maxdepth 1 -name '*.csv' | sort | sed -n "1,${extra}p" | xargs -r -d '\n' rm -f
    log "spool over $SPOOL_MAX_FILES files: the $extra oldest dropped"
  fi
  return 0
}

# The loop outlives any one failing command: errexit and pipefail are off in it (a full disk, an unwritable Volume, a
# pipe closed early are logged, and the next round tries again), for it must run through the long outage the spool
# exists for.
run_loop() {
  set +e +o pipefail
  local round=0
  while :; do
    round=$((round + 1))
    sample || log "sample failed (round $round)"
    flush || log "flush failed (round $round)"
    if [ -n "${COLLECTOR_LOOPS:-}" ] && [ "$round" -ge "$COLLECTOR_LOOPS" ]; then
      log "loop ended after $round rounds"
      return 0
    fi
    sleep "$INTERVAL" || sleep 60
  done
}

if [ "${COLLECTOR_ONCE:-0}" = "1" ]; then
  sample
  flush
  exit 0
fi
if [ "${COLLECTOR_FOREGROUND:-0}" = "1" ]; then
  run_loop
  exit 0
fi
# In the background: an init script must return for the cluster to start.
( run_loop ) >> "$LOG" 2>&1 &
