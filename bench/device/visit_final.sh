#!/usr/bin/env bash
# The session's last visit, on a two-GPU box (nvidia-h200-x2 or -h100-x2), two lanes each pinned by UUID:
#   A: the whole suite, in SHARDS processes side by side (the test files dealt out by size), lint-imports;
#   B: KernelBench problems as they are (workloads/kernelbench/: the level-1 softmax and the level-2 GEMM
#      epilogue with their Triton ModelNew) through build, correctness, bench, profile and sanitize; the
#      CUDA starter `cockpit init` writes, built, checked and timed.
#   OUT=... [SHARDS=6] bash bench/device/visit_final.sh
# Everything lands in /tmp/ofinal, archived to $OUT/final.tgz every 45 s; each lane's lines in $OUT/summary.txt.
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/ofinal; mkdir -p "$OUT"
repo=$PWD
. bench/device/lanes_common.sh
export ARCHIVE=final XDG_CACHE_HOME=/tmp/cockpit-cache
( while sleep 45; do snap; done ) &
snapper=$!
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/gpus.txt"

lane_a() {
  export CUDA_VISIBLE_DEVICES=${uuids[0]}
  python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__)"
  python3 -c "import sys; from importlinter.cli import lint_imports_command; sys.argv = ['lint-imports']; lint_imports_command()" 2>&1 | tail -2
  suite "${SHARDS:-6}"
}

lane_b() {
  export CUDA_VISIBLE_DEVICES=${uuids[1]}
  local d problem
  for problem in row_softmax gemm_scale_gelu; do
    d=$(ws "kb-$problem" workloads/kernelbench/$problem.py)
    printf '[workload]\nkernelbench = "workloads/kernelbench/%s.py"\n' "$problem" > "$d/cockpit.toml"
    python3 -m cockpit --workspace "$d" workload show > "$OUT/kb-$problem-show.txt" 2>&1
    for g in build correctness bench profile sanitize; do gate "$d" "kb-$problem" $g; done
    raw "$d" "kb-$problem"
  done
  d=$(mktemp -d /tmp/ws-starter-XXXX)
  (cd "$d" && git init -q && python3 -m cockpit init --workload cuda --name row_softmax > "$OUT/starter-init.txt" 2>&1 \
     && git add -A && git -c user.email=c@c -c user.name=c commit -qm base)
  python3 -m cockpit --workspace "$d" new "visit: the CUDA starter" > /dev/null
  for g in build correctness bench; do gate "$d" starter $g; done
}

lane_a > "$OUT/lane-a.txt" 2>&1 & a=$!
lane_b > "$OUT/lane-b.txt" 2>&1 & b=$!
wait $a $b
kill $snapper 2>/dev/null
snap
cat "$OUT"/lane-*.txt | tee "$FINAL/summary.txt"
