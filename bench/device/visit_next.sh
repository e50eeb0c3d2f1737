#!/usr/bin/env bash
# The GPU checks still owed by issues 31-33 with the code as it is, on a two-GPU box (nvidia-h100-x2),
# two lanes side by side (each pinned to one GPU by UUID), three calls back to back:
#   OUT=... bash bench/device/visit_next.sh checks   # A: attention built, benched 3x back to back
#                                                    # B: Triton softmax/layer norm, 2x launch, cache, crash
#                                                    #    benches; correctness faults; sanitizer; ncu pages
#   OUT=... bash bench/device/visit_next.sh tunes    # A: attention tune from the L4 tile (5 min)
#                                                    # B: softmax and layer-norm tunes (2 min each)
#   OUT=... bash bench/device/visit_next.sh recheck  # A: attention built, benched 2x back to back
#                                                    # B: the sanitizer recordings (capture_sanitize.sh)
#   OUT=... bash bench/device/visit_next.sh suite    # the whole suite (lane A), nothing beside it
# Everything lands in /tmp/onext, archived to $OUT/next.tgz every 45 s (a call cut at its limit still
# returns what it had); each lane's lines in $OUT/summary.txt.
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/onext; mkdir -p "$OUT"
repo=$PWD
. bench/device/lanes_common.sh
( while sleep 45; do snap; done ) &
snapper=$!
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv > "$OUT/gpus.txt"
case ${1:?name a step: checks, tunes or suite} in
  checks)
    lane_a() {
      export CUDA_VISIBLE_DEVICES=${uuids[0]}
      local d; d=$(ws attention workloads/attention/attention.py)
      gate "$d" attention build
      for k in 1 2 3; do gate "$d" attention-$k bench; raw "$d" attention; done
    }
    lane_b() {
      export CUDA_VISIBLE_DEVICES=${uuids[1]}
      local d
      d=$(ws liger planted/liger_softmax.py); gate "$d" liger build; gate "$d" liger bench; gate "$d" liger profile; raw "$d" liger
      d=$(ws layernorm workloads/layernorm_triton/layernorm.py)
      sed -i 's/bench_grid=axes(M=\[4096, 16384\], N=\[512, 1024, 4096, 16384\], dtype=\["fp16", "bf16"\])/bench_grid=axes(M=[4096], N=[1024, 2048, 4096, 8192], dtype=["fp16"])/' "$d/workloads/layernorm_triton/layernorm.py"
      gate "$d" layernorm build; gate "$d" layernorm bench; gate "$d" layernorm profile; raw "$d" layernorm
      d=$(ws twice planted/twice.py); gate "$d" twice bench; raw "$d" twice
      d=$(ws cached planted/cached.py); gate "$d" cached bench
      d=$(ws crash planted/crash.py); gate "$d" crash build; gate "$d" crash bench
      for f in honest cached by_pointer scales_input racy zeros; do
        d=$(ws "fault-$f" planted/faults.py); PLANTED=$f gate "$d" "fault-$f" correctness
      done
      d=$(ws fault-racy-atomics planted/faults.py); PLANTED=racy ATOMICS=1 gate "$d" fault-racy-atomics correctness
      mkdir -p "$OUT/sanitize"; OUT="$OUT/sanitize" bash tests/fixtures/gpu/capture_sanitize.sh > "$OUT/sanitize.txt" 2>&1
      tail -5 "$OUT/sanitize.txt" 2>/dev/null
    }
    lane_a > "$OUT/lane-a.txt" 2>&1 & a=$!
    lane_b > "$OUT/lane-b.txt" 2>&1 & b=$!
    wait $a $b ;;
  recheck)
    lane_a() {
      export CUDA_VISIBLE_DEVICES=${uuids[0]}
      local d; d=$(ws attention workloads/attention/attention.py)
      gate "$d" attention build
      for k in 1 2; do gate "$d" attention-$k bench; done; raw "$d" attention
    }
    lane_b() {
      export CUDA_VISIBLE_DEVICES=${uuids[1]}
      mkdir -p "$OUT/sanitize"; OUT="$OUT/sanitize" bash tests/fixtures/gpu/capture_sanitize.sh > "$OUT/sanitize.txt" 2>&1
      grep -E '^[a-z_]+(: exit|\.json:)' "$OUT/sanitize.txt"
    }
    lane_a > "$OUT/lane-a.txt" 2>&1 & a=$!
    lane_b > "$OUT/lane-b.txt" 2>&1 & b=$!
    wait $a $b ;;
  tunes)
    lane_a() { CUDA_VISIBLE_DEVICES=${uuids[0]} OUT="$OUT/attn" BUDGET=5 LIMIT=500 bash -c 'mkdir -p $OUT; bash bench/device/visit_one_engine.sh'; }
    lane_b() {
      export CUDA_VISIBLE_DEVICES=${uuids[1]}
      for w in softmax layernorm; do
        case $w in softmax) m=workloads/softmax/softmax.py ;; layernorm) m=workloads/layernorm_triton/layernorm.py ;; esac
        local d; d=$(ws tune-$w $m); printf '[tune]\nseed_trials = 6\n' >> "$d/cockpit.toml"
        (cd "$d" && git add -A && git -c user.email=c@c -c user.name=c commit -qm toml)
        local t0=$(date +%s)
        timeout 230 python3 -m cockpit --workspace "$d" tune --budget 2 > "$OUT/tune-$w.txt" 2>&1
        echo "-- tune $w exit $? in $(( $(date +%s) - t0 )) s: $(grep -E 'KEEP|REVERT|WINNER|no winner' "$OUT/tune-$w.txt" | tail -2 | tr '\n' ' ')"
      done
    }
    lane_a > "$OUT/lane-a.txt" 2>&1 & a=$!
    lane_b > "$OUT/lane-b.txt" 2>&1 & b=$!
    wait $a $b ;;
  suite)
    export CUDA_VISIBLE_DEVICES=${uuids[0]}
    OUT="$OUT/suite" bash -c 'mkdir -p $OUT; bash bench/device/visit_suite.sh suite' > "$OUT/lane-a.txt" 2>&1 ;;
esac
kill $snapper 2>/dev/null
snap
cat "$OUT"/lane-*.txt | tee "$FINAL/summary.txt"
