#!/usr/bin/env bash
# One device visit for issue 15's measurements that need the GPU: the observer-effect A/B
# (bench/observer.py: a loaded TUI vs nothing, short and long kernel, interleaved), then the
# kernel built for the L4 (sm_89 code + PTX; the PTX JIT-compiled on this Hopper card): its
# correctness and its speed against FLASH (bench/kernel_check.py --arch 8.9). Output in $OUT.
set -u
: "${OUT:?set OUT}"
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L
python3 bench/observer.py --pairs "${PAIRS:-6}" 2>&1 | tee "$OUT/observer.txt" | tail -12
python3 bench/kernel_check.py --arch 8.9 2>&1 | tee "$OUT/kernel-check-sm89-ptx.txt" | grep -E "build:|correctness:|FAIL|ratio|^ *(fp16|bf16)" | head -80
