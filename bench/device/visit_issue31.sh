#!/usr/bin/env bash
# Issue 31's checks on the GPU with this code, one step per device call (each fits its 10 minutes):
#   OUT=... bash bench/device/visit_issue31.sh gates-a   # attention and softmax through every gate (~6 min)
#   OUT=... bash bench/device/visit_issue31.sh gates-b   # layer norm and GPU MODE's vectoradd through every gate
#   OUT=... bash bench/device/visit_issue31.sh tunes     # the layer-norm and softmax examples' tunes, 1 minute each
#   OUT=... bash bench/device/visit_issue31.sh suite     # the whole suite on the GPU box
# (the attention tune from the L4 tile is bench/device/visit_one_engine.sh)
set -u
: "${OUT:?set OUT}"
case ${1:?name a step} in
  gates-a) WORKLOADS="attention softmax" OUT="$OUT" bash bench/device/visit_workloads.sh > "$OUT/workloads.txt" 2>&1 ;;
  gates-b) WORKLOADS="layernorm gpumode" OUT="$OUT" bash bench/device/visit_workloads.sh > "$OUT/workloads.txt" 2>&1 ;;
  tunes) WORKLOADS="" TUNE="softmax layernorm" TUNE_MIN=1 OUT="$OUT" bash bench/device/visit_workloads.sh > "$OUT/workloads.txt" 2>&1 ;;
  suite) OUT="$OUT" bash bench/device/visit_suite.sh suite ;;
esac
grep -h "^-- \|KEEP\|REVERT" "$OUT"/*.txt 2>/dev/null | head -40
