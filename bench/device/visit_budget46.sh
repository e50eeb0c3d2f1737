#!/usr/bin/env bash
# Issue 46's last figures on the GPU: the two planted cheats fixed after the catalogue's correctness
# recording (a cache keyed by pointer and shape; the reference's freed buffer at large-pool shapes),
# then the attention grid through the bench gate twice, alone: every check on, then the bench's
# checks off (COCKPIT_GUARDS_OFF: what the grid takes without them, on the same box).
# Under /tmp/o-budget46, archived to $OUT/budget46.tgz every 45 s.
#   OUT=... bash bench/device/visit_budget46.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit budget46
export CUDA_VISIBLE_DEVICES=${uuids[0]}
summary() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['result']['rows']; \
print(sys.argv[1].split('/')[-1], 'duration_s', d.get('duration_s'), 'timed checks', sum(x.get('checked',0) for x in r), \
round(sum(x.get('check_s',0) for x in r),2), 's; audits', round(sum(c['records'].get('audit_s',0) for x in r \
for c in x['impl'].values() if 'records' in c),2), 's')" "$1" 2>&1 | tail -1
}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  PYTHONPATH=$repo timeout 150 python3 bench/cheat_catalogue.py --only correctness \
    --cheats cache_by_pointer,reference_freed_buffer --jobs 8 --json "$OUT/mutation-fix.json" \
    > "$OUT/catalogue-fix.txt" 2>&1
  echo "-- catalogue fix exit $?"; tail -30 "$OUT/catalogue-fix.txt"
  d=$(ws attention workloads/attention/attention.py)
  GATE_S=200 gate "$d" attention build
  GATE_S=200 gate "$d" attention bench; summary "$OUT/attention-bench.json"
  cp "$OUT/attention-bench.json" "$OUT/attention-bench-on.json"
  COCKPIT_GUARDS_OFF=timed-outputs,shifting-pool,kernel-records,poisoned-trial-outputs,timer-intact,evaluator-intact \
    GATE_S=200 gate "$d" attention bench; summary "$OUT/attention-bench.json"
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
