#!/usr/bin/env bash
# One device visit: what the build gate reads about each kernel as launched, the env gate, and a
# short correctness + bench run, all tarred into $OUT/visit.tgz (the device tool returns 8 files).
set -u
export PYTHONUNBUFFERED=1
: "${OUT:?set OUT}"
r="$OUT/r"; mkdir -p "$r/launch" "$r/env"
nvidia-smi > "$r/nvidia-smi.txt" 2>&1
OUT="$r/launch" bash tests/fixtures/gpu/capture_launch.sh 2>&1 | tee "$r/launch.txt"
OUT="$r/env" bash tests/fixtures/gpu/capture_env.sh 2>&1 | tee "$r/env.txt"
ws=$(mktemp -d); cp -r csrc "$ws/"
cat > "$ws/cockpit.toml" <<'TOML'
[workload]
seq_lens = [1, 17, 127, 1024, 4097]
head_dims = [64, 128]
dtypes = ["fp16"]
causal = [false, true]
TOML
python3 -m cockpit --workspace "$ws" new "gates after the split" > /dev/null
for g in build correctness bench; do
  timeout 300 python3 -m cockpit --workspace "$ws" gate $g --json > "$r/gate-$g.json" 2> "$r/gate-$g.stderr"
  echo "gate $g: exit $? $(python3 -c "import json; d=json.load(open('$r/gate-$g.json')); print(d['status'], '-', d['summary'])" 2>&1 | tail -1)"
done
tar -C "$OUT" -czf "$OUT/visit.tgz" r && rm -rf "$r"
