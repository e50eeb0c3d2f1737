#!/usr/bin/env bash
# Issue 32's must-show on one GPU (nvidia-h100-x1 asked for: the numbers are the H100's),
# one step after another, everything under /tmp/onum archived to $OUT/numbers.tgz every 45 s:
#   the attention example built, then benched three times back to back in one workspace;
#   a kernel launched twice (0.50x +- 0.01 at every size), a per-shape cache (refused), a candidate
#   that crashes at one shape (one line, the other rows kept); Triton kernels no one here tuned at
#   M=4096, N=1024..8192 (a Liger-style softmax, the layer-norm tutorial's shapes);
#   then, while the call's time lasts, the softmax example's profile (ncu's rule estimates, issue 33).
#   OUT=... [SECONDS_LEFT=560] bash bench/device/visit_numbers.sh
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/onum; mkdir -p "$OUT"; ARCHIVE=numbers
DEADLINE=$(( $(date +%s) + ${SECONDS_LEFT:-560} ))
repo=$PWD
. bench/device/lanes_common.sh
( while sleep 45; do snap; done ) &
snapper=$!
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv | tee "$OUT/gpus.txt"
export CUDA_VISIBLE_DEVICES=${uuids[0]}
left() { echo $(( DEADLINE - $(date +%s) )); }
{
  d=$(ws attention workloads/attention/attention.py)
  gate "$d" attention build
  for k in 1 2 3; do gate "$d" attention-$k bench; done
  raw "$d" attention
  d=$(ws twice planted/twice.py); gate "$d" twice bench; raw "$d" twice
  d=$(ws cached planted/cached.py); gate "$d" cached bench
  d=$(ws crash planted/crash.py); gate "$d" crash build; gate "$d" crash bench
  d=$(ws liger planted/liger_softmax.py); gate "$d" liger build; gate "$d" liger bench; raw "$d" liger
  d=$(ws layernorm workloads/layernorm_triton/layernorm.py)
  sed -i 's/bench_grid=axes(M=\[4096, 16384\], N=\[512, 1024, 4096, 16384\], dtype=\["fp16", "bf16"\])/bench_grid=axes(M=[4096], N=[1024, 2048, 4096, 8192], dtype=["fp16"])/' "$d/workloads/layernorm_triton/layernorm.py"
  gate "$d" layernorm build; gate "$d" layernorm bench; raw "$d" layernorm
  if [ "$(left)" -gt 90 ]; then
    d=$(ws softmax workloads/softmax/softmax.py)
    GATE_S=$(( $(left) - 10 )) gate "$d" softmax profile; raw "$d" softmax
  else echo "-- softmax profile: no time left"; fi
} > "$OUT/lane.txt" 2>&1
kill $snapper 2>/dev/null
snap
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
