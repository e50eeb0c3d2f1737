#!/usr/bin/env bash
# Issue 25, item 3 on the GPU box, in two back-to-back visits (each under the 10-minute limit):
#   STAGE=tune  a fresh clone's workspace WITHOUT csrc/tuned_config.h (the L4's tiles): the build
#               gate, then a default `cockpit tune --budget 5` (the repo's [tune]); the header it
#               keeps and its report go to $OUT (commit the header: that is the arch's default).
#   STAGE=check a fresh clone's workspace as committed (tuned_config.h included): build,
#               correctness and bench gates; bench/kernel_speedups.py prints every config's
#               speedup vs FLASH with its interval, S >= 1024 checked against 1.0x.
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L | tee "$OUT/gpus.txt"
repo=$PWD
ws=$(mktemp -d /tmp/fresh-XXXX)
cp -r "$repo/cockpit.toml" "$repo/workloads" "$repo/csrc" "$ws/"
gate() {  # gate NAME: headless, its JSON to $OUT/NAME.json, one line to stdout
  local t0; t0=$(date +%s)
  python3 -m cockpit --workspace "$ws" gate "$1" --json > "$OUT/$1.json" 2> "$OUT/$1.stderr"
  echo "-- $1 exit $? in $(( $(date +%s) - t0 )) s: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" "$OUT/$1.json" 2>&1 | tail -1)"
}
case "${STAGE:-tune}" in
  tune)
    rm -f "$ws/csrc/tuned_config.h"
    python3 -m cockpit --workspace "$ws" new "tune from the L4 tile" > /dev/null
    gate build
    python3 -m cockpit --workspace "$ws" tune --dry-run 2>&1 | tee "$OUT/dry-run.txt"
    t0=$(date +%s)
    timeout 500 python3 -m cockpit --workspace "$ws" tune --budget "${BUDGET:-5}" --json > "$OUT/tune.json" 2> "$OUT/tune.stderr"
    echo "tune exit $? after $(( $(date +%s) - t0 )) s"
    tail -30 "$OUT/tune.stderr"
    cp "$ws/csrc/tuned_config.h" "$OUT/" 2>/dev/null && cat "$OUT/tuned_config.h"
    tar -C "$ws" -czf "$OUT/tune-session.tgz" --exclude='*.so' sessions 2>/dev/null
    ;;
  check)
    ls "$ws/csrc"
    python3 -m cockpit --workspace "$ws" new "fresh clone on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" > /dev/null
    gate build
    gate correctness
    gate bench
    python3 bench/kernel_speedups.py "$OUT/bench.json" "$ws" | tee "$OUT/speedups.txt"
    ;;
esac
