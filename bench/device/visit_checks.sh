#!/usr/bin/env bash
# Issues 33 and 36 on one GPU, one step after another, everything under /tmp/ochk archived to
# $OUT/checks.tgz every 45 s:
#   the lean figures first, alone on the box (bench/telemetry.py: the idle cockpit beside nvitop
#   and the stack's floor, each in its own pty);
#   the profile's one fix from ncu's estimates on the softmax example (CUDA) and a Liger-style
#   Triton softmax (the details page kept for the fixtures);
#   the sanitizer's cost on each example workload (attention, softmax, layer norm), each built first.
#   OUT=... [SECONDS_LEFT=560] bash bench/device/visit_checks.sh
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/ochk; mkdir -p "$OUT"; ARCHIVE=checks
DEADLINE=$(( $(date +%s) + ${SECONDS_LEFT:-560} ))
repo=$PWD
. bench/device/lanes_common.sh
( while sleep 45; do snap; done ) &
snapper=$!
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee "$OUT/gpus.txt"
export CUDA_VISIBLE_DEVICES=${uuids[0]}
left() { echo $(( DEADLINE - $(date +%s) )); }
{
  t0=$(date +%s); python3 bench/telemetry.py --seconds ${LEAN_S:-45} > "$OUT/telemetry.txt" 2>&1
  echo "-- telemetry exit $? in $(( $(date +%s) - t0 )) s"; tail -12 "$OUT/telemetry.txt"
  d=$(ws softmax workloads/softmax/softmax.py); gate "$d" softmax build; gate "$d" softmax profile
  [ "$(left)" -gt 60 ] && gate "$d" softmax sanitize; raw "$d" softmax
  d=$(ws liger planted/liger_softmax.py); gate "$d" liger build; gate "$d" liger profile; raw "$d" liger
  d=$(ws layernorm workloads/layernorm_triton/layernorm.py)
  gate "$d" layernorm build; [ "$(left)" -gt 60 ] && gate "$d" layernorm sanitize
  if [ "$(left)" -gt 120 ]; then
    d=$(ws attention workloads/attention/attention.py); gate "$d" attention build
    [ "$(left)" -gt 40 ] && GATE_S=$(( $(left) - 15 )) gate "$d" attention sanitize
  else echo "-- attention sanitize: no time left"; fi
  for f in "$OUT"/*-sanitize.json; do [ -e "$f" ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['duration_s'], 's')" "$f"; done
} > "$OUT/lane.txt" 2>&1
kill $snapper 2>/dev/null
snap
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
