#!/usr/bin/env bash
# A short tune run on one GPU, every line of output kept in $OUT (the device tool returns files
# even when the command runs past its limit): the dry run, then a search of D=64 on two shapes
# with a small budget, its confirmation, and the session's journal.
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
ws=/tmp/tune-ws; rm -rf "$ws"; mkdir -p "$ws"; cp -r csrc "$ws/"
cat > "$ws/cockpit.toml" <<'TOML'
[tune]
head_dims = [64]
seq_lens = [1024, 4096]
budget_min = ${BUDGET:-3}
trials = 40
seed_trials = 8
confirm_top = 2
TOML
sed -i "s/\${BUDGET:-3}/${BUDGET:-3}/" "$ws/cockpit.toml"
python3 -m cockpit --workspace "$ws" new "tune D=64 on the lent GPU" > /dev/null
python3 -m cockpit --workspace "$ws" tune --dry-run 2>&1 | tee "$OUT/dry-run.txt"
start=$(date +%s)
timeout ${LIMIT:-420} python3 -m cockpit --workspace "$ws" tune --json > "$OUT/tune.json" 2> "$OUT/tune.stderr"
echo "tune exit $? after $(( $(date +%s) - start )) s"
tail -25 "$OUT/tune.stderr"
cp "$ws"/csrc/tuned_config.h "$OUT/" 2>/dev/null
tar -C "$ws" -czf "$OUT/tune-session.tgz" sessions --exclude='*.so' 2>/dev/null
