#!/usr/bin/env bash
# Issue 32 on a two-GPU box (nvidia-h100-x2), two lanes side by side, each pinned to one GPU by
# UUID; every gate's --json and the probe's raw result (its NVML samples: the CI fixtures) in one
# archive, $OUT/issue32.tgz (re-made every 45 s, so a run cut off at the call's limit still returns
# what it had), and the lanes' lines in $OUT/summary.txt.
#   OUT=... bash bench/device/visit_issue32.sh
# GPU 0: the attention example built, then benched three times back to back in one workspace.
# GPU 1: Triton kernels no one here tuned at M=4096, N=1024..8192 (a Liger-style softmax, the
#   layer-norm tutorial's shape), a kernel launched twice (0.50x at every size), a per-shape cache
#   (refused), a candidate that crashes at one shape (one line, the rows before kept); then the
#   softmax and layer-norm examples' tunes (2 minutes each, 6 seed trials a group, cut at 170 s).
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/o32; mkdir -p "$OUT"; ARCHIVE=issue32
DEADLINE=$(( $(date +%s) + ${SECONDS_LEFT:-500} ))  # the tunes take what is left of the call
repo=$PWD
. bench/device/lanes_common.sh
( while sleep 45; do snap; done ) &
snapper=$!
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee "$OUT/gpus.txt"
lane_a() {
  export CUDA_VISIBLE_DEVICES=${uuids[0]}
  local d; d=$(ws attention workloads/attention/attention.py)
  gate "$d" attention build
  for k in 1 2 3; do gate "$d" attention-$k bench; raw "$d" attention; done
}
lane_b() {
  export CUDA_VISIBLE_DEVICES=${uuids[1]}
  local d
  d=$(ws liger planted/liger_softmax.py); gate "$d" liger build; gate "$d" liger bench; raw "$d" liger
  d=$(ws layernorm workloads/layernorm_triton/layernorm.py)
  sed -i 's/bench_grid=axes(M=\[4096, 16384\], N=\[512, 1024, 4096, 16384\], dtype=\["fp16", "bf16"\])/bench_grid=axes(M=[4096], N=[1024, 2048, 4096, 8192], dtype=["fp16"])/' "$d/workloads/layernorm_triton/layernorm.py"
  gate "$d" layernorm build; gate "$d" layernorm bench; raw "$d" layernorm
  d=$(ws twice planted/twice.py); gate "$d" twice bench; raw "$d" twice
  d=$(ws cached planted/cached.py); gate "$d" cached bench
  d=$(ws crash planted/crash.py); gate "$d" crash build; gate "$d" crash bench; raw "$d" crash
  for w in softmax layernorm; do
    case $w in softmax) m=workloads/softmax/softmax.py ;; layernorm) m=workloads/layernorm_triton/layernorm.py ;; esac
    d=$(ws tune-$w $m); printf '[tune]\nseed_trials = 6\n' >> "$d/cockpit.toml"
    (cd "$d" && git add -A && git -c user.email=c@c -c user.name=c commit -qm toml)
    local t0=$(date +%s)
    local left=$(( DEADLINE - $(date +%s) )); [ "$left" -gt 60 ] || { echo "-- tune $w: no time left"; continue; }
    timeout $(( left < 170 ? left : 170 )) python3 -m cockpit --workspace "$d" tune --budget 2 > "$OUT/tune-$w.txt" 2>&1
    echo "-- tune $w exit $? in $(( $(date +%s) - t0 )) s: $(grep -E '^(KEEP|REVERT|no winner|D=|N=)|WINNER' "$OUT/tune-$w.txt" | tail -2 | tr '\n' ' ')"
  done
}
lane_a > "$OUT/lane-a.txt" 2>&1 &
a=$!
lane_b > "$OUT/lane-b.txt" 2>&1 &
b=$!
wait $a $b
kill $snapper 2>/dev/null
snap
cat "$OUT"/lane-*.txt | tee "$FINAL/summary.txt"
