#!/usr/bin/env bash
# Issue 46 on the GPU, on the final code: first the attention example's bench alone with every check
# on (its wall time is the grid's budget, 120 s); then, side by side, the whole suite in SHARDS pytest
# processes, the cheat catalogue's mutation test (correctness and bench runs as two processes; their
# recordings are joined into tests/fixtures/gpu/cheats/mutation.json) and the honest workloads through
# correctness and the bench: KernelBench's level-2 GEMM epilogue and Triton's layer-norm tutorial.
# Everything under /tmp/o-final46, archived to $OUT/final46.tgz every 45 s.
#   OUT=... [SECONDS_LEFT=420] [SHARDS=8] bash bench/device/visit_cheats_final.sh
set -u
: "${OUT:?set OUT}"
DEADLINE=$(( $(date +%s) + ${SECONDS_LEFT:-420} ))
repo=$PWD
. bench/device/lanes_common.sh
begin_visit final46
left() { echo $(( DEADLINE - $(date +%s) )); }
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  d=$(ws attention workloads/attention/attention.py)
  for g in build bench; do GATE_S=200 gate "$d" attention $g; done
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['result']['rows']; \
print('attention bench duration_s', d.get('duration_s'), 'timed checks', sum(x.get('checked',0) for x in r), \
round(sum(x.get('check_s',0) for x in r),2), 's; audits', round(sum(c['records'].get('audit_s',0) for x in r \
for c in x['impl'].values() if 'records' in c),2), 's')" "$OUT/attention-bench.json" 2>&1 | tail -1
  suite "${SHARDS:-8}" > "$OUT/suite.txt" 2>&1 &
  suite_pid=$!
  parts=()
  for part in correctness bench; do
    PYTHONPATH=$repo timeout "$(left)" python3 bench/cheat_catalogue.py --only $part --jobs 6 --bench-jobs 3 \
      --json "$OUT/mutation-$part.json" > "$OUT/catalogue-$part.txt" 2>&1 &
    parts+=($!)
  done
  d=$(ws kb-gemm workloads/kernelbench/gemm_scale_gelu.py)
  toml "$d" '[workload]\nkernelbench = "workloads/kernelbench/gemm_scale_gelu.py"\n'
  for g in build correctness bench; do GATE_S=100 gate "$d" kb-gemm $g; done
  d=$(ws layernorm workloads/layernorm_triton/layernorm.py)
  for g in correctness bench; do GATE_S=100 gate "$d" layernorm $g; done
  wait "${parts[@]}" "$suite_pid"
  cat "$OUT"/catalogue-*.txt; cat "$OUT/suite.txt"
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
