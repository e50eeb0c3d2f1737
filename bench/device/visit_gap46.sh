#!/usr/bin/env bash
# Issue 46's gap on the GPU: the cheat catalogue's correctness part (recorded for
# tests/fixtures/gpu/cheats/mutation.json beside the bench part of the final visit) and Triton's
# layer-norm tutorial through correctness and the bench with every check on, side by side (no suite
# beside them: under the suite the layer norm's gates ran past their limits).
# Under /tmp/o-gap46, archived to $OUT/gap46.tgz every 45 s.
#   OUT=... [SECONDS_LEFT=480] bash bench/device/visit_gap46.sh
set -u
: "${OUT:?set OUT}"
DEADLINE=$(( $(date +%s) + ${SECONDS_LEFT:-480} ))
repo=$PWD
. bench/device/lanes_common.sh
begin_visit gap46
left() { echo $(( DEADLINE - $(date +%s) )); }
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  t0=$(date +%s)
  PYTHONPATH=$repo timeout "$(left)" python3 bench/cheat_catalogue.py --only correctness --jobs 8 \
    --json "$OUT/mutation-correctness.json" > "$OUT/catalogue-correctness.txt" 2>&1 &
  part=$!
  d=$(ws layernorm workloads/layernorm_triton/layernorm.py)
  for g in correctness bench; do GATE_S=200 gate "$d" layernorm $g; done
  wait "$part"; echo "-- catalogue correctness exit $? in $(( $(date +%s) - t0 )) s"
  cat "$OUT/catalogue-correctness.txt"
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
