#!/usr/bin/env bash
# Reproducibility of the bench headline (issue 25): each workload in $WORKLOADS built once in a
# scratch workspace, then benched $RUNS times through `cockpit gate bench`, $GAP_S seconds between
# the later runs; every run's summary and result rows to $OUT.
#   OUT=... WORKLOADS="attention softmax" RUNS=2 GAP_S=0 bash bench/device/visit_repro.sh
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L | tee "$OUT/gpus.txt"
repo=$PWD
for w in ${WORKLOADS:-attention}; do
  ws=$(mktemp -d /tmp/ws-$w-XXXX); cp -r "$repo/workloads" "$repo/csrc" "$ws/"
  case $w in
    attention) m=workloads/attention/attention.py ;;
    softmax) m=workloads/softmax/softmax.py ;;
    layernorm) m=workloads/layernorm_triton/layernorm.py ;;
  esac
  echo -e "[workload]\nmodule = \"$m\"" > "$ws/cockpit.toml"
  log="$OUT/$w.txt"
  python3 -m cockpit --workspace "$ws" new "repro $w" > "$log" 2>&1
  python3 -m cockpit --workspace "$ws" gate build --json > "$OUT/$w-build.json" 2>> "$log"
  for i in $(seq 1 "${RUNS:-2}"); do
    [ "$i" -gt 2 ] && sleep "${GAP_S:-0}"
    t0=$(date +%s)
    python3 -m cockpit --workspace "$ws" gate bench --json > "$OUT/$w-bench-$i.json" 2>> "$log"
    echo "$w run $i at $(date +%T) in $(( $(date +%s) - t0 )) s: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" "$OUT/$w-bench-$i.json" 2>&1 | tail -1)" | tee -a "$OUT/summary.txt"
  done
  tail -c 200000 "$log" > "$log.tmp" && mv "$log.tmp" "$log"
done
