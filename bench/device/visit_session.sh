#!/usr/bin/env bash
# One device visit: the single-GPU validity capture (capture_comparable.sh), then a session
# driven through the real TUI with live NVML (bench/device/tui_session.py): env, build,
# correctness, bench, profile, notes, End session and its report. Everything into $OUT.
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
OUT="$OUT" bash tests/fixtures/gpu/capture_comparable.sh 2>&1 | tail -8
ws=/tmp/tui-ws; rm -rf "$ws"; mkdir -p "$ws"; cp -r csrc patterns "$ws/"
cat > "$ws/cockpit.toml" <<'TOML'
[workload]
seq_lens = [1024, 4096]
head_dims = [64, 128]
dtypes = ["fp16"]
causal = [false]
ragged_seq_lens = [17, 1000]
TOML
python3 bench/device/tui_session.py "$ws" "Baseline the attention kernel on an H100 and profile it" \
  env,build,correctness,bench,profile \
  "env and build clean on the H100; the build reports 8 warps/SM (registers) per kernel" \
  "bench: see the table; profile: see the verdict and its one fix" 2>&1 | tail -12
tar -C "$ws" -czf "$OUT/tui-session.tgz" sessions
