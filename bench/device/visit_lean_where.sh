#!/usr/bin/env bash
# Where the idle cockpit's memory above the NVML floor goes on the GPU box (bench/idle_memory.py at 65 s,
# as bench/telemetry.py measures: by mapping, then with Python's allocations by file), and KernelBench's
# level-1 softmax (4096 x 393216 fp32) through the correctness gate on an 80 GB card.
#   OUT=... bash bench/device/visit_lean_where.sh
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/olw; mkdir -p "$OUT"; ARCHIVE=lean-where
repo=$PWD
. bench/device/lanes_common.sh
export XDG_CACHE_HOME=/tmp/cockpit-cache
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  python3 bench/idle_memory.py --at 65 2>&1; echo "-- exit $?"
  python3 bench/idle_memory.py --at 65 --trace 2>&1 | sed -n '/Python/,/modules beyond/p'; echo "-- exit $?"
  d=$(ws kb-row_softmax workloads/kernelbench/row_softmax.py)
  printf '[workload]\nkernelbench = "workloads/kernelbench/row_softmax.py"\n' > "$d/cockpit.toml"
  for g in build correctness; do gate "$d" kb-row_softmax $g; done
} > "$OUT/lane.txt" 2>&1
snap
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
