"""What a timed check and the kernel-records audit cost on this GPU (a diagnostic for the attention
grid's 120 s budget): the attention example's fp32 oracle at the grid's largest shapes, the check's
float64 comparison of one output, and torch's profiler's first start, alone and from a thread while
the main thread keeps the GPU busy.

    python3 bench/device/oracle_cost.py
"""

from __future__ import annotations

import subprocess
import sys
import time

COLD = r"""
import time, torch
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
from torch.profiler import ProfilerActivity, profile
t0 = time.perf_counter()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
    torch.zeros(1, device="cuda"); torch.cuda.synchronize()
t1 = time.perf_counter()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
    torch.zeros(1, device="cuda"); torch.cuda.synchronize()
print(f"profiler first session {t1 - t0:.2f} s, second {time.perf_counter() - t1:.3f} s")
"""

THREAD = r"""
import threading, time, torch
a = torch.randn(2048, 2048, device="cuda")
def work(n):
    t0 = time.perf_counter()
    for _ in range(n):
        a @ a
    torch.cuda.synchronize()
    return time.perf_counter() - t0
work(50)
alone = work(2000)
from torch.profiler import ProfilerActivity, profile
done = {}
def warm():
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        pass
    done["s"] = time.perf_counter() - t0
th = threading.Thread(target=warm); th.start()
beside = work(2000)
th.join()
t1 = time.perf_counter()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
    torch.zeros(1, device="cuda"); torch.cuda.synchronize()
print(f"2000 matmuls alone {alone:.2f} s, beside the profiler's first start in a thread {beside:.2f} s; "
      f"the thread's start {done['s']:.2f} s; a session after it {time.perf_counter() - t1:.3f} s")
"""


def main() -> int:
    sys.path.insert(0, ".")
    import importlib.util

    import torch

    from cockpit.probes.workload.compare import distance

    spec = importlib.util.spec_from_file_location("attention", "workloads/attention/attention.py")
    assert spec is not None and spec.loader is not None
    att = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(att)

    for B, S, D in ((2, 8192, 128), (2, 8192, 64), (4, 4096, 128)):
        for causal in (False, True):
            q, k, v, _ = att.make_inputs(1, B=B, H=16, S=S, D=D, dtype="bf16", causal=causal)
            att.exact(q, k, v, causal)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(3):
                ref = att.exact(q, k, v, causal)
            torch.cuda.synchronize()
            oracle = (time.perf_counter() - t0) / 3
            out = att.sdpa(q, k, v, causal)
            t0 = time.perf_counter()
            distance(out, ref)
            cmp = time.perf_counter() - t0
            print(f"B{B} S{S} D{D} causal={causal}: fp32 oracle {1e3 * oracle:.1f} ms, "
                  f"compare {1e3 * cmp:.1f} ms")
    for code in (COLD, COLD, THREAD):
        subprocess.run([sys.executable, "-c", code], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
