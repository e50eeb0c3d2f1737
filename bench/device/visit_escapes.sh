#!/usr/bin/env bash
# The kernel-records audit on the GPU: the planted escapes (honest, side, joined, thread) through the
# bench probe, and the launched-twice ratios; each probe's file and log under $OUT.
#   OUT=... bash bench/device/visit_escapes.sh
set -u
: "${OUT:?set OUT}"
export PYTHONPATH=$PWD
for p in honest side joined thread; do
  PLANTED=$p timeout 120 python3 -m cockpit.probes.workload_probe bench --workspace . \
    --workload bench/device/planted/escapes.py --out "$OUT/escapes-$p.json" > "$OUT/escapes-$p.log" 2>&1
  echo "== $p exit $?"; grep -v Warning "$OUT/escapes-$p.log" | grep -v warn_once | tail -4
done
timeout 200 python3 -m cockpit.probes.workload_probe bench --workspace . --workload bench/device/planted/twice.py \
  --out "$OUT/twice.json" > "$OUT/twice.log" 2>&1; echo "== twice exit $?"
python3 - "$OUT/twice.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d.get("rows", []):
    o, t = r["impl"]["ours"], r["impl"]["torch.softmax"]
    print(r["config"], "ratio %.4f" % (t["median_ms"] / o["median_ms"]), "ours %.2f us" % (o["median_ms"] * 1e3),
          "records", o.get("records"))
PY
