#!/usr/bin/env bash
# Issue 36's lean figures with the session's final code on one GPU, then the whole suite there. The
# telemetry bench alone on the box first (bench/telemetry.py beside nvitop and the NVML floor, LEAN_RUNS
# times), where the share goes (bench/idle_memory.py at 65 s), then the suite in SHARDS pytest processes.
# tree-sitter is no longer a dependency: a machine that kept it from an earlier visit's wheels drops it,
# so the cockpit runs as a fresh install would. Everything under /tmp/olf archived to $OUT/lean-final.tgz.
#   OUT=... [LEAN_RUNS="1 2"] [SHARDS=8] bash bench/device/visit_lean_final.sh
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/olf; mkdir -p "$OUT"; ARCHIVE=lean-final
repo=$PWD
. bench/device/lanes_common.sh
rm -rf /tmp/site/tree_sitter /tmp/site/tree_sitter-* /tmp/site/tree_sitter_markdown /tmp/site/tree_sitter_markdown-*
export XDG_CACHE_HOME=/tmp/cockpit-cache
( while sleep 45; do snap; done ) &
snapper=$!
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee "$OUT/gpus.txt"
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  python3 -c "import importlib.util as u; print('tree_sitter importable:', u.find_spec('tree_sitter') is not None)"
  for k in ${LEAN_RUNS:-1 2}; do
    t0=$(date +%s); python3 bench/telemetry.py --seconds ${LEAN_S:-60} > "$OUT/telemetry-$k.txt" 2>&1
    echo "-- telemetry $k exit $? in $(( $(date +%s) - t0 )) s"; tail -8 "$OUT/telemetry-$k.txt"
  done
  python3 bench/idle_memory.py --at 65 2>&1 | head -14; echo "-- idle memory exit $?"
  python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__)"
  suite "${SHARDS:-8}"
} > "$OUT/lane.txt" 2>&1
kill $snapper 2>/dev/null
snap
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
