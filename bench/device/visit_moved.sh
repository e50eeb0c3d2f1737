#!/usr/bin/env bash
# After the house's second pass moved every gate into its folder (issue 45): the attention example through
# every gate (env, build, correctness, bench, profile, sanitize), then KernelBench's row softmax, the
# Liger-style softmax and two planted faults while time lasts, beside the whole suite in SHARDS pytest
# processes. Each scratch workspace is trusted (lanes_common.sh: ws). Everything under /tmp/o-moved,
# archived to $OUT/moved.tgz every 45 s.
#   OUT=... [SECONDS_LEFT=540] [SHARDS=8] bash bench/device/visit_moved.sh
set -u
: "${OUT:?set OUT}"
DEADLINE=$(( $(date +%s) + ${SECONDS_LEFT:-540} ))
repo=$PWD
. bench/device/lanes_common.sh
begin_visit moved
left() { echo $(( DEADLINE - $(date +%s) )); }
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  git -C "$repo" log --oneline -1 2>/dev/null || true
  suite "${SHARDS:-8}" > "$OUT/suite.txt" 2>&1 &
  suite_pid=$!
  d=$(ws attention workloads/attention/attention.py)
  for g in env build correctness bench profile; do gate "$d" attention $g; done
  GATE_S=$(( $(left) > 260 ? 200 : $(left) / 2 )) gate "$d" attention sanitize
  raw "$d" attention
  python3 -m cockpit --workspace "$d" export > "$OUT/attention-export.txt" 2>&1 || true
  cp "$d"/sessions/*/REPORT.md "$OUT/attention-REPORT.md" 2>/dev/null || true
  if [ "$(left)" -gt 150 ]; then
    d=$(ws kb-row_softmax workloads/kernelbench/row_softmax.py)
    toml "$d" '[workload]\nkernelbench = "workloads/kernelbench/row_softmax.py"\n'
    for g in build correctness bench; do gate "$d" kb-row_softmax $g; done
  fi
  if [ "$(left)" -gt 90 ]; then
    d=$(ws liger planted/liger_softmax.py); gate "$d" liger build; gate "$d" liger bench
  fi
  for f in cached racy; do
    [ "$(left)" -gt 40 ] || break
    d=$(ws "fault-$f" planted/faults.py); PLANTED=$f gate "$d" "fault-$f" correctness
  done
  wait "$suite_pid"; cat "$OUT/suite.txt"
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
