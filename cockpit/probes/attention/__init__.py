"""The attention kernel's measuring code for `cockpit tune` (the gates measure any workload with
`probes/workload/`), one part per module: `configs` (a config's name, FLOPs and inputs),
`correctness` (against a float32 reference, output poisoned with NaN), `timing` (settled blocks,
L2 flushed, CUDA events around the call only) and `gpu_watch` (the GPU torch runs on, watched
through NVML).

Run by `tune_probe.py` (and bench/observer.py, bench/kernel_variants.py) in a CHILD python: every module
here needs torch, so importing the package says what to do when torch does not import.
"""

from __future__ import annotations

import sys
import traceback

try:
    import torch  # noqa: F401
except ImportError as missing:  # the traceback stays in the gate's log; its last line says what to do
    traceback.print_exc()
    print(f"torch does not import in {sys.executable} ({missing}): install torch's CUDA build in this "
          "python, or start the cockpit from the environment that has it", flush=True)
    raise SystemExit(2) from None
