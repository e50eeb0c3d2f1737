#!/usr/bin/env bash
# Issue 44 on the GPU box: `cockpit status` on 10,000 sessions (bench/status_big.py, 20 warm runs, on a quiet
# box first), the whole suite in SHARDS pytest processes side by side, the history test that once failed under
# 12 xdist workers run so 20 times, then the idle figures beside nvitop. Outputs under $OUT (summary.txt).
#   OUT=... [SHARDS=8] bash bench/device/visit_issue44.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit issue44
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  python3 -c "import sys, textual; print('python', sys.version.split()[0], 'textual', textual.__version__)"
  t0=$(date +%s); python3 bench/status_big.py --sessions 10000 --runs 20 > "$OUT/status-big.txt" 2>&1
  echo "-- status_big exit $? in $(( $(date +%s) - t0 )) s"; tail -12 "$OUT/status-big.txt"
  suite "${SHARDS:-8}"
  t0=$(date +%s)
  python3 -m pytest -q -p no:cacheprovider --keep-duplicates -n 12 $(for _ in $(seq 20); do printf 'tests/test_report_history.py '; done) \
    > "$OUT/history-x12.txt" 2>&1
  echo "-- test_report_history x20 under 12 workers exit $? in $(( $(date +%s) - t0 )) s: $(tail -1 "$OUT/history-x12.txt")"
  grep -h -E "^(FAILED|ERROR) " "$OUT/history-x12.txt" | sort | uniq -c | head
  python3 bench/telemetry.py --seconds 60 > "$OUT/telemetry.txt" 2>&1
  echo "-- the lean figures (bench/telemetry.py, 60 s beside nvitop) exit $?"; tail -8 "$OUT/telemetry.txt"
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
