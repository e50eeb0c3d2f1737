#!/usr/bin/env bash
# The session's closing visit (issues 43 and 44) on one GPU: `cockpit status` on 10,000 sessions on a quiet
# box (bench/status_big.py), the key fuzzer once more with the live NVML panel, the newcomer's first minutes
# in tmux where the box has it, then the whole suite in SHARDS pytest processes side by side.
#   OUT=... [SHARDS=8] [STEPS=60] bash bench/device/visit_closing.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit closing
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  t0=$(date +%s); python3 bench/status_big.py --sessions 10000 --runs 20 > "$OUT/status-big.txt" 2>&1
  echo "-- status_big exit $? in $(( $(date +%s) - t0 )) s"; tail -12 "$OUT/status-big.txt"
  t0=$(date +%s); python3 bench/key_fuzzer.py --live-gpu --seeds 1 --steps "${STEPS:-60}" > "$OUT/key-fuzzer.txt" 2>&1
  echo "-- key fuzzer exit $? in $(( $(date +%s) - t0 )) s"; tail -1 "$OUT/key-fuzzer.txt"
  if command -v tmux > /dev/null; then bash bench/newcomer_tmux.sh 120x40 2>&1 | head -8; else echo "-- no tmux on this box"; fi
  suite "${SHARDS:-8}"
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
