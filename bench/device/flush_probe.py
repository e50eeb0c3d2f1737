"""What the L2 flush before each timed call leaves inside the timed call: a kernel launched twice
(softmax on two inputs) against once, per call, with three flushes: zero a 256 MB buffer (dirty
lines left in L2, written back during the timed call), zero then read another 256 MB buffer (L2
left holding clean lines), read only. An empty event pair shows the fixed cost of each.
    python3 bench/device/flush_probe.py"""
import statistics

import torch

dev = "cuda"
zero_buf = torch.empty(256 << 20, dtype=torch.int8, device=dev)
read_buf = torch.ones(64 << 20, dtype=torch.float32, device=dev)  # 256 MB
sink = torch.empty((), dtype=torch.float32, device=dev)
FLUSH = {
    "zero": lambda: zero_buf.zero_(),
    "zero+read": lambda: (zero_buf.zero_(), torch.sum(read_buf, 0, out=sink)),
    "read": lambda: torch.sum(read_buf, 0, out=sink),
}


def per_call(fn, flush, n=300):
    for _ in range(5):
        flush()
        fn()
    torch.cuda.synchronize()
    torch.cuda._sleep(50_000_000)
    ev = []
    for _ in range(n):
        flush()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        ev.append((s, e))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in ev) * 1e3


for N in (1024, 4096, 16384):
    x = torch.randn(4096, N, device=dev)
    y = torch.randn(4096, N, device=dev)

    def once(x=x):
        return torch.softmax(x, -1)

    def twice(x=x, y=y):  # the defaults bind this N's inputs
        torch.softmax(y, -1)
        return torch.softmax(x, -1)

    for name, flush in FLUSH.items():
        e = per_call(lambda: None, flush)
        a, b = per_call(once, flush), per_call(twice, flush)
        print(f"N={N:6d} flush={name:10s} empty {e:6.2f} us  once {a:8.2f} us  twice {b:8.2f} us  "
              f"ratio {a / b:.4f}  twice-2*once {b - 2 * a:+.2f} us", flush=True)
