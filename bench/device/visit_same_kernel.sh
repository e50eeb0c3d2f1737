#!/usr/bin/env bash
# The same kernel timed against itself: the softmax committed, so `ours` and `ours@HEAD` are one
# source built twice, benched with every check on, then with each of the bench's guards off in
# turn (COCKPIT_GUARDS_OFF). Every config must read 1.00x [0.99, 1.01] ours@HEAD; on 2026-11-24
# (before the timed checks) it read 1.00x, worst 0.99x. On 2026-11-29 the learning-loop example's
# bench read 0.96x, worst 0.86x, at the batch-timed shapes whose output fits in L2 (M=4096
# N=512/1024, M=16384 N=512). The recording points at the outputs, not a check: the candidate's
# rotated with the input sets (DRAM), the reference's allocation reused one block (L2); a545ac7
# writes one pool for every set. This visit shows whether that holds (1.00x with every check on)
# and, if not, which guard's work is left, each turned off in turn.
# Under /tmp/o-same, archived to $OUT/same.tgz every 45 s.
#   OUT=... bash bench/device/visit_same_kernel.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit same
export CUDA_VISIBLE_DEVICES=${uuids[0]}
ratios() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['result']; print('geomean vs ours@HEAD', round(d['vs'].get('ours@head', 0), 4)); \
[print(f\"  {r['config']:<22} {r['impl']['ours'].get('method'):<8} ours {r['impl']['ours']['median_ms']*1e3:8.2f} us  head/ours {r['impl']['ours@head']['median_ms']/r['impl']['ours']['median_ms']:.3f}\") for r in d['rows']]" "$1" 2>&1
}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  s=$(ws softmax workloads/softmax/softmax.py)
  GATE_S=150 gate "$s" softmax build
  GATE_S=150 gate "$s" softmax bench; ratios "$OUT/softmax-bench.json"; cp "$OUT/softmax-bench.json" "$OUT/on.json"
  for off in poisoned-trial-outputs timed-outputs shifting-pool kernel-records; do
    COCKPIT_GUARDS_OFF=$off GATE_S=150 gate "$s" softmax bench; echo "[$off off]"; ratios "$OUT/softmax-bench.json"
    cp "$OUT/softmax-bench.json" "$OUT/off-$off.json"
  done
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
