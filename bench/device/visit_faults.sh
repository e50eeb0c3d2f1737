#!/usr/bin/env bash
# Issue 33's planted faults on one GPU with the session's final code: each correctness fault of
# bench/device/planted/faults.py (and its honest twin, and the racy one declared atomic), then the
# sanitizer's planted past-end writes (tests/fixtures/gpu/capture_sanitize.sh). Everything under
# /tmp/oflt archived to $OUT/faults.tgz every 45 s.
#   OUT=... bash bench/device/visit_faults.sh
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/oflt; mkdir -p "$OUT"; ARCHIVE=faults
repo=$PWD
. bench/device/lanes_common.sh
( while sleep 45; do snap; done ) &
snapper=$!
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$OUT/gpus.txt"
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  for f in honest cached by_pointer scales_input racy zeros; do
    d=$(ws "fault-$f" planted/faults.py); PLANTED=$f gate "$d" "fault-$f" correctness
  done
  d=$(ws fault-racy-atomics planted/faults.py); PLANTED=racy ATOMICS=1 gate "$d" fault-racy-atomics correctness
  mkdir -p "$OUT/sanitize"; OUT="$OUT/sanitize" bash tests/fixtures/gpu/capture_sanitize.sh > "$OUT/sanitize.txt" 2>&1
  grep -E "exit|pass|fail|errors" "$OUT/sanitize.txt" | tail -12
} > "$OUT/lane.txt" 2>&1
kill $snapper 2>/dev/null
snap
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
