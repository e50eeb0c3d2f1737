"""Timing: ours and SDPA's backends in one process, interleaved in blocks, each block after
~100 ms untimed (every implementation timed at its own power-capped clock, as triton's do_bench
times it), CUDA events around the call only, L2 flushed before every call (outside the events),
inputs rotated over several sets; median and p20/p80 per implementation, and each timed block's
span in wall-clock time."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from .configs import Impl, config_name, flops, make_inputs, say

# The tuner runs its probe by path, where `cockpit` need not be installed: the folder holding the
# package goes first on sys.path (as workload_load.py does), so the batch timing is this checkout's.
_PACKAGE_PARENT = Path(__file__).resolve().parents[3]
if str(_PACKAGE_PARENT) not in sys.path:
    sys.path.insert(0, str(_PACKAGE_PARENT))

from cockpit.probes.batch_timing import per_call_cells, percentile, speedup_intervals  # noqa: E402, F401


def sdpa_impls() -> dict[str, Impl]:
    """SDPA's default backend, and FLASH / CUDNN / EFFICIENT forced (each runs where it can)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def backend(b: Any) -> Impl:
        def run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                out: torch.Tensor | None = None) -> torch.Tensor:
            with sdpa_kernel(b):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return run

    def default(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                out: torch.Tensor | None = None) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return {"sdpa": default, "flash": backend(SDPBackend.FLASH_ATTENTION),
            "cudnn": backend(SDPBackend.CUDNN_ATTENTION),
            "efficient": backend(SDPBackend.EFFICIENT_ATTENTION)}


def block_plan(call_ms: dict[str, float], n: int, rounds: int, settle_ms: float,
               config_index: int, max_settle_calls: int = 5000) -> list[tuple[str, int, int]]:
    """The timed blocks of one config, in the order they run: (implementation, untimed calls
    first, timed calls). Each implementation gets `n` timed calls split over `rounds` blocks;
    before each block it runs `settle_ms` of calls untimed, so its timed calls see the clock its
    own power draw settles at (a power-capped GPU needs ~100 ms after a lighter kernel; timing it
    right after one reads up to 9 % fast). The order alternates round by round and config by
    config, so slow drift (temperature) falls on every implementation alike."""
    names = list(call_ms)
    per_round = [n // rounds + (1 if r < n % rounds else 0) for r in range(rounds)]
    plan: list[tuple[str, int, int]] = []
    for r in range(rounds):
        order = names if (config_index + r) % 2 == 0 else names[::-1]
        for name in order:
            settle = min(max_settle_calls, math.ceil(settle_ms / max(call_ms[name], 1e-3)))
            if plan and plan[-1][0] == name:
                settle = 0  # it just ran: already at its own clock
            if per_round[r]:
                plan.append((name, settle, per_round[r]))
    return plan


def bench(impls: dict[str, Impl], configs: Sequence[dict[str, Any]], reps: int, warmup: int,
          input_sets: int, budget_s: float = 0.5, settle_ms: float = 100.0,
          rounds: int = 2, keep_times: bool = False) -> list[dict[str, Any]]:
    """Time every implementation on every config, in blocks interleaved by implementation.

    No host sync inside a block: events are recorded in stream order and read at the end, so the
    GPU runs back to back as it does in real use (a sync after each call leaves it idle between
    calls, and an idle GPU boosts above its power-capped steady state). Timed calls get at least
    `reps` and grow for short kernels up to `budget_s` of GPU time per config; see `block_plan`
    for the order and the untimed settling before each block. `keep_times`: every call's time
    too (`times_ms`), for confidence intervals (the tune gate bootstraps them).
    """
    from cockpit.analysis.timing_method import MAX_SECONDS, batch_calls, plan_config
    from cockpit.probes.batch_timing import batch_cells, device_memory, set_bytes

    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")  # > any L2 (50 MB H100)
    flush_ms = _flush_ms(flush)
    l2_bytes, free_bytes = device_memory()
    rows = []
    for index, cfg in enumerate(configs):
        sets = [make_inputs(cfg, "cuda", seed=2000 + 10 * index + i) for i in range(input_sets)]
        runnable: dict[str, Impl] = {}
        estimate_ms: dict[str, float] = {}
        for name, fn in impls.items():
            try:
                for i in range(warmup):
                    q, k, v = sets[i % input_sets]
                    fn(q, k, v, cfg["causal"])
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(*sets[0], cfg["causal"])
                end.record()
                end.synchronize()
                estimate_ms[name] = start.elapsed_time(end)
                runnable[name] = fn
            except RuntimeError as exc:  # a backend that does not support this config
                say(f"  {name}: not available for {config_name(cfg)} ({str(exc).splitlines()[0][:80]})")
        # The GPU's timeline in wall-clock time: an event the host waited for, and the time then.
        anchor = torch.cuda.Event(enable_timing=True)
        anchor.record()
        anchor.synchronize()
        anchor_t = time.time()
        plan = plan_config(min(estimate_ms.values(), default=1.0), l2_bytes, set_bytes(sets[0]), free_bytes)
        row: dict[str, Any] = {"config": config_name(cfg), **cfg, "flops": flops(cfg), "impl": {},
                               "method": plan.why, **({"l2_note": plan.l2_note} if plan.l2_note else {})}
        if plan.method == "batch":  # short calls: batches between two events, inputs rotated past L2
            sets += [make_inputs(cfg, "cuda", seed=2000 + 10 * index + i)
                     for i in range(len(sets), plan.input_sets)]
            calls = {name: (lambda k, fn=fn, ins=sets, causal=cfg["causal"]: fn(*ins[k], causal))
                     for name, fn in runnable.items()}
            per = {name: batch_calls(ms) for name, ms in estimate_ms.items()}
            batch, batched = batch_cells(calls, estimate_ms, per, len(sets), settle_ms, index,
                                         max_s=min(MAX_SECONDS, 4 * budget_s), keep_times=keep_times)
            row["blocks"] = block_spans(anchor, anchor_t, batched)
            rows.append(_finish_row(row, batch, cfg))
            del sets, calls
            continue
        n = max(reps, min(1000, int(budget_s * 1000 / max(sum(estimate_ms.values()), 1e-3))))
        call_ms = {name: ms + flush_ms for name, ms in estimate_ms.items()}
        events: dict[str, list[tuple[Any, Any]]] = {name: [] for name in runnable}
        spans: list[tuple[str, Any, Any, int]] = []
        rep = 0
        for name, settle, timed in block_plan(call_ms, n, rounds, settle_ms, index):
            fn = runnable[name]
            first = len(events[name])
            for i in range(settle + timed):
                q, k, v = sets[rep % input_sets]
                rep += 1
                flush.zero_()  # outside the events: every call starts with a cold L2
                if i < settle:
                    fn(q, k, v, cfg["causal"])
                    continue
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(q, k, v, cfg["causal"])
                end.record()
                events[name].append((start, end))
            spans.append((name, events[name][first][0], events[name][-1][1], timed))
        torch.cuda.synchronize()
        row["blocks"] = block_spans(anchor, anchor_t, spans)
        rows.append(_finish_row(row, per_call_cells(events, keep_times), cfg))
        del sets
    return rows


def _finish_row(row: dict[str, Any], cells: dict[str, dict[str, Any]], cfg: dict[str, Any]) -> dict[str, Any]:
    """The cells with their TFLOP/s, the speedups over SDPA and FLASH with their intervals; said
    in the log."""
    for name, cell in cells.items():
        row["impl"][name] = {**cell, "tflops": flops(cfg) / (cell["median_ms"] * 1e-3) / 1e12}
    ours = row["impl"].get("ours")
    for base in ("sdpa", "flash"):
        if ours and base in row["impl"]:
            row[f"speedup_vs_{base}"] = row["impl"][base]["median_ms"] / ours["median_ms"]
    speedup_intervals(row)
    text = "  ".join(f"{impl} {r['median_ms']:.3f} ms ({r['tflops']:.0f} TF/s)"
                     for impl, r in row["impl"].items())
    bound = " (launch-bound)" if row.get("launch_bound") else ""
    say(f"{config_name(cfg):<36} {text}  speedup vs sdpa {row.get('speedup_vs_sdpa', 0):.2f}x{bound}")
    return row


def block_spans(anchor: Any, anchor_t: float, spans: Sequence[tuple[str, Any, Any, int]]
                ) -> list[dict[str, Any]]:
    """When each timed block ran, in wall-clock seconds, so the NVML samples inside it tell the
    clock it ran at: (implementation, its first start event, its last end event, timed calls),
    placed on the GPU's timeline by `anchor`, an event the host saw complete at `anchor_t`."""
    return [{"impl": name, "t0": round(anchor_t + anchor.elapsed_time(start) / 1e3, 4),
             "t1": round(anchor_t + anchor.elapsed_time(end) / 1e3, 4), "calls": timed}
            for name, start, end, timed in spans]


def _flush_ms(flush: torch.Tensor) -> float:
    """What one L2 flush costs on the GPU, so settling is sized in GPU time, flushes included."""
    for _ in range(3):
        flush.zero_()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        flush.zero_()
    end.record()
    end.synchronize()
    ms: float = start.elapsed_time(end)
    return ms / 10
