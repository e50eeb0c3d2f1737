#!/usr/bin/env bash
# Issue 31's closing visit: the four example workloads through every gate (env, build, correctness,
# bench, profile) with this code, then the whole suite; outputs under $OUT.
set -u
: "${OUT:?set OUT}"
WORKLOADS="${WORKLOADS:-attention softmax layernorm gpumode}" OUT="$OUT" timeout 330 bash bench/device/visit_workloads.sh > "$OUT/workloads.txt" 2>&1
grep -h "^-- " "$OUT"/*.txt | head -40
. tests/fixtures/gpu/capture_common.sh
start=$(date +%s)
timeout 240 python3 -m pytest -q -x -p no:cacheprovider -n 8 > "$OUT/suite.txt" 2>&1 || timeout 240 python3 -m pytest -q -p no:cacheprovider > "$OUT/suite.txt" 2>&1
echo "suite exit $? in $(( $(date +%s) - start )) s" >> "$OUT/suite.txt"
tail -8 "$OUT/suite.txt"
