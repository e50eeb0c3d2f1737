"""What both timing paths (probes/batch_timing.py for short calls, probes/call_timing.py for the
rest) share: the cell a timing becomes, the blocks' order and their wall-clock spans, the flush's
cost, the speedups' intervals, and the sizes of inputs and of the card's memory."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Protocol

import torch

from cockpit.analysis.timing_method import Interval, median_interval, noise, ratio_interval, with_resolution
from cockpit.workload.result_wire import BlockSpan, TimingCell


class BlockEnds(Protocol):
    """What runs at a timed block's ends, untimed (probes/workload/timed_check.py): `begin(calls, most)`
    after its settling calls, `end()` once its timed calls are queued."""

    def begin(self, calls: int, most: int | None = None) -> None: ...

    def end(self) -> None: ...


class NoBlockEnds:
    """Nothing at a block's ends."""

    def begin(self, calls: int, most: int | None = None) -> None:
        pass

    def end(self) -> None:
        pass


NO_ENDS = NoBlockEnds()
Span = tuple[str, Any, Any, int]
"""(implementation, the block's first start event, its last end event, timed calls)."""
EAGER_SLOWER = 1.10
"""Eager time 10 % over device time: the host cannot keep up in eager use (`host_bound`)."""


EVENT_PAIRS = 64
"""Empty event pairs timed per config for `event_cost_ms`."""


EVENT_HOLD_MS = 2.0
"""The spin the empty pairs queue behind: 128 records take the host well under 1 ms to queue."""
EVENT_COST_MOST_MS = 0.005
"""An empty pair that reads more than 5 µs was not covered (the host's gap between two records,
6–12 µs on an H100, is what it measured): nothing is taken out then."""


def event_cost_ms(spin: Any = None) -> float:
    """What a pair of timing events reads with nothing between them, queued back to back behind a
    spin as the timed calls are: the GPU front end's own time from one event to the next (1.28 µs
    on an H200, whatever the flush before it). Every sample spans one such pair, so it is taken
    out: left in, it reads a kernel launched twice 0.505x (not 0.500x) against once at 57 µs a
    launch, and 0.515x at 14 µs (bench/device/flush_probe.py). Only pairs the spin covered count
    (else the host's gaps between records are what they read); 0 without a spin kernel, or when
    no try was covered."""
    if spin is None:
        return 0.0
    hold_ms = EVENT_HOLD_MS
    for _ in range(3):
        done = spin.start(hold_ms)
        pairs = []
        for _ in range(EVENT_PAIRS):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            end.record()
            pairs.append((start, end))
        covered = done is not None and not done.query()
        torch.cuda.synchronize()
        ms = float(statistics.median(s.elapsed_time(e) for s, e in pairs))
        if covered and ms <= EVENT_COST_MOST_MS:
            return ms
        hold_ms *= 4
    return 0.0


def net_ms(start: Any, end: Any, event_ms: float) -> float:
    """The device time between two recorded events, the events' own cost (`event_cost_ms`) taken out."""
    return max(0.0, float(start.elapsed_time(end)) - event_ms)


def timed_cell(samples: Sequence[float], method: str, eager: Sequence[float], held: bool,
               extra: Mapping[str, Any]) -> TimingCell:
    """A cell from device-time samples (ms per call): median, its interval (at least the ±0.5 %
    the bench claims), p20/p80, the spread; the eager median and whether the host cannot keep up."""
    median, lo, hi = with_resolution(median_interval(samples))
    cell: TimingCell = {"median_ms": median, "ci_ms": [lo, hi], "p20_ms": percentile(samples, 0.2),
                        "p80_ms": percentile(samples, 0.8), "samples": len(samples), "method": method,
                        "noise": noise(samples), "held": held}
    if eager:
        cell["eager_ms"] = float(statistics.median(eager))
        cell["host_bound"] = cell["eager_ms"] > EAGER_SLOWER * median
    cell.update(extra)  # type: ignore[typeddict-item]
    return cell


def speedup_intervals(row: MutableMapping[str, Any]) -> None:
    """Each `speedup_vs_X` gets its interval (`speedup_vs_X_ci`): the reference's interval over
    ours, each at its worst and best."""
    cells = row["impl"]
    ours = cells.get("ours")
    if ours is None:
        return
    for impl, cell in cells.items():
        if impl != "ours" and "ci_ms" in cell and "ci_ms" in ours and min(ours["ci_ms"]) > 0:
            ratio = ratio_interval(Interval(cell["median_ms"], *cell["ci_ms"]),
                                   Interval(ours["median_ms"], *ours["ci_ms"]))
            row[f"speedup_vs_{impl}_ci"] = [ratio.lo, ratio.hi]


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
            settle = settle_calls(settle_ms, call_ms[name], max_settle_calls)
            if plan and plan[-1][0] == name:
                settle = 0  # it just ran: already at its own clock
            if per_round[r]:
                plan.append((name, settle, per_round[r]))
    return plan


def settle_calls(settle_ms: float, call_ms: float, most: int = 5000) -> int:
    """Untimed calls that fill `settle_ms` of GPU time."""
    return min(most, math.ceil(settle_ms / max(call_ms, 1e-3)))


def block_spans(anchor: Any, anchor_t: float, spans: Sequence[Span]) -> list[BlockSpan]:
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
