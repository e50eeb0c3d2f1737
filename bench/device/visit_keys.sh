#!/usr/bin/env bash
# Issue 43 on the GPU box: the key fuzzer with the live NVML panel (every state, every size), the whole
# suite in SHARDS pytest processes side by side, then the idle figures beside nvitop (no regression).
# Outputs under $OUT (summary.txt, keys.tgz).
#   OUT=... [SEEDS=1] [STEPS=150] [SHARDS=8] bash bench/device/visit_keys.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit keys
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  python3 -c "import torch, sys, textual; print('python', sys.version.split()[0], 'torch', torch.__version__, 'textual', textual.__version__)"
  python3 -c "import pynvml; pynvml.nvmlInit(); print('NVML', pynvml.nvmlSystemGetDriverVersion(), pynvml.nvmlDeviceGetCount(), 'GPU(s)')"
  t0=$(date +%s)
  python3 bench/key_fuzzer.py --live-gpu --seeds "${SEEDS:-1}" --steps "${STEPS:-150}" > "$OUT/key-fuzzer.txt" 2>&1
  echo "-- key fuzzer (live NVML) exit $? in $(( $(date +%s) - t0 )) s"; tail -3 "$OUT/key-fuzzer.txt"
  suite "${SHARDS:-8}"
  python3 bench/telemetry.py --seconds 60 > "$OUT/telemetry.txt" 2>&1
  echo "-- the lean figures (bench/telemetry.py, 60 s beside nvitop) exit $?"; tail -8 "$OUT/telemetry.txt"
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
