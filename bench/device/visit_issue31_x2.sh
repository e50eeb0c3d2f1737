#!/usr/bin/env bash
# Issue 31's checks on a two-GPU box (nvidia-h100-x2), two lanes side by side, each pinned to one
# GPU by UUID (CUDA_VISIBLE_DEVICES), so one device call does two calls' work:
#   OUT=... bash bench/device/visit_issue31_x2.sh gates   # GPU 0: attention, softmax gates; GPU 1: layer norm, GPU MODE gates, then the softmax and layer-norm tunes
#   OUT=... bash bench/device/visit_issue31_x2.sh tune    # GPU 0: the attention tune from the L4 tile (5 min); GPU 1: the whole suite
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
mapfile -t uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
lane() { mkdir -p "$OUT/$1"; CUDA_VISIBLE_DEVICES=${uuids[$2]} OUT="$OUT/$1" bash -c "$3" > "$OUT/$1/lane.txt" 2>&1; }
case ${1:?name a step} in
  gates)
    lane a 0 'bash bench/device/visit_issue31.sh gates-a' &
    lane b 1 'mkdir -p $OUT/gates $OUT/tunes; OUT=$OUT/gates bash bench/device/visit_issue31.sh gates-b; OUT=$OUT/tunes bash bench/device/visit_issue31.sh tunes' &
    wait ;;
  tune)
    lane a 0 'BUDGET=5 LIMIT=500 bash bench/device/visit_one_engine.sh' &
    lane b 1 'bash bench/device/visit_issue31.sh suite' &
    wait ;;
esac
tail -n 12 "$OUT"/*/lane.txt
