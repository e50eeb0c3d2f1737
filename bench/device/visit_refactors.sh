#!/usr/bin/env bash
# The probes' refactors (bff94d1: one net_ms for the events' cost, one _buffer, KernelBench profiled
# through or_every_kernel, one gradient-error handler, allclose on the float64 copies, compare.py split
# out of check.py) run on one GPU, with where the idle cockpit's memory goes first. One step after
# another, everything under /tmp/oref archived to $OUT/refactors.tgz every 45 s:
#   bench/idle_memory.py (the cockpit and the NVML floor); the suite in SHARDS pytest processes;
#   the planted correctness faults; a kernel launched twice and the Liger-style softmax benched; the
#   layer norm's forward/backward correctness (gradients); KernelBench's row softmax through
#   correctness, bench and profile; the attention example built and benched once, while time lasts.
#   OUT=... [SECONDS_LEFT=560] [SHARDS=8] bash bench/device/visit_refactors.sh
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/oref; mkdir -p "$OUT"; ARCHIVE=refactors
DEADLINE=$(( $(date +%s) + ${SECONDS_LEFT:-560} ))
repo=$PWD
. bench/device/lanes_common.sh
export XDG_CACHE_HOME=/tmp/cockpit-cache
( while sleep 45; do snap; done ) &
snapper=$!
left() { echo $(( DEADLINE - $(date +%s) )); }
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee "$OUT/gpus.txt"
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  python3 bench/idle_memory.py --at 15 > "$OUT/idle-memory.txt" 2>&1; echo "-- idle memory exit $?"
  cat "$OUT/idle-memory.txt"
  suite "${SHARDS:-8}"
  for f in honest cached scales_input racy zeros; do
    d=$(ws "fault-$f" planted/faults.py); PLANTED=$f gate "$d" "fault-$f" correctness
  done
  d=$(ws fault-racy-atomics planted/faults.py); PLANTED=racy ATOMICS=1 gate "$d" fault-racy-atomics correctness
  d=$(ws twice planted/twice.py); gate "$d" twice bench; raw "$d" twice
  d=$(ws liger planted/liger_softmax.py); gate "$d" liger build; gate "$d" liger bench; raw "$d" liger
  d=$(ws layernorm workloads/layernorm_triton/layernorm.py); gate "$d" layernorm build; gate "$d" layernorm correctness
  d=$(ws kb-row_softmax workloads/kernelbench/row_softmax.py)
  printf '[workload]\nkernelbench = "workloads/kernelbench/row_softmax.py"\n' > "$d/cockpit.toml"
  for g in build correctness bench profile; do gate "$d" kb-row_softmax $g; done
  raw "$d" kb-row_softmax
  if [ "$(left)" -gt 150 ]; then
    d=$(ws attention workloads/attention/attention.py); gate "$d" attention build
    GATE_S=$(( $(left) - 10 )) gate "$d" attention bench; raw "$d" attention
  else echo "-- attention: no time left ($(left) s)"; fi
} > "$OUT/lane.txt" 2>&1
kill $snapper 2>/dev/null
snap
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
