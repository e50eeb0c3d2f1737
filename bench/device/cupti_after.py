"""Whether torch's profiler leaves the host slower after it stops (a diagnostic for the bench's
kernel-records audit): the host's time to launch small ops before any profiler session, after one,
after a second; in children with TEARDOWN_CUPTI unset, 0 and 1 (kineto's switch that finalizes CUPTI
when a trace ends).

    python3 bench/device/cupti_after.py
"""

from __future__ import annotations

import os
import subprocess
import sys

CHILD = r"""
import time, torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile
q = torch.randn(4, 16, 32, 64, device="cuda", dtype=torch.bfloat16)
a = torch.randn(64, device="cuda")
def host_us(n=3000):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        a.add_(1.0)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    for _ in range(n // 10):
        F.scaled_dot_product_attention(q, q, q)
    t2 = time.perf_counter()
    torch.cuda.synchronize()
    return 1e6 * (t1 - t0) / n, 1e6 * (t2 - t1) / (n // 10)
host_us(300)
before = host_us()
times = []
for _ in range(2):
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        a.add_(1.0); torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
    after = host_us()
    print(f"  session {times[-1]:.2f} s; host per add_ / sdpa: before {before[0]:.1f} / {before[1]:.1f} us, "
          f"after {after[0]:.1f} / {after[1]:.1f} us", flush=True)
"""


def main() -> int:
    for teardown in (None, "0", "1"):
        env = dict(os.environ)
        env.pop("TEARDOWN_CUPTI", None)
        if teardown is not None:
            env["TEARDOWN_CUPTI"] = teardown
        print(f"TEARDOWN_CUPTI={teardown}", flush=True)
        subprocess.run([sys.executable, "-c", CHILD], env=env, check=False, timeout=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
