#!/usr/bin/env bash
# Where the attention grid's time goes with every check on (issue 46's 120 s budget): the oracle's and
# the profiler's costs alone (oracle_cost.py), then the bench probe in-process with its pieces clocked
# (bench_where.py) after the build gate. Under /tmp/o-where, archived to $OUT/where.tgz every 45 s.
#   OUT=... bash bench/device/visit_where.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit where
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  PYTHONPATH=$repo timeout 150 python3 bench/device/oracle_cost.py 2>&1 | grep -v Warn
  d=$(ws attention workloads/attention/attention.py)
  GATE_S=200 gate "$d" attention build
  t0=$(date +%s)
  (cd "$d" && PYTHONPATH=$repo timeout 300 python3 "$repo/bench/device/bench_where.py" "$d" \
    workloads/attention/attention.py "$OUT/where-bench.json" > "$OUT/where-bench.log" 2>&1)
  echo "-- bench_where exit $? in $(( $(date +%s) - t0 )) s"
  sed -n '/where the time went/,$p' "$OUT/where-bench.log"
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
