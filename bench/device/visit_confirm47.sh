#!/usr/bin/env bash
# Issues 46 and 47, the second visit: the reference's freed buffer at its one shape with each guard
# off and both together; a softmax tune from a vector width left at 1 (VEC=1 declared), so its
# search has a winner to re-confirm; then the whole suite in 8 shards.
# Under /tmp/o-confirm47, archived to $OUT/confirm47.tgz every 45 s.
#   OUT=... bash bench/device/visit_confirm47.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
. bench/device/lanes_common.sh
begin_visit confirm47
export CUDA_VISIBLE_DEVICES=${uuids[0]}
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  t0=$(date +%s)
  PYTHONPATH=$repo timeout 120 python3 bench/cheat_catalogue.py --only correctness \
    --cheats reference_freed_buffer --jobs 8 --json "$OUT/mutation-freed.json" > "$OUT/catalogue-freed.txt" 2>&1
  echo "-- catalogue freed buffer exit $? in $(( $(date +%s) - t0 )) s"; tail -6 "$OUT/catalogue-freed.txt"
  s=$(ws softmax workloads/softmax/softmax.py)
  sed -i 's/Knob("VEC", (1, 2, 4, 8), macro="SOFTMAX_VEC", default=8)/Knob("VEC", (1, 2, 4, 8), macro="SOFTMAX_VEC", default=1)/' "$s/workloads/softmax/softmax.py"
  grep -c 'macro="SOFTMAX_VEC", default=1' "$s/workloads/softmax/softmax.py"
  (cd "$s" && git -c user.email=c@c -c user.name=c commit -qam "softmax: VEC left at 1")
  toml "$s" '[workload]\nmodule = "workloads/softmax/softmax.py"\n\n[tune]\nbudget_min = 1.5\nseed_trials = 6\n'
  t0=$(date +%s)
  timeout 230 python3 -m cockpit --workspace "$s" tune --json > "$OUT/tune.json" 2> "$OUT/tune.log"
  echo "-- softmax tune from VEC=1 exit $? in $(( $(date +%s) - t0 )) s"
  grep -v "tuning: " "$OUT/tune.log" | tail -20
  python3 -c "import json,sys; [print(l) for l in json.load(open(sys.argv[1]))['lines']]" "$OUT/tune.json"
  cp -r "$s"/sessions "$OUT/tune-sessions"; find "$OUT/tune-sessions" \( -name '*.so' -o -name '*.o' \) -delete
  cp "$s"/workloads/softmax/softmax.tuned.json "$OUT/" 2>/dev/null
  snap
  suite 8
} > "$OUT/lane.txt" 2>&1
end_visit
cat "$OUT/lane.txt" | tee "$FINAL/summary.txt"
