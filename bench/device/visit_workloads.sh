#!/usr/bin/env bash
# One device visit: every gate (env, build, correctness, bench, profile) on each workload named
# in $WORKLOADS ("attention softmax layernorm gpumode"), each in a scratch workspace of its own
# holding a copy of workloads/ and csrc/, headless through `cockpit gate`; results to $OUT.
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L | tee "$OUT/gpus.txt"
python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda)" | tee -a "$OUT/gpus.txt"
repo=$PWD
gj=$(mktemp /tmp/gate-XXXX.json)  # one per run: two lanes may run this side by side
for w in ${WORKLOADS:-attention}; do
  # every workload in a scratch workspace: the checkout's sessions/ stay as they are
  ws=$(mktemp -d /tmp/ws-$w-XXXX); cp -r "$repo/workloads" "$repo/csrc" "$ws/"
  case $w in
    attention) echo -e '[workload]\nmodule = "workloads/attention/attention.py"' > "$ws/cockpit.toml" ;;
    softmax) echo -e '[workload]\nmodule = "workloads/softmax/softmax.py"' > "$ws/cockpit.toml" ;;
    layernorm) echo -e '[workload]\nmodule = "workloads/layernorm_triton/layernorm.py"' > "$ws/cockpit.toml" ;;
    gpumode) echo -e '[workload]\ngpumode = "workloads/gpumode/vectoradd_py"' > "$ws/cockpit.toml" ;;
  esac
  log="$OUT/$w.txt"
  { echo "== $w in $ws"; python3 -m cockpit --workspace "$ws" workload show; } > "$log" 2>&1
  python3 -m cockpit --workspace "$ws" new "workload check: $w" >> "$log" 2>&1
  for g in env build correctness bench profile; do
    t0=$(date +%s)
    python3 -m cockpit --workspace "$ws" gate $g --json > $gj 2>> "$log"
    echo "-- $g exit $? in $(( $(date +%s) - t0 )) s: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" $gj 2>&1 | tail -1)" | tee -a "$log"
    cat $gj >> "$OUT/$w-gates.jsonl"
  done
  tail -c 300000 "$log" > "$log.tmp" && mv "$log.tmp" "$log"
done
# An earlier version timed beside the working copy: the softmax as committed (HEAD) against the
# same sources with the warp path's rows per block changed in the working tree.
if [ -n "${EARLIER:-}" ]; then
  ws=$(mktemp -d /tmp/ws-earlier-XXXX); cp -r "$repo/workloads" "$ws/"
  echo -e '[workload]\nmodule = "workloads/softmax/softmax.py"' > "$ws/cockpit.toml"
  (cd "$ws" && git init -q && git add -A && git -c user.email=c@c -c user.name=c commit -qm base)
  sed -i 's/^#define SOFTMAX_ROWS_PER_BLOCK 4/#define SOFTMAX_ROWS_PER_BLOCK 1/' "$ws/workloads/softmax/softmax.cu"
  log="$OUT/earlier.txt"
  python3 -m cockpit --workspace "$ws" new "rows per block 1 vs 4" > "$log" 2>&1
  for g in build bench; do
    python3 -m cockpit --workspace "$ws" gate $g --json > $gj 2>> "$log"
    echo "-- $g exit $?: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" $gj 2>&1 | tail -1)" | tee -a "$log"
    cat $gj >> "$OUT/earlier-gates.jsonl"
  done
  grep -E "ours@head|cockpit-build: cockpit_softmax_at" "$log" | head -5
fi
# The tune of each workload in $TUNE ("softmax layernorm"), $TUNE_MIN minutes each: the dry run, the
# search and its confirmation, the tuned file it kept, then build and bench through the gates (the
# kept values applied) in the same session, so the bench's keep/revert compares with the tune's record.
for w in ${TUNE:-}; do
  ws=$(mktemp -d /tmp/ws-tune-$w-XXXX); cp -r "$repo/workloads" "$ws/"
  case $w in
    softmax) m=workloads/softmax/softmax.py ;;
    layernorm) m=workloads/layernorm_triton/layernorm.py ;;
  esac
  echo -e "[workload]\nmodule = \"$m\"\n[tune]\nseed_trials = ${TUNE_SEED:-8}" > "$ws/cockpit.toml"
  (cd "$ws" && git init -q && git add -A && git -c user.email=c@c -c user.name=c commit -qm base)
  log="$OUT/tune-$w.txt"
  python3 -m cockpit --workspace "$ws" new "tune $w" > "$log" 2>&1
  python3 -m cockpit --workspace "$ws" tune --dry-run >> "$log" 2>&1
  t0=$(date +%s)
  python3 -m cockpit --workspace "$ws" tune --budget "${TUNE_MIN:-3}" >> "$log" 2>&1
  echo "-- tune $w exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$log"
  cat "$ws/${m%.py}.tuned.json" >> "$log" 2>&1
  for g in build bench; do
    python3 -m cockpit --workspace "$ws" gate $g --json > $gj 2>> "$log"
    echo "-- $g exit $?: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" $gj 2>&1 | tail -1)" | tee -a "$log"
  done
  s=$(ls -d "$ws"/sessions/*/ | head -1)
  mkdir -p "$OUT/tune-$w"; cp "$s"/journal.jsonl "$s"/tune/plan.json "$OUT/tune-$w/" 2>/dev/null
  tail -n 40 "$s"/logs/tune-*-gpu*.log > "$OUT/tune-$w/worker-tail.txt" 2>/dev/null
  tail -n 60 "$s"/tune/probe-0.log > "$OUT/tune-$w/probe-tail.txt" 2>/dev/null
  tail -c 200000 "$log" > "$log.tmp" && mv "$log.tmp" "$log"
done
