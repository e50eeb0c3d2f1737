#!/usr/bin/env bash
# The session's last visit, one GPU, one step after another, everything under /tmp/olast archived to
# $OUT/last.tgz every 45 s: the lean figures alone on the box first (bench/telemetry.py beside
# nvitop and the floor, twice; then the cockpit's CPU by thread), the whole suite in SHARDS pytest
# processes side by side, then a Liger-style Triton softmax that declares no Profile through the
# profile gate (every kernel of one call; the fix from ncu's estimates), and the layer norm's.
#   OUT=... [SHARDS=8] bash bench/device/visit_last.sh
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/olast; mkdir -p "$OUT"; ARCHIVE=last
repo=$PWD
. bench/device/lanes_common.sh
export XDG_CACHE_HOME=/tmp/cockpit-cache
( while sleep 45; do snap; done ) &
snapper=$!
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee "$OUT/gpus.txt"
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  for k in ${LEAN_RUNS:-1 2}; do
    t0=$(date +%s); python3 bench/telemetry.py --seconds ${LEAN_S:-60} > "$OUT/telemetry-$k.txt" 2>&1
    echo "-- telemetry $k exit $? in $(( $(date +%s) - t0 )) s"; tail -8 "$OUT/telemetry-$k.txt"
  done
  w=$(mktemp -d); python3 -m cockpit --workspace "$w" new "idle panel" > /dev/null
  python3 bench/cpu_by_thread.py --seconds 30 -- python3 -m cockpit --workspace "$w" > "$OUT/threads-cockpit.txt" 2>&1
  tail -7 "$OUT/threads-cockpit.txt"
  python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__)"
  python3 -c "import sys; from importlinter.cli import lint_imports_command; sys.argv = ['lint-imports']; lint_imports_command()" 2>&1 | tail -2
  suite "${SHARDS:-8}"
  d=$(ws liger planted/liger_softmax.py); gate "$d" liger build; gate "$d" liger profile; raw "$d" liger
  d=$(ws layernorm workloads/layernorm_triton/layernorm.py); gate "$d" layernorm build; gate "$d" layernorm profile
  raw "$d" layernorm
} > "$OUT/lane.txt" 2>&1
kill $snapper 2>/dev/null
snap
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
