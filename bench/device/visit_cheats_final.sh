#!/usr/bin/env bash
# Issue 46 on the GPU, part 2, on the final code: the cheat catalogue's mutation test (recorded for
# tests/fixtures/gpu/cheats/mutation.json) beside the whole suite in SHARDS pytest processes; then the
# honest workloads through correctness and the bench with every check on, while time lasts: the
# attention example (its bench's wall time is the grid's budget, 120 s), KernelBench's level-1 softmax
# and level-2 GEMM epilogue, Triton's layer-norm tutorial and the Liger-style softmax. Everything under
# /tmp/o-final46, archived to $OUT/final46.tgz every 45 s.
#   OUT=... [SECONDS_LEFT=560] [SHARDS=8] bash bench/device/visit_cheats_final.sh
set -u
: "${OUT:?set OUT}"
DEADLINE=$(( $(date +%s) + ${SECONDS_LEFT:-560} ))
repo=$PWD
. bench/device/lanes_common.sh
begin_visit final46
left() { echo $(( DEADLINE - $(date +%s) )); }
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  suite "${SHARDS:-8}" > "$OUT/suite.txt" 2>&1 &
  suite_pid=$!
  t0=$(date +%s)
  PYTHONPATH=$repo timeout 330 python3 bench/cheat_catalogue.py --jobs 8 --bench-jobs 3 --json "$OUT/mutation.json" \
    > "$OUT/catalogue.txt" 2>&1
  echo "-- catalogue exit $? in $(( $(date +%s) - t0 )) s"; cat "$OUT/catalogue.txt"
  wait "$suite_pid"; cat "$OUT/suite.txt"
  d=$(ws attention workloads/attention/attention.py)
  for g in build correctness bench; do GATE_S=200 gate "$d" attention $g; done
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('attention bench duration_s', d.get('duration_s'))" \
    "$OUT/attention-bench.json" 2>&1 | tail -1
  for problem in row_softmax gemm_scale_gelu; do
    [ "$(left)" -gt 100 ] || break
    d=$(ws "kb-$problem" workloads/kernelbench/$problem.py)
    toml "$d" "[workload]\nkernelbench = \"workloads/kernelbench/$problem.py\"\n"
    for g in build correctness bench; do gate "$d" "kb-$problem" $g; done
  done
  if [ "$(left)" -gt 80 ]; then
    d=$(ws layernorm workloads/layernorm_triton/layernorm.py)
    for g in correctness bench; do gate "$d" layernorm $g; done
  fi
  if [ "$(left)" -gt 60 ]; then
    d=$(ws liger planted/liger_softmax.py); for g in build correctness bench; do gate "$d" liger $g; done
  fi
  raw "$d" last
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
