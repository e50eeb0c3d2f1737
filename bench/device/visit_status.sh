#!/usr/bin/env bash
# `cockpit status` on 10,000 sessions (bench/status_big.py, 20 warm runs, workspaces kept under /tmp/sb), then
# where its time goes on each (bench/device/status_where.py). Outputs under $OUT (summary.txt).
#   OUT=... bash bench/device/visit_status.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit status
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  t0=$(date +%s); python3 bench/status_big.py --sessions 10000 --runs 20 --workspace /tmp/sb > "$OUT/status-big.txt" 2>&1
  echo "-- status_big exit $? in $(( $(date +%s) - t0 )) s"; tail -12 "$OUT/status-big.txt"
  XDG_CACHE_HOME=/tmp/sb/cache PYTHONPYCACHEPREFIX=/tmp/sb/pycache python3 bench/device/status_where.py \
    /tmp/sb/small /tmp/sb/history_big /tmp/sb/one 2>&1 | tee "$OUT/status-where.txt" | grep -E "^(==|imports)"
  XDG_CACHE_HOME=/tmp/sb/cache PYTHONPYCACHEPREFIX=/tmp/sb/pycache python3 -X importtime -m cockpit --workspace /tmp/sb/small status 2> "$OUT/importtime-small.txt" > /dev/null
  XDG_CACHE_HOME=/tmp/sb/cache PYTHONPYCACHEPREFIX=/tmp/sb/pycache python3 -X importtime -m cockpit --workspace /tmp/sb/one status 2> "$OUT/importtime-one.txt" > /dev/null
  ls /tmp/sb/cache/cockpit/open/ | wc -l
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
