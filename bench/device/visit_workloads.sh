#!/usr/bin/env bash
# One device visit: every gate (env, build, correctness, bench, profile) on each workload named
# in $WORKLOADS ("attention softmax layernorm gpumode"), each in a workspace of its own that
# points at this checkout's workload, headless through `cockpit gate`; results to $OUT.
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L | tee "$OUT/gpus.txt"
python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda)" | tee -a "$OUT/gpus.txt"
repo=$PWD
for w in ${WORKLOADS:-attention}; do
  case $w in
    attention) ws=$repo ;;
    *) ws=$(mktemp -d /tmp/ws-$w-XXXX); cp -r "$repo/workloads" "$repo/csrc" "$ws/"
       case $w in
         softmax) echo -e '[workload]\nmodule = "workloads/softmax/softmax.py"' > "$ws/cockpit.toml" ;;
         layernorm) echo -e '[workload]\nmodule = "workloads/layernorm_triton/layernorm.py"' > "$ws/cockpit.toml" ;;
         gpumode) echo -e '[workload]\ngpumode = "workloads/gpumode/vectoradd_py"' > "$ws/cockpit.toml" ;;
       esac ;;
  esac
  log="$OUT/$w.txt"
  { echo "== $w in $ws"; python3 -m cockpit --workspace "$ws" workload show; } > "$log" 2>&1
  python3 -m cockpit --workspace "$ws" new "workload check: $w" >> "$log" 2>&1
  for g in env build correctness bench profile; do
    t0=$(date +%s)
    python3 -m cockpit --workspace "$ws" gate $g --json > /tmp/gate.json 2>> "$log"
    echo "-- $g exit $? in $(( $(date +%s) - t0 )) s: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" /tmp/gate.json 2>&1 | tail -1)" | tee -a "$log"
    cat /tmp/gate.json >> "$OUT/$w-gates.jsonl"
  done
  tail -c 300000 "$log" > "$log.tmp" && mv "$log.tmp" "$log"
done
