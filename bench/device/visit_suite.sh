#!/usr/bin/env bash
# One device visit: the whole test suite on the GPU box (wheels from .whl/, the box's own CUDA
# torch), lint-imports, then bench/big_session.py. Outputs under $OUT.
#   OUT=... REPEAT=2 bash bench/device/visit_suite.sh [suite|bench|both]
set -uo pipefail
what=${1:-both}
. tests/fixtures/gpu/capture_common.sh
mkdir -p "$OUT"
export XDG_CACHE_HOME=/tmp/cockpit-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, torch.version.cuda)" | tee -a "$OUT/gpu.txt"
if [ "$what" != bench ]; then
  python3 -c "import sys; from importlinter.cli import lint_imports_command; sys.argv = ['lint-imports']; lint_imports_command()" 2>&1 | tail -3 | tee "$OUT/lint-imports.txt" || true
  start=$(date +%s)
  python3 -m pytest -q -p no:cacheprovider > "$OUT/suite.txt" 2>&1
  echo "exit $? in $(( $(date +%s) - start )) s" >> "$OUT/suite.txt"
  tail -15 "$OUT/suite.txt"
fi
if [ "$what" != suite ]; then
  nproc > "$OUT/nproc.txt"
  python3 bench/big_session.py --repeat "${REPEAT:-2}" 2>&1 | tee "$OUT/big_session.txt"
fi
