#!/usr/bin/env bash
# Issue 31 on the GPU: the one tune engine on the attention example from the L4's tile (the H100's
# kept sm_90 winner removed from the tuned file, no tuned header), D=128 with a 5-minute budget,
# its variants relinked (Extension(variant_build="relink")); every output under $OUT.
#   OUT=... BUDGET=5 bash bench/device/visit_one_engine.sh
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L | tee "$OUT/gpus.txt"
python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda)" | tee -a "$OUT/gpus.txt"
ws=/tmp/ws-attn; rm -rf "$ws"; mkdir -p "$ws"; cp -r workloads csrc cockpit.toml "$ws/"
python3 - "$ws/workloads/attention/attention.tuned.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["winners"] = []; json.dump(d, open(sys.argv[1], "w"))
PY
rm -f "$ws/csrc/tuned_config.h"
(cd "$ws" && git init -q && git add -A && git -c user.email=c@c -c user.name=c commit -qm base)
python3 -m cockpit --workspace "$ws" new "tune D=128 from the L4 tile" > /dev/null
python3 -m cockpit --workspace "$ws" tune --dry-run --group D=128 > "$OUT/attn-dry.txt" 2>&1
t0=$(date +%s)
timeout ${LIMIT:-560} python3 -m cockpit --workspace "$ws" tune --budget "${BUDGET:-5}" --group D=128 > "$OUT/attn-tune.txt" 2>&1
echo "exit $? in $(( $(date +%s) - t0 )) s" >> "$OUT/attn-tune.txt"
tail -30 "$OUT/attn-tune.txt"
cp "$ws/workloads/attention/attention.tuned.json" "$ws/csrc/tuned_config.h" "$OUT/" 2>/dev/null
tar -C "$ws" -czf "$OUT/attn-session.tgz" sessions build/tune/cockpit_attn_base/build.json 2>/dev/null
ls "$ws"/build/tune | head -3 > "$OUT/variants.txt"; ls "$ws"/build/tune | wc -l >> "$OUT/variants.txt"
