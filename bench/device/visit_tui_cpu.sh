#!/usr/bin/env bash
# The TUI's own CPU while it works: the real app (Pilot, live NVML) runs the build and bench
# gates through its runner, then follows a `cockpit tune` run in a second process (tune panel
# and status line updating). One line per step with the TUI process's CPU %. Output in $OUT.
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
ws=/tmp/tui-cpu; rm -rf "$ws"; mkdir -p "$ws"; cp -r csrc patterns "$ws/"
cat > "$ws/cockpit.toml" <<'TOML'
[workload]
seq_lens = [1024, 4096]
head_dims = [64, 128]
dtypes = ["fp16"]
causal = [false]
ragged_seq_lens = [17, 1000]

[tune]
head_dims = [64]
seq_lens = [1024, 4096]
trials = 12
seed_trials = 6
confirm_top = 1
TOML
TUNE_BUDGET=1 python3 bench/device/tui_session.py "$ws" "The TUI's CPU while it builds, benches and follows a tune" \
  build,bench,tune 2>&1 | tee "$OUT/tui-cpu.txt" | tail -12
