#!/usr/bin/env bash
# Issue 35, item 2 on one GPU: the Liger-style softmax and the layer-norm tutorial's workload checked
# and timed in forward, backward and full (their bench grids cut to M=4096 for the call's time),
# every gate's --json in $OUT, its lines in $OUT/summary.txt.
#   OUT=... bash bench/device/visit_backward.sh     (run(carry=[".whl"]))
set -u
: "${OUT:?set OUT}"
FINAL=$OUT; OUT=/tmp/obw; mkdir -p "$OUT"; ARCHIVE=backward
repo=$PWD
. bench/device/lanes_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpus.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
{
  d=$(ws liger planted/liger_softmax.py)
  gate "$d" liger correctness; gate "$d" liger bench; raw "$d" liger
  d=$(ws layernorm workloads/layernorm_triton/layernorm.py)
  sed -i 's/bench_grid=axes(M=\[4096, 16384\], N=\[512, 1024, 4096, 16384\], dtype=\["fp16", "bf16"\])/bench_grid=axes(M=[4096], N=[1024, 4096, 8192], dtype=["fp16"])/' "$d/workloads/layernorm_triton/layernorm.py"
  gate "$d" layernorm correctness; gate "$d" layernorm bench; raw "$d" layernorm
  for w in /tmp/ws-liger-* /tmp/ws-layernorm-*; do
    for f in "$w"/sessions/*/logs/*; do grep -hE "^\[[0-9]+/[0-9]+\] |^FAIL" "$f" | tail -12; done
  done
} 2>&1 | tee "$OUT/summary.txt"
snap
cp "$OUT/summary.txt" "$FINAL/"
# H200 (2026-11, torch 2.11+cu130, Triton 3.6): liger correctness "all 12/12 checks correct ...; worst
# rel L2 2.7e-03 at M=3 N=4096 bfloat16 backward"; bench "2.08x vs torch.softmax (SUCCESS) over 12
# configs (forward 2.38x, backward 1.80x, full 2.11x)"; layernorm bench "1.26x vs torch.layer_norm
# (MEDIUM) over 9 configs (forward 1.57x, backward 1.08x, full 1.18x)".
