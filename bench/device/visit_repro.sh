#!/usr/bin/env bash
# Reproducibility of the bench headline (issue 25): each workload in $WORKLOADS built once in a
# scratch workspace under $WS_ROOT (kept between two back-to-back visits, which keep the machine),
# then benched through `cockpit gate bench`: $RUNS runs, after $SLEEP_S seconds; summaries and
# results to $OUT. First visit: BUILD=1 RUNS=1; the next, minutes later: BUILD=0 SLEEP_S=400.
#   OUT=... WORKLOADS="attention softmax" WS_ROOT=/tmp/repro BUILD=1 RUNS=2 bash bench/device/visit_repro.sh
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L | tee "$OUT/gpus.txt"
repo=$PWD root=${WS_ROOT:-/tmp/repro}
sleep "${SLEEP_S:-0}"
for w in ${WORKLOADS:-attention}; do
  ws=$root/$w
  log="$OUT/$w.txt"
  if [ "${BUILD:-1}" = 1 ]; then
    rm -rf "$ws"; mkdir -p "$ws"; cp -r "$repo/workloads" "$repo/csrc" "$ws/"
    case $w in
      attention) m=workloads/attention/attention.py ;;
      softmax) m=workloads/softmax/softmax.py ;;
      layernorm) m=workloads/layernorm_triton/layernorm.py ;;
    esac
    echo -e "[workload]\nmodule = \"$m\"" > "$ws/cockpit.toml"
    python3 -m cockpit --workspace "$ws" new "repro $w" > "$log" 2>&1
    python3 -m cockpit --workspace "$ws" gate build --json > "$OUT/$w-build.json" 2>> "$log"
  fi
  for i in $(seq 1 "${RUNS:-2}"); do
    t0=$(date +%s)
    python3 -m cockpit --workspace "$ws" gate bench --json > "$OUT/$w-bench-$t0.json" 2>> "$log"
    echo "$w at $(date +%T) in $(( $(date +%s) - t0 )) s: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" "$OUT/$w-bench-$t0.json" 2>&1 | tail -1)" | tee -a "$OUT/summary.txt"
  done
  tail -c 100000 "$log" > "$log.tmp" && mv "$log.tmp" "$log"
done
