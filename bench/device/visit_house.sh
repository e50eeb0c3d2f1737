#!/usr/bin/env bash
# The house's second pass (issue 45: every function of the gates, the probes and the workload loader
# split to complexity <= 20) and issue 44's trust on one GPU: the whole suite in SHARDS pytest processes
# beside the gates run headless on kernels that exercise the refactored probes — the planted correctness
# faults, a kernel launched twice, the Liger-style softmax, the Triton layer norm's gradients, KernelBench's
# row softmax through build, correctness, bench and profile, the attention example built and benched while
# time lasts. Each scratch workspace is trusted (lanes_common.sh: ws). Everything under /tmp/o-house,
# archived to $OUT/house.tgz every 45 s.
#   OUT=... [SECONDS_LEFT=540] [SHARDS=8] bash bench/device/visit_house.sh
set -u
: "${OUT:?set OUT}"
DEADLINE=$(( $(date +%s) + ${SECONDS_LEFT:-540} ))
repo=$PWD
. bench/device/lanes_common.sh
begin_visit house
left() { echo $(( DEADLINE - $(date +%s) )); }
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  suite "${SHARDS:-8}" > "$OUT/suite.txt" 2>&1 &
  suite_pid=$!
  for f in honest cached scales_input racy zeros; do
    d=$(ws "fault-$f" planted/faults.py); PLANTED=$f gate "$d" "fault-$f" correctness
  done
  d=$(ws twice planted/twice.py); gate "$d" twice bench
  d=$(ws liger planted/liger_softmax.py); gate "$d" liger build; gate "$d" liger bench
  d=$(ws layernorm workloads/layernorm_triton/layernorm.py); gate "$d" layernorm build; gate "$d" layernorm correctness
  d=$(ws kb-row_softmax workloads/kernelbench/row_softmax.py)
  toml "$d" '[workload]\nkernelbench = "workloads/kernelbench/row_softmax.py"\n'
  for g in build correctness bench profile; do gate "$d" kb-row_softmax $g; done
  if [ "$(left)" -gt 200 ]; then
    d=$(ws attention workloads/attention/attention.py); gate "$d" attention build
    GATE_S=$(( $(left) - 60 )) gate "$d" attention bench
  else echo "-- attention: no time left ($(left) s)"; fi
  wait "$suite_pid"; cat "$OUT/suite.txt"
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
