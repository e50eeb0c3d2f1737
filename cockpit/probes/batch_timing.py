"""Timing a config whose calls are short (under `LAUNCH_BOUND_MS`), the way they run in use: in
batches of back-to-back calls between two CUDA events, no L2 flush inside a batch, the inputs
rotated over enough sets that every call reads data L2 no longer holds (analysis/timing_method.py
decides the method, the batch size and the sets; this module runs it).

Every implementation is timed in the same rounds, its order alternating round by round, each
turn after `settle_ms` of untimed calls (its own power-capped clock, as the per-call path does).
A sample is one batch's mean call time; rounds go on until every implementation's samples are
quiet (relative spread ≤ 0.5 %, nvbench's stdrel) or the time cap is reached. The host's time to
enqueue a batch is kept too: a config whose host barely keeps ahead of the GPU is launch-bound.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, TypedDict

import torch

from cockpit.analysis.timing_method import (
    MAX_SECONDS,
    Interval,
    enough,
    launch_bound,
    median_interval,
    noise,
    ratio_interval,
    with_resolution,
)


class TimingCell(TypedDict, total=False):
    """One implementation's time on one shape: the median call, its interval, the spread, how it
    was timed (per call, or in batches with the host's enqueue time), and the rates."""

    median_ms: float
    ci_ms: list[float]
    p20_ms: float
    p80_ms: float
    samples: int
    method: str
    calls_per_batch: int
    noise: float
    stop: str
    host_ms_per_call: float
    launch_bound: bool
    times_ms: list[float]
    """The samples themselves, when kept (the tuner's intervals)."""
    tflops: float | None
    gbps: float | None


class BlockSpan(TypedDict):
    """When one timed block ran, in wall-clock seconds, and how many calls it timed."""

    impl: str
    t0: float
    t1: float
    calls: int


Call = Callable[[int], object]
"""call(k): one call of an implementation on input set k."""
BATCHES_PER_TURN = 4


def batch_cells(calls: Mapping[str, Call], call_ms: Mapping[str, float], calls_per_batch: Mapping[str, int],
                sets: int, settle_ms: float, config_index: int, max_s: float = MAX_SECONDS,
                keep_times: bool = False,
                ) -> tuple[dict[str, TimingCell], list[tuple[str, Any, Any, int]]]:
    """Each implementation's cell (median call time, its interval, the samples, why it stopped,
    the host's enqueue time, launch-bound) and the timed spans (impl, first event, last event,
    calls) for the validity verdict. `keep_times`: each cell keeps its samples (`times_ms`, one
    per batch: the tuner bootstraps its intervals from them)."""
    names = list(calls)
    host_ms = {n: _host_ms(calls[n], min(HOST_PROBE_CALLS, calls_per_batch[n]), sets) for n in names}
    batches: dict[str, list[tuple[Any, Any, float]]] = {n: [] for n in names}
    spans: list[tuple[str, Any, Any, int]] = []
    rep = 0
    started = time.perf_counter()
    done: dict[str, str] = {}
    round_no = 0
    while len(done) < len(names):
        order = names if (config_index + round_no) % 2 == 0 else names[::-1]
        for name in order:
            if name in done:
                continue
            call, per = calls[name], calls_per_batch[name]
            for _ in range(min(5000, math.ceil(settle_ms / max(call_ms[name], 1e-3)))):
                call(rep % sets)
                rep += 1
            first = len(batches[name])
            for _ in range(BATCHES_PER_TURN):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                host = time.perf_counter()
                for _ in range(per):
                    call(rep % sets)
                    rep += 1
                host = time.perf_counter() - host
                end.record()
                batches[name].append((start, end, host))
            spans.append((name, batches[name][first][0], batches[name][-1][1], BATCHES_PER_TURN * per))
        torch.cuda.synchronize()
        round_no += 1
        elapsed = time.perf_counter() - started
        for name in names:
            if name not in done:
                stop, why = enough(_per_call(batches[name], calls_per_batch[name]), elapsed, max_s=max_s)
                if stop:
                    done[name] = why
    cells = {n: _cell(batches[n], calls_per_batch[n], done[n], host_ms[n]) for n in names}
    if keep_times:
        for n in names:
            cells[n]["times_ms"] = _per_call(batches[n], calls_per_batch[n])
    return cells, spans


HOST_PROBE_CALLS = 256
"""Calls whose enqueue is timed on an idle GPU: fewer than CUDA's launch queue holds (~1,000), so
the host never waits for room and its time is the launch cost alone."""


def _host_ms(call: Call, n: int, sets: int) -> float:
    """The host's time to enqueue one call, measured with the GPU idle and the queue empty (in a
    timed round the queue is full and every enqueue waits for the GPU: that would read as
    launch-bound)."""
    torch.cuda.synchronize()
    host = time.perf_counter()
    for k in range(n):
        call(k % sets)
    host = time.perf_counter() - host
    torch.cuda.synchronize()
    return host * 1e3 / n


def _per_call(batches: Sequence[tuple[Any, Any, float]], per: int) -> list[float]:
    return [s.elapsed_time(e) / per for s, e, _ in batches]


def _cell(batches: Sequence[tuple[Any, Any, float]], per: int, why: str, host_ms: float) -> TimingCell:
    samples = _per_call(batches, per)
    median, lo, hi = with_resolution(median_interval(samples))
    return {"median_ms": median, "ci_ms": [lo, hi], "p20_ms": percentile(samples, 0.2),
            "p80_ms": percentile(samples, 0.8), "samples": len(samples), "method": "batch",
            "calls_per_batch": per, "noise": noise(samples), "stop": why, "host_ms_per_call": host_ms,
            "launch_bound": launch_bound(median, host_ms)}


def per_call_cells(events: Mapping[str, Sequence[tuple[Any, Any]]], keep_times: bool = False
                   ) -> dict[str, TimingCell]:
    """Each implementation's cell from its per-call event pairs: median, p20/p80, the median's
    interval and the spread. `keep_times`: its samples too (`times_ms`)."""
    cells: dict[str, TimingCell] = {}
    for impl, pairs in events.items():
        samples = [s.elapsed_time(e) for s, e in pairs]
        _, lo, hi = with_resolution(median_interval(samples))
        cells[impl] = {"median_ms": statistics.median(samples), "p20_ms": percentile(samples, 0.2),
                       "p80_ms": percentile(samples, 0.8), "samples": len(samples), "ci_ms": [lo, hi],
                       "noise": noise(samples), "method": "per-call", "launch_bound": False}
        if keep_times:
            cells[impl]["times_ms"] = samples
    return cells


def speedup_intervals(row: MutableMapping[str, Any]) -> None:
    """Each `speedup_vs_X` gets its interval (`speedup_vs_X_ci`), and the row is launch-bound when
    any of its implementations is: a time the host's enqueue sets moves with the CPU's jitter, so
    a speedup over it is no kernel's. (Counting ours alone was tried on the H100: a reference's
    dispatch then set its time at a 512-token shape and the speedup read 1.77x, then 1.14x.)"""
    cells = row["impl"]
    ours = cells.get("ours")
    if ours is None:
        return
    for impl, cell in cells.items():
        if impl != "ours" and "ci_ms" in cell and "ci_ms" in ours:
            ratio = ratio_interval(Interval(cell["median_ms"], *cell["ci_ms"]),
                                   Interval(ours["median_ms"], *ours["ci_ms"]))
            row[f"speedup_vs_{impl}_ci"] = [ratio.lo, ratio.hi]
    row["launch_bound"] = any(bool(c.get("launch_bound")) for c in cells.values())


def set_bytes(inputs: Any) -> int:
    """Bytes of the tensors in one input set (nested lists and tuples walked)."""
    if isinstance(inputs, torch.Tensor):
        return int(inputs.numel() * inputs.element_size())
    if isinstance(inputs, (list, tuple)):
        return sum(set_bytes(x) for x in inputs)
    return 0


def device_memory() -> tuple[int, int]:
    """(L2 bytes, free bytes) of the current GPU."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    l2 = int(getattr(props, "L2_cache_size", 0) or 50 * 1024 * 1024)
    free, _ = torch.cuda.mem_get_info()
    return l2, int(free)


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * p
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


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


def block_spans(anchor: Any, anchor_t: float, spans: Sequence[tuple[str, Any, Any, int]]
                ) -> list[BlockSpan]:
    """When each timed block ran, in wall-clock seconds, so the NVML samples inside it tell the
    clock it ran at: (implementation, its first start event, its last end event, timed calls),
    placed on the GPU's timeline by `anchor`, an event the host saw complete at `anchor_t`."""
    return [{"impl": name, "t0": round(anchor_t + anchor.elapsed_time(start) / 1e3, 4),
             "t1": round(anchor_t + anchor.elapsed_time(end) / 1e3, 4), "calls": timed}
            for name, start, end, timed in spans]


def flush_ms(flush: Any) -> float:
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
