#!/usr/bin/env bash
# A short visit after a small change to GPU-run code: KernelBench's row softmax (as it is) through build,
# correctness and bench in a trusted scratch workspace. Outputs under $OUT (summary.txt).
#   OUT=... bash bench/device/visit_short.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit short
{
  d=$(ws kb-row_softmax workloads/kernelbench/row_softmax.py)
  toml "$d" '[workload]\nkernelbench = "workloads/kernelbench/row_softmax.py"\n'
  for g in build correctness bench; do gate "$d" kb-row_softmax $g; done
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
