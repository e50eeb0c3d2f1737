#!/usr/bin/env bash
# Issue 46 on the GPU, part 1: the cheat catalogue's mutation test (every planted cheat through its
# gate's real probe, every guard on, then each guard of that gate off), recorded for
# tests/fixtures/gpu/cheats/mutation.json; then a kernel launched twice (the bench probe, twice over),
# the planted "right when checked, wrong when timed" kernel and the planted escapes. Everything under
# /tmp/o-cheats, archived to $OUT/cheats.tgz every 45 s.
#   OUT=... bash bench/device/visit_cheats.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit cheats
export CUDA_VISIBLE_DEVICES=${uuids[0]} PYTHONPATH=$repo
probe() {  # probe NAME MODULE [ENV=...]: the bench probe on a planted workload, its file and log kept
  local name=$1 module=$2; shift 2
  env "$@" timeout 300 python3 -m cockpit.probes.workload_probe bench --workspace . --workload "$module" \
    --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
  echo "-- $name exit $?: $(grep -v -i warn "$OUT/$name.log" | tail -1)"
}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  git -C "$repo" log --oneline -1 2>/dev/null || true
  t0=$(date +%s)
  python3 bench/cheat_catalogue.py --jobs 8 --bench-jobs 3 --json "$OUT/mutation.json" > "$OUT/catalogue.txt" 2>&1
  echo "-- catalogue exit $? in $(( $(date +%s) - t0 )) s"; cat "$OUT/catalogue.txt"
  for n in 1 2; do probe "twice-$n" bench/device/planted/twice.py; done
  probe timed-wrong bench/device/planted/timed_wrong.py
  for p in side joined thread; do probe "escapes-$p" bench/device/planted/escapes.py PLANTED=$p; done
  python3 - "$OUT" <<'PY'
import json
import sys

for n in (1, 2):
    rows = json.load(open(f"{sys.argv[1]}/twice-{n}.json"))["rows"]
    print(f"twice run {n}:", ", ".join(
        f"N={r['N']} {r['impl']['torch.softmax']['median_ms'] / r['impl']['ours']['median_ms']:.4f}"
        f" ({r['impl']['torch.softmax']['median_ms'] * 1e3:.1f} µs once)" for r in rows))
PY
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
