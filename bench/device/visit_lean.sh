#!/usr/bin/env bash
# One device visit for issue 15's two lean-UI targets: the cockpit next to nvitop and the
# stack's floor in one run, twice (bench/telemetry.py, ~2 min each with its unmeasured first
# round), then where each program's CPU goes by thread (bench/cpu_by_thread.py). Outputs in
# $OUT, about 6 minutes.
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L | tee "$OUT/gpus.txt"
for i in 1 2; do
  python3 bench/telemetry.py --seconds 60 2>&1 | tee "$OUT/telemetry-$i.txt" | tail -8
done
ws=$(mktemp -d); python3 -m cockpit --workspace "$ws" new "idle panel" > /dev/null
python3 bench/cpu_by_thread.py --seconds 40 -- python3 -m cockpit --workspace "$ws" 2>&1 | tee "$OUT/threads-cockpit.txt"
python3 bench/cpu_by_thread.py --seconds 40 -- python3 -m nvitop --monitor full 2>&1 | tee "$OUT/threads-nvitop.txt"
