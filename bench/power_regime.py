"""How a power-capped GPU skews attention timings, and which timing scheme agrees with do_bench.

    python3 bench/power_regime.py [--configs big|all]

On a card that sits at its power cap under a fast kernel (the H200 at 700 W under cuDNN
attention), the clock a kernel sees depends on what ran just before it. This measures, on SDPA's
default backend, the median of:
  do_bench      triton.testing.do_bench(..., quantiles=[0.5]): the kernel alone, back to back
  interleaved   one call of each backend in turn (FLASH, default, CUDNN, EFFICIENT), L2 flushed
  blocks N ms   each backend N ms at a time in turn, first quarter of each block not counted
and the transient: after FLASH ran alone for 400 ms, how long the default backend's calls take
against the time since the switch, with the SM clock and power NVML reports at that moment.
Needs a GPU, torch and triton; prints tables only.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import threading
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

CONFIGS = {"big": [(4, 16, 4096, 128, False), (4, 16, 4096, 128, True)],
           "all": [(4, 16, 1024, 64, False), (4, 16, 4096, 64, False), (4, 16, 4096, 128, False),
                   (4, 16, 4096, 128, True)]}


def backends() -> dict:
    def pinned(b):  # type: ignore[no-untyped-def]
        def run(q, k, v, causal):  # type: ignore[no-untyped-def]
            with sdpa_kernel(b):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return run
    return {"flash": pinned(SDPBackend.FLASH_ATTENTION),
            "sdpa": lambda q, k, v, causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
            "cudnn": pinned(SDPBackend.CUDNN_ATTENTION),
            "efficient": pinned(SDPBackend.EFFICIENT_ATTENTION)}


class Clocks:
    """NVML SM clock and power every 2 ms in a thread, with time.perf_counter stamps."""

    def __init__(self) -> None:
        import pynvml as nv

        nv.nvmlInit()
        self.nv, self.h = nv, nv.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        self.samples: list[tuple[float, int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        nv, h = self.nv, self.h
        while not self._stop.wait(0.002):
            self.samples.append((time.perf_counter(), nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                                 nv.nvmlDeviceGetPowerUsage(h) / 1000))

    def __enter__(self) -> Clocks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def timed_calls(fn, args, n: int, flush: torch.Tensor) -> list[tuple]:  # type: ignore[no-untyped-def]
    pairs = []
    for _ in range(n):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(*args)
        e.record()
        pairs.append((s, e))
    return pairs


def one_call_ms(fn, args) -> float:  # type: ignore[no-untyped-def]
    for _ in range(3):
        fn(*args)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(5):
        fn(*args)
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / 5


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--configs", choices=sorted(CONFIGS), default="all")
    args = p.parse_args()
    from triton.testing import do_bench

    impls = backends()
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    print(f"# {torch.cuda.get_device_name()}  torch {torch.__version__}")
    for B, H, S, D, causal in CONFIGS[args.configs]:
        g = torch.Generator(device="cuda").manual_seed(7)
        q, k, v = (torch.randn((B, H, S, D), generator=g, device="cuda").half() for _ in range(3))
        qkv = (q, k, v, causal)
        name = f"B{B} H{H} S{S} D{D} fp16 {'causal' if causal else 'full'}"
        est = {n: one_call_ms(fn, qkv) for n, fn in impls.items()}
        rows = {"do_bench": float(do_bench(functools.partial(impls["sdpa"], *qkv), quantiles=[0.5]))}
        n = max(30, int(500 / sum(est.values())))
        events = {k: [] for k in impls}
        for _ in range(n):  # interleaved, as the bench gate did
            for k, fn in impls.items():
                events[k] += timed_calls(fn, qkv, 1, flush)
        torch.cuda.synchronize()
        rows["interleaved"] = statistics.median(s.elapsed_time(e) for s, e in events["sdpa"])
        for block_ms in (10, 25, 50, 100):
            kept = []
            for _ in range(max(2, int(400 / (block_ms * len(impls))))):
                for k, fn in impls.items():
                    calls = max(4, int(block_ms / est[k]))
                    pairs = timed_calls(fn, qkv, calls, flush)
                    if k == "sdpa":
                        kept += pairs[calls // 4:]
            torch.cuda.synchronize()
            rows[f"blocks {block_ms} ms"] = statistics.median(s.elapsed_time(e) for s, e in kept)
        base = rows["do_bench"]
        print(f"\n{name}: one call flash {est['flash']:.3f} ms, sdpa {est['sdpa']:.3f} ms")
        print(f"{'scheme':<16} {'sdpa median ms':>14} {'vs do_bench':>11}")
        for scheme, ms in rows.items():
            print(f"{scheme:<16} {ms:>14.4f} {100 * (ms - base) / base:>+10.2f}%")
        # The transient: FLASH alone for 400 ms, then the default backend alone for 400 ms.
        with Clocks() as clocks:
            time.sleep(0.05)
            torch.cuda.synchronize()
            timed_calls(impls["flash"], qkv, int(400 / est["flash"]), flush)
            switch = torch.cuda.Event(enable_timing=True)
            switch.record()
            pairs = timed_calls(impls["sdpa"], qkv, int(400 / est["sdpa"]), flush)
            torch.cuda.synchronize()
            host_end = time.perf_counter()
            time.sleep(0.05)
        since = [(switch.elapsed_time(s), s.elapsed_time(e)) for s, e in pairs]
        total_ms = switch.elapsed_time(pairs[-1][1])
        host_switch = host_end - total_ms / 1000  # approximate: the GPU finished at host_end
        print(f"{'ms since switch':<16} {'calls':>5} {'sdpa ms':>8} {'SM MHz':>7} {'W':>5}")
        for lo, hi in ((0, 5), (5, 10), (10, 20), (20, 50), (50, 100), (100, 200), (200, 400)):
            xs = [d for t, d in since if lo <= t < hi]
            cs = [(c, w) for t, c, w in clocks.samples if lo <= (t - host_switch) * 1000 < hi]
            clk = statistics.median(c for c, _ in cs) if cs else float("nan")
            watts = statistics.median(w for _, w in cs) if cs else float("nan")
            if xs:
                print(f"{lo:>5}-{hi:<10} {len(xs):>5} {statistics.median(xs):>8.4f} {clk:>7.0f} "
                      f"{watts:>5.0f}")
        del q, k, v


if __name__ == "__main__":
    main()
