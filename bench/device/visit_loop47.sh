#!/usr/bin/env bash
# Issues 46 and 47 on the GPU, one visit, each step alone on the GPU:
#   1. the attention grid through the bench gate with every check on (issue 46's budget: <= 120 s),
#      its wall time and what the checks took;
#   2. the reference's freed buffer with both its guards off together (the mutation table's last run);
#   3. a short softmax tune: its regret against its finalists, the re-confirm, the card's name;
# then the learning-loop example session (bench/device/loop_session.sh) when STEPS has "loop".
# Under /tmp/o-loop47, archived to $OUT/loop47.tgz every 45 s.
#   STEPS="grid cheat tune loop" OUT=... bash bench/device/visit_loop47.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit loop47
export CUDA_VISIBLE_DEVICES=${uuids[0]}
steps=" ${STEPS:-grid cheat tune} "
summary() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['result']['rows']; \
print(sys.argv[1].split('/')[-1], 'duration_s', d.get('duration_s'), 'timed checks', sum(x.get('checked',0) for x in r), \
round(sum(x.get('check_s',0) for x in r),2), 's; audits', round(sum(c['records'].get('audit_s',0) for x in r \
for c in x['impl'].values() if 'records' in c),2), 's')" "$1" 2>&1 | tail -1
}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader
  if [[ $steps == *" grid "* ]]; then
    d=$(ws attention workloads/attention/attention.py)
    GATE_S=200 gate "$d" attention build
    GATE_S=220 gate "$d" attention bench; summary "$OUT/attention-bench.json"
  fi
  if [[ $steps == *" cheat "* ]]; then
    t0=$(date +%s)
    PYTHONPATH=$repo timeout 150 python3 bench/cheat_catalogue.py --only correctness \
      --cheats reference_freed_buffer --jobs 8 --json "$OUT/mutation-freed.json" > "$OUT/catalogue-freed.txt" 2>&1
    echo "-- catalogue freed buffer exit $? in $(( $(date +%s) - t0 )) s"; tail -25 "$OUT/catalogue-freed.txt"
  fi
  if [[ $steps == *" tune "* ]]; then
    s=$(ws softmax workloads/softmax/softmax.py)
    toml "$s" '[workload]\nmodule = "workloads/softmax/softmax.py"\n\n[tune]\nbudget_min = 2\nseed_trials = 6\n'
    t0=$(date +%s)
    timeout 280 python3 -m cockpit --workspace "$s" tune --json > "$OUT/tune.json" 2> "$OUT/tune.log"
    echo "-- softmax tune exit $? in $(( $(date +%s) - t0 )) s"
    grep -v "tuning: " "$OUT/tune.log" | tail -30
    cp -r "$s"/sessions "$OUT/tune-sessions"; find "$OUT/tune-sessions" \( -name '*.so' -o -name '*.o' \) -delete
  fi
  if [[ $steps == *" loop "* ]]; then
    mkdir -p "$OUT/loop"; OUT="$OUT/loop" bash bench/device/loop_session.sh > /dev/null 2>&1
    tail -40 "$OUT/loop/loop.txt"
  fi
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
