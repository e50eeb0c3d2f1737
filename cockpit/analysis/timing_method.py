"""How to time one kernel call honestly, and when the timing has converged: the pure decisions the
bench probe's runner calls (it owns the events, the flush and the input sets; this module owns
the numbers).

Why not per-call events for everything: an event pair around a ~10 µs call, with the L2 flushed
before each call, is bimodal by itself on an H100 (15.5 µs, or 25–34 µs for the same kernel on
an idle card): when the host's enqueue of one iteration outlasts the GPU's flush + call, the queue
drains and the start event is stamped before the call has even been launched, so host launch
latency lands inside the interval. Two runs of one binary 7 minutes apart read 1.06x and 1.01x
against one reference because three 8–15 µs configs moved 2.5–3.4x. Below `LAUNCH_BOUND_MS` a config is
therefore timed in *batches* (nvbench's batch measurement, Triton's do_bench): `calls_per_batch`
calls back to back between two events, no flush inside, the inputs rotated over enough sets that
every call reads data L2 no longer holds; one sample is a batch's mean call time.

Every time is device time: the probe queues the timed launches behind a short spin, so the GPU
runs them back to back whatever the host's launch cost (nvbench's blocking kernel); the eager time
per call, what a model without graphs pays, is measured beside it and shown as its own number.
Launch cost is a note on the implementation whose host cannot keep up, never a reason to leave a
config out of the headline: the shapes inference runs at are the small ones. (Batched eager
launches were the method before; CUDA-graph replay would need every callable to be capturable,
which a Triton autotuner's first call or a wrapper that allocates is not.)

Convergence follows nvbench's stdrel criterion (`noise`, `enough`); a median carries a
distribution-free interval (`median_interval`), speedups a conservative one (`ratio_interval`),
and a change counts only when intervals do not overlap (`beyond_noise`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

LAUNCH_BOUND_MS = 0.05
"""Calls at least this long are timed per call (flush outside the events). The host then stays
ahead: each iteration is a flush (~0.1 ms for 256 MB at H100 bandwidth) plus ≥ 50 µs of call,
longer than the tens of µs a Python dispatch takes to enqueue it, so both events and the call are
queued before the GPU reaches them; 0.5 µs of event resolution is ≤ 1 % of the call. On the two
recorded H100 benches (tests/fixtures/gpu/h100, comparable) every per-call cell whose p80/p20
exceeded 1.5 had a median under 0.045 ms, and all 192 cells at ≥ 0.05 ms stayed within 1.21."""

BATCH_SPAN_MS = 1.0
"""A batch spans at least this much GPU time: event resolution (~0.5 µs) becomes 0.05 % of it,
and one late launch is averaged over ≥ 20 calls (100 for a 10 µs kernel)."""

MAX_CALLS_PER_BATCH = 2000
"""Bounds the host's enqueue run for sub-microsecond calls (those are launch-bound anyway)."""

COLD_L2_FACTOR = 2
"""Rotated inputs total more than 2x L2 before a set comes round again: L2 is not a strict LRU,
so 1x is not enough to be sure a set was evicted."""

ROTATION_MEMORY_FRACTION = 0.5
"""The input sets may use at most half of the free GPU memory: the call's own outputs and
workspace, and the references' copies, need the rest."""

MAX_INPUT_SETS = 1024
"""Each set is one call of the workload's input maker (host time); inputs so small they need more
sets than this make a launch-bound call, where a warm L2 moves little."""

NOISE_TARGET = 0.005
MIN_SAMPLES = 10
MAX_SECONDS = 2.0
"""nvbench's stop rule: at least 10 samples, then stop when the relative standard deviation is
≤ 0.5 % (its defaults) or at the time cap (ours 2 s per implementation and config, not nvbench's
15 s: a bench has tens of configs times several references)."""
INTERVAL_TARGET = 0.01
"""Every median's interval within ±1 % where the time allows."""
EXTRA_SECONDS = 1.5
"""Past the time cap, an implementation whose median's interval is still wider than ±1 % goes on
for up to this long (SDPA at B4 H16 S1024 D64 on an H200 read ±1.5 % at the 2 s cap)."""


class Interval(NamedTuple):
    """A point value and its interval: (value, lo, hi), unpackable as the tuple it is."""

    value: float
    lo: float
    hi: float


@dataclass(frozen=True)
class TimingPlan:
    """How one implementation on one config is timed."""

    method: Literal["per-call", "batch"]
    calls_per_batch: int  # 1 per call
    input_sets: int  # sets to rotate over so each call reads cold data (1: the flush does it)
    rotation_bytes: int  # input_sets x bytes of one set
    why: str  # one line for the log: the method and what chose it
    l2_note: str | None = None  # set when the rotation cannot exceed COLD_L2_FACTOR x L2


def plan_config(single_call_ms: float, l2_bytes: int, bytes_per_input_set: int,
                free_bytes: int, held_per_set: int | None = None) -> TimingPlan:
    """Per-call timing for calls ≥ LAUNCH_BOUND_MS, batches below, from one warm call's time
    (an over-estimate for short calls; re-plan with the first batch's mean for a tighter size).

    In a batch the runner keeps one rotation counter across batches, so a set comes back only
    after `rotation_bytes` of other inputs have been read, whatever `calls_per_batch` is.
    `bytes_per_input_set` is what a set's calls read (the rotation); `held_per_set`, what a set
    holds in memory besides (its output buffer until the timed calls' one pool replaces it)."""
    if single_call_ms <= 0 or l2_bytes <= 0 or bytes_per_input_set <= 0:
        raise ValueError("call time, L2 size and input bytes must be positive")
    if single_call_ms >= LAUNCH_BOUND_MS:
        return TimingPlan("per-call", 1, 1, bytes_per_input_set,
                          f"per-call: {single_call_ms * 1e3:.1f} µs ≥ {LAUNCH_BOUND_MS * 1e3:.0f} µs, "
                          "L2 flushed before each call")
    calls = batch_calls(single_call_ms)
    needed = COLD_L2_FACTOR * l2_bytes // bytes_per_input_set + 1
    fits = int(ROTATION_MEMORY_FRACTION * free_bytes) // max(bytes_per_input_set, held_per_set or 0)
    sets = max(1, min(needed, fits, MAX_INPUT_SETS))
    rotation = sets * bytes_per_input_set
    note = None
    if sets < needed:
        limit = "free memory" if fits <= MAX_INPUT_SETS else f"the {MAX_INPUT_SETS}-set cap"
        note = (f"rotation {_mb(rotation)} ({sets} sets x {_mb(bytes_per_input_set)}) does not exceed "
                f"{COLD_L2_FACTOR}x L2 ({_mb(COLD_L2_FACTOR * l2_bytes)}), held back by {limit}: "
                "some inputs may still be in L2, so times may read fast")
    return TimingPlan("batch", calls, sets, rotation,
                      f"batch: {single_call_ms * 1e3:.1f} µs < {LAUNCH_BOUND_MS * 1e3:.0f} µs, "
                      f"{calls} calls per batch over {sets} input sets", note)


def with_resolution(interval: Interval, floor: float = NOISE_TARGET) -> Interval:
    """`interval` widened to at least ±`floor` of its value. A median's interval from thousands
    of samples in one run says how well that run pinned it, not how far the next run lands: on
    the H100 two back-to-back runs of one binary moved per-call configs by up to 0.45 % with
    intervals ten times narrower. The noise target is the resolution the bench claims."""
    value, lo, hi = interval
    return Interval(value, min(lo, value * (1 - floor)), max(hi, value * (1 + floor)))


def batch_calls(call_ms: float) -> int:
    """Calls per batch for a call of `call_ms`: a batch spans at least BATCH_SPAN_MS of GPU time.
    Every implementation of a batched config gets its own (a slower reference needs fewer)."""
    return max(1, min(MAX_CALLS_PER_BATCH, math.ceil(BATCH_SPAN_MS / max(call_ms, 1e-6))))


def noise(samples: Sequence[float]) -> float:
    """Relative standard deviation (stdev / mean), nvbench's stdrel; inf when it cannot be told
    (fewer than two samples, or a zero mean)."""
    if len(samples) < 2:
        return math.inf
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / mean if mean > 0 else math.inf


def enough(samples: Sequence[float], elapsed_s: float, target: float = NOISE_TARGET,
           min_samples: int = MIN_SAMPLES, max_s: float = MAX_SECONDS,
           extra_s: float = 0.0) -> tuple[bool, str]:
    """Whether to stop sampling, and why. Below `min_samples` it goes on; then it stops once
    `noise` ≤ `target` (nvbench's stdrel) or once the median's own interval is within ±`target`
    (the quantity the bench reports: per-call times keep their spread however many are taken, so
    stdrel alone would run every per-call-like batch to the cap). At the time cap it stops if the
    median's interval is within ±INTERVAL_TARGET, else goes on for up to `extra_s` more."""
    level = noise(samples)
    width = half_width(samples)
    if elapsed_s >= max_s:
        over = elapsed_s >= max_s + extra_s
        if width > INTERVAL_TARGET and not over:
            return False, f"median ±{_pct(width)} > ±{_pct(INTERVAL_TARGET)} at the cap: more samples"
        cap = f"{max_s + extra_s:.1f}" if over and extra_s else f"{max_s:.1f}"
        return True, (f"time cap {cap} s reached at noise {_pct(level)}, median ±{_pct(width)} "
                      f"({len(samples)} samples)")
    if len(samples) < min_samples:
        return False, f"{len(samples)} of {min_samples} samples"
    if level <= target:
        return True, f"noise {_pct(level)} ≤ {_pct(target)}"
    if width <= target:
        return True, (f"median ±{_pct(width)} ≤ ±{_pct(target)} at noise {_pct(level)} "
                      f"({len(samples)} samples)")
    return False, f"noise {_pct(level)} > {_pct(target)}"


def half_width(samples: Sequence[float]) -> float:
    """The median's interval (`median_interval`) as a fraction of the median, the wider side;
    inf when it cannot be told."""
    if len(samples) < 2:
        return math.inf
    median, lo, hi = median_interval(samples)
    return max(hi / median - 1, 1 - lo / median) if median > 0 else math.inf


def median_interval(samples: Sequence[float], confidence: float = 0.95) -> Interval:
    """The median and a distribution-free interval for it from order statistics: the k-th
    smallest and k-th largest sample, with k the largest for which Binomial(n, ½) puts at least
    `confidence` between them. Bimodal or skewed samples need no normality. With too few samples
    for the asked confidence (n ≤ 5 at 95 %) it is the full range, the widest the data can say."""
    if not samples:
        raise ValueError("no samples")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie in (0, 1)")
    ordered = sorted(samples)
    n = len(ordered)
    k = _order_statistic(n, (1 - confidence) / 2)
    return Interval(statistics.median(ordered), ordered[k - 1], ordered[n - k])


def ratio_interval(ref: Interval | tuple[float, float, float],
                   ours: Interval | tuple[float, float, float]) -> Interval:
    """Speedup ref / ours from two (value, lo, hi) times, conservatively: the slowest reference
    over the fastest ours is the top, the fastest reference over the slowest ours the bottom."""
    (r, r_lo, r_hi), (o, o_lo, o_hi) = ref, ours
    return Interval(r / o, r_lo / o_hi, r_hi / o_lo)


def beyond_noise(before: Interval | tuple[float, float, float],
                 after: Interval | tuple[float, float, float]) -> bool:
    """A change counts only when the two (value, lo, hi) intervals do not overlap: the run-to-run
    spread is each measurement's own, not a fixed 3 %."""
    _, b_lo, b_hi = before
    _, a_lo, a_hi = after
    return a_hi < b_lo or a_lo > b_hi


def _order_statistic(n: int, tail: float) -> int:
    """The largest k (1-based, ≥ 1) with P(Binomial(n, ½) ≤ k - 1) ≤ tail, so that
    [x_(k), x_(n+1-k)] covers the median with probability ≥ 1 - 2·tail (k = 1 when even the full
    range cannot). Summed in log space: n may be many thousand per-call samples."""
    log_half_n = n * math.log(0.5)
    cdf, k = 0.0, 0
    while k < n // 2:
        cdf += math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + log_half_n)
        if cdf > tail:
            break
        k += 1
    return max(1, k)


def _pct(fraction: float) -> str:
    return "unknown" if math.isinf(fraction) else f"{fraction * 100:.2f} %"


def _mb(nbytes: int) -> str:
    return f"{nbytes / 1e6:.0f} MB"
