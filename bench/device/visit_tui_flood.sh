#!/usr/bin/env bash
# One device visit for issue 25, item 4 (a TUI that stays light), about 5 minutes: the TUI under a
# gate printing at full speed (bench/tui_flood.py: the TUI process's CPU, every line in the log,
# the last one shown), then the idle cockpit next to nvitop and the stack's floor
# (bench/telemetry.py) and where each one's CPU goes by thread (bench/cpu_by_thread.py). Outputs
# in $OUT.
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L | tee "$OUT/gpus.txt"
nproc | tee "$OUT/nproc.txt"
python3 bench/tui_flood.py --seconds "${FLOOD_S:-20}" --runs "${FLOOD_RUNS:-2}" 2>&1 | tee "$OUT/tui-flood.txt" | tail -6
python3 bench/telemetry.py --seconds "${IDLE_S:-60}" 2>&1 | tee "$OUT/telemetry.txt" | tail -8
ws=$(mktemp -d); python3 -m cockpit --workspace "$ws" new "idle panel" > /dev/null
python3 bench/cpu_by_thread.py --seconds 30 -- python3 -m cockpit --workspace "$ws" 2>&1 | tee "$OUT/threads-cockpit.txt"
python3 bench/cpu_by_thread.py --seconds 30 -- python3 -m nvitop --monitor full 2>&1 | tee "$OUT/threads-nvitop.txt"
