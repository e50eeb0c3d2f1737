"""What limits one kernel launch, from its ncu metrics, and the ONE fix to try first.

Mirrors ncu's SOLBottleneck rule (80 % = at the roof, 60 % = latency, 10 points = one side
leads, < 1 wave = small grid) and its children: occupancy, warp stalls, shared-memory bank
conflicts; adds launch overhead (a kernel under ~10 µs, or under half the benchmarked time).

The bottleneck, first match wins:
 1. small-grid       compute and memory both < 60 % of peak and under one wave of blocks per SM
 2. launch-overhead  the kernel lasts < 10 µs, or < 50 % of the benchmark's time per call
 3. memory-/compute-bound  the larger of memory and compute SOL is >= 80 % of peak
 4. occupancy        both < 60 % and too few warps fit (theoretical occupancy < 80 % of the
                     maximum) or stay resident (achieved < 80 % of theoretical)
    latency          both < 60 % otherwise
 5. between 60 and 80 %, as ncu's rule does: the larger side when it leads by >= 10 points
    (memory-/compute-bound with medium confidence: leaning, not at the roof), else balanced.
The memory unit named is the one that sets the memory SOL (its throughput is closest to it):
ncu's memory SOL is the maximum of a per-unit breakdown, and lts__throughput also counts L2
work outside it (copy.csv: L2 92.9 % against a memory SOL of 87.0 % that DRAM sets).

The recommendation, first match wins:
 1. small grid or launch overhead: fuse launches (a tiny kernel), else launch more blocks
 2. shared-memory bank conflicts >= 10 % of wavefronts while shared memory is on the critical
    path (L1 leads a memory verdict, or warps stall on short_scoreboard / mio_throttle): pad
 3. memory: DRAM -> coalesce (< half of each sector used), vectorize (lg_throttle), else move
    fewer bytes; L1 / L2 -> larger tiles
 4. compute: by the hottest pipe: tensor -> overlap the non-MMA work; FMA/ALU with idle tensor
    cores -> use tensor cores; XU -> cheaper transcendentals; LSU -> vectorize
 5. occupancy: by the limiter: registers, shared memory, block size; achieved << theoretical ->
    even out the blocks
 6. latency / balanced: the fix for the dominant warp stall
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cockpit.analysis.ncu import KernelLaunch
from cockpit.analysis.ncu_metrics import (
    _STALL,
    ACHIEVED,
    BYTES_PER_SECTOR,
    COMPUTE,
    CONFLICTS,
    DURATION,
    LIMITS,
    MEMORY,
    MEMORY_UNITS,
    PIPES,
    REGISTERS,
    SHARED_MEM,
    STALL_FIXES,
    STALL_METRIC,
    THEORETICAL,
    WAVEFRONTS,
    WAVES,
)

Bottleneck = Literal["memory-bound", "compute-bound", "latency", "occupancy", "launch-overhead",
                     "small-grid", "balanced"]
Confidence = Literal["high", "medium", "low"]

@dataclass(frozen=True)
class Thresholds:
    bound_pct: float = 80.0        # ncu: above this, compute or memory is at the roof
    latency_pct: float = 60.0      # ncu: both below this points at latency
    lead_points: float = 10.0      # ncu: between the two, one side leads by this many points
    waves: float = 1.0             # ncu: fewer waves than this is a small grid
    occupancy_pct: float = 80.0    # theoretical occupancy below this % of the maximum is limited
    achieved_ratio: float = 0.8    # achieved below this fraction of theoretical is "far below"
    bank_conflicts: float = 0.10   # conflicts per shared-memory wavefront worth a fix
    launch_fraction: float = 0.5   # kernel time below this fraction of the benchmark's per call
    launch_floor_ns: float = 10_000.0  # a kernel shorter than this is dominated by its launch


@dataclass(frozen=True)
class Measure:
    value: float
    unit: str = ""

    def __str__(self) -> str:
        return f"{fmt(self.value)} {self.unit}".strip()


@dataclass(frozen=True)
class BottleneckVerdict:
    bottleneck: Bottleneck
    headline: str
    evidence: dict[str, Measure]
    recommendation: str
    confidence: Confidence
    confidence_reason: str
    notes: tuple[str, ...] = ()


def fmt(value: float) -> str:
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.1f}" if abs(value) >= 1000 else f"{value:.4g}"


def fmt_ns(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} µs"


def evidence(launch: KernelLaunch, names: tuple[str, ...]) -> dict[str, Measure]:
    """Each named metric the launch has (under the name ncu used), with its unit."""
    found = (launch.find(name) for name in names)
    return {f[0]: Measure(f[1], launch.unit(f[0])) for f in found if f is not None}


def top_stalls(launch: KernelLaunch, n: int = 3) -> tuple[tuple[str, float], ...]:
    """The n largest warp stall reasons (cycles per issued instruction), `selected` left out."""
    stalls = [(m.group(1), v) for k, v in launch.metrics.items()
              if (m := _STALL.match(k)) and m.group(1) != "selected" and isinstance(v, float)]
    return tuple(sorted(stalls, key=lambda s: -s[1])[:n])


def stall_note(stalls: tuple[tuple[str, float], ...]) -> str:
    if not stalls:
        return "no warp-stall metrics in this report (add --section WarpStateStats)"
    return "top warp stalls (cycles per issued instruction): " + ", ".join(f"{r} {v:.2f}" for r, v in stalls)


def occupancy_limits(launch: KernelLaunch) -> dict[str, float]:
    """Blocks per SM each resource allows (registers, shared memory, warps, blocks)."""
    return {name: v for name, metric in LIMITS if (v := launch.value(metric)) is not None}


def occupancy_limiters(launch: KernelLaunch, t: Thresholds = Thresholds()) -> tuple[str, ...]:
    """The resource(s) allowing the fewest blocks per SM, all of them on a tie; none when the
    theoretical occupancy is known to reach t.occupancy_pct of the maximum."""
    theo = launch.value(THEORETICAL)
    if theo is not None and theo >= t.occupancy_pct:
        return ()
    limits = occupancy_limits(launch)
    low = min(limits.values(), default=None)
    return tuple(name for name, v in limits.items() if v == low)


def bank_conflict_ratio(launch: KernelLaunch) -> float | None:
    """Shared-memory bank conflicts per shared-memory wavefront (loads and stores), or None."""
    conflicts = wavefronts = 0.0
    for conflict_metric, wavefront_metric in zip(CONFLICTS, WAVEFRONTS, strict=True):
        c, w = launch.value(conflict_metric), launch.value(wavefront_metric)
        if c is not None and w is not None:  # loads and stores each count only when both are there
            conflicts, wavefronts = conflicts + c, wavefronts + w
    return conflicts / wavefronts if wavefronts else None


def memory_unit(launch: KernelLaunch) -> tuple[str, float] | None:
    """The memory unit (DRAM, L1, L2) that sets the memory SOL; the hottest one without it."""
    units = [(name, v) for name, metric in MEMORY_UNITS if (v := launch.value(metric)) is not None]
    if not units:
        return None
    memory = launch.value(MEMORY)
    if memory is None:
        return max(units, key=lambda u: u[1])
    return min(units, key=lambda u: abs(u[1] - memory))


def hottest_pipe(launch: KernelLaunch) -> tuple[str, float] | None:
    pipes = [(name, v) for name, metric in PIPES if (v := launch.value(metric)) is not None]
    return max(pipes, key=lambda p: p[1], default=None)


def verdict(launch: KernelLaunch, thresholds: Thresholds = Thresholds(),
            bench_ms: float | None = None, matrix_math: bool | None = None) -> BottleneckVerdict:
    """The bottleneck of one launch, the evidence for it, one fix, how sure, and side findings.
    `matrix_math`: whether the workload's FLOPs per byte make it a matrix product (the roofline,
    cockpit/analysis/roofline.py); None when unknown. Tensor cores are suggested only to one."""
    t = thresholds
    compute, memory, waves = launch.value(COMPUTE), launch.value(MEMORY), launch.value(WAVES)
    stalls = top_stalls(launch)
    used = evidence(launch, (
        COMPUTE, MEMORY, WAVES, DURATION, *(m for _, m in (*MEMORY_UNITS, *PIPES, *LIMITS)), THEORETICAL,
        ACHIEVED, *CONFLICTS, *WAVEFRONTS, BYTES_PER_SECTOR, REGISTERS, SHARED_MEM, "launch__grid_size",
        "launch__sm_count", *(STALL_METRIC.format(reason) for reason, _ in stalls)))
    if bench_ms is not None:
        used["bench_ms"] = Measure(bench_ms, "ms")

    duration = launch.duration_ns
    overhead = _launch_overhead(duration, bench_ms, t)
    occupancy = _occupancy_problems(launch, t)
    c, m = compute or 0.0, memory or 0.0
    top = max(c, m)
    stall = f"; top stall {stalls[0][0]} {stalls[0][1]:.2f}" if stalls else ""
    kind: Bottleneck
    confidence: Confidence
    if waves is not None and waves < t.waves and top < t.latency_pct:
        kind, confidence, why = "small-grid", "high", f"ncu's Small Grid rule: {waves:.2f} waves per SM"
    elif overhead:
        kind, (why, confidence) = "launch-overhead", overhead
    elif top >= t.bound_pct:
        kind = "memory-bound" if m > c else "compute-bound"
        confidence, why = "high", f"{top:.1f} % of peak is at the roof (>= {t.bound_pct:g} %)"
    elif top < t.latency_pct:
        kind = "occupancy" if occupancy else "latency"
        why = (f"compute and memory both under {t.latency_pct:g} % of peak: warps wait instead of work"
               + ("; more warps hide that only if the stalls are latency" if occupancy else "") + stall)
        confidence = "medium" if stalls else "low"
        if not stalls:
            why += "; no warp-stall metrics to say which latency (add --section WarpStateStats)"
    elif abs(c - m) >= t.lead_points:
        kind = "memory-bound" if m > c else "compute-bound"
        confidence, why = "medium", (f"{top:.1f} % of peak leads by {abs(c - m):.1f} points but is "
                                     f"under {t.bound_pct:g} %: leaning, not at the roof")
    else:
        kind, confidence = "balanced", "medium"
        why = f"compute and memory within {t.lead_points:g} points of each other: both must shrink"
    if (compute is None or memory is None) and kind not in ("small-grid", "launch-overhead"):
        confidence, why = "low", "no Speed Of Light metrics (add --section SpeedOfLight); " + why

    return BottleneckVerdict(kind, _headline(kind, launch, c, m, waves, overhead, occupancy, stalls),
                   used, _recommend(kind, launch, t, duration, stalls, matrix_math),
                   confidence, why, _notes(kind, launch, t, overhead, occupancy, stalls))


def _launch_overhead(duration: float | None, bench_ms: float | None,
                     t: Thresholds) -> tuple[str, Confidence] | None:
    if duration is None:
        return None
    if bench_ms is not None and bench_ms > 0 and duration < t.launch_fraction * bench_ms * 1e6:
        # ncu locks clocks to base, so its duration is if anything longer than the benchmark's
        return (f"the kernel runs {fmt_ns(duration)} of the {fmt_ns(bench_ms * 1e6)} the benchmark "
                "measures per call", "high")
    if duration < t.launch_floor_ns:
        return f"the kernel runs {fmt_ns(duration)}, under ~{fmt_ns(t.launch_floor_ns)}", "medium"
    return None


def _occupancy_problems(launch: KernelLaunch, t: Thresholds) -> tuple[str, ...]:
    """Too few warps fit (theoretical occupancy, with its limiter) or stay (achieved vs theoretical)."""
    theo, achieved = launch.value(THEORETICAL), launch.value(ACHIEVED)
    found: list[str] = []
    if theo is not None and theo < t.occupancy_pct:
        limits, limiters = occupancy_limits(launch), occupancy_limiters(launch, t)
        regs, smem = launch.value(REGISTERS), launch.value(SHARED_MEM)
        detail = [f"{fmt(limits[limiters[0]])} block(s)/SM"] if limiters else []
        if "registers" in limiters and regs:
            detail.append(f"{fmt(regs)} registers/thread")
        if "shared memory" in limiters and smem:
            detail.append(f"{smem / 1024:.0f} KiB shared/block")
        others = ", ".join(f"{n} {fmt(v)}" for n, v in limits.items() if n not in limiters)
        if others:
            detail.append(f"others allow {others}")
        found.append(f"theoretical occupancy {theo:.1f} % of max warps, limited by "
                     f"{' and '.join(limiters) or 'an unreported limit'} ({'; '.join(detail)})")
    if theo and achieved is not None and achieved < t.achieved_ratio * theo:
        found.append(f"achieved occupancy {achieved:.1f} % is {achieved / theo:.0%} of theoretical "
                     f"{theo:.1f} %: warps are not resident all the time (uneven blocks, a partial last "
                     "wave, or warps that exit early)")
    return tuple(found)


def _headline(kind: Bottleneck, launch: KernelLaunch, c: float, m: float, waves: float | None,
              overhead: tuple[str, Confidence] | None, occupancy: tuple[str, ...],
              stalls: tuple[tuple[str, float], ...]) -> str:
    """What the numbers say, in one line; the bottleneck itself is the BottleneckVerdict's own field."""
    sol = f"compute {c:.1f} %, memory {m:.1f} % of peak"
    if kind == "small-grid":
        blocks = launch.value("launch__grid_size") or float(launch.grid[0] * launch.grid[1] * launch.grid[2])
        sms = launch.value("launch__sm_count")
        where = f" on {fmt(sms)} SMs" if sms else ""
        return f"{fmt(blocks)} block(s) make {waves or 0:.2f} waves{where} ({sol})"
    if kind == "launch-overhead":
        return f"{overhead[0] if overhead else 'a short kernel'} ({sol})"
    if kind == "memory-bound":
        unit = memory_unit(launch)
        return f"memory {m:.1f} % vs compute {c:.1f} % of peak" + (
            f", {unit[0]} leads at {unit[1]:.1f} %" if unit else "")
    if kind == "compute-bound":
        pipe = hottest_pipe(launch)
        return f"compute {c:.1f} % vs memory {m:.1f} % of peak" + (
            f", {pipe[0]} pipe hottest at {pipe[1]:.1f} %" if pipe else "")
    if kind == "occupancy":
        return f"{sol}; {occupancy[0]}"
    if kind == "latency":
        top = f"; warps stall most on {stalls[0][0]} ({stalls[0][1]:.2f} cycles/issue)" if stalls else ""
        return sol + top
    return f"{sol}, neither side leading"


def _recommend(kind: Bottleneck, launch: KernelLaunch, t: Thresholds, duration: float | None,
               stalls: tuple[tuple[str, float], ...], matrix_math: bool | None = None) -> str:
    if kind in ("small-grid", "launch-overhead"):
        if kind == "launch-overhead" or (duration is not None and duration < t.launch_floor_ns):
            return ("fuse launches: merge this kernel into its producer or consumer (or batch the calls / "
                    "capture them in a CUDA graph) so the launch cost is paid once for more work")
        return ("launch more blocks: split the work finer (smaller tiles, split-K or split the sequence) "
                "so the grid fills every SM at least once")
    ratio = _padding_first(kind, launch, t, stalls)
    if ratio is not None:
        return (f"pad shared memory against bank conflicts ({ratio:.0%} of shared wavefronts conflict): "
                "one extra element per row, or an XOR swizzle of the column index")
    if kind == "memory-bound":
        return _memory_fix(launch, memory_unit(launch), stalls)
    if kind == "compute-bound":
        return _compute_fix(launch, matrix_math)
    if kind == "occupancy":
        return _occupancy_fix(launch, t)
    if stalls:
        return STALL_FIXES.get(stalls[0][0], STALL_FIXES["misc"])
    return "profile with --section WarpStateStats to see why warps stall, then fix the top reason"


def _padding_first(kind: Bottleneck, launch: KernelLaunch, t: Thresholds,
                   stalls: tuple[tuple[str, float], ...]) -> float | None:
    """The bank-conflict ratio when conflicts are common and shared memory is on the critical path."""
    ratio, unit = bank_conflict_ratio(launch), memory_unit(launch)
    on_path = (kind == "memory-bound" and unit is not None and unit[0] == "L1") or (
        bool(stalls) and stalls[0][0] in ("short_scoreboard", "mio_throttle"))
    return ratio if on_path and ratio is not None and ratio >= t.bank_conflicts else None


def _memory_fix(launch: KernelLaunch, unit: tuple[str, float] | None,
                stalls: tuple[tuple[str, float], ...]) -> str:
    if unit is not None and unit[0] == "DRAM":
        used = launch.value(BYTES_PER_SECTOR)
        if used is not None and 0 < used < 16:
            return (f"coalesce global loads: only {used:.0f} of 32 bytes of each fetched sector are used; "
                    "make consecutive threads read consecutive addresses")
        if stalls and stalls[0][0] == "lg_throttle":
            return STALL_FIXES["lg_throttle"]
        return (f"move fewer bytes: DRAM runs at {unit[1]:.0f} % of peak with whole sectors used, so "
                "only less traffic helps: fuse this kernel with its producer or consumer, or store a "
                "narrower type")
    if unit is not None and unit[0] == "L2":
        return ("larger tiles, visited in an order that reuses them while they sit in L2 (block "
                "swizzling): more math per byte crossing L2")
    return ("larger tiles: let each byte brought into shared memory / L1 feed more math (bigger tiles per "
            "block, fragments kept in registers across the loop) to cut L1 wavefronts")


def _compute_fix(launch: KernelLaunch, matrix_math: bool | None = None) -> str:
    pipe = hottest_pipe(launch)
    tensor = launch.value(PIPES[0][1])
    name = pipe[0] if pipe else ""
    if name in ("FMA", "ALU") and (tensor is None or tensor < 5):
        if matrix_math:
            return "use tensor cores (mma.sync / wgmma / WMMA) for the matrix math now on the FMA/ALU pipes"
        return (f"fewer instructions per element on the {name} pipe: the kernel does no matrix product "
                "for tensor cores" + ("" if matrix_math is False else " that the cockpit knows of (no "
                "FLOP and byte counts)") + ", so fold the scale and shift into one FMA, keep index math "
                "out of the loop, load 16 bytes per thread per access, and reduce in registers before "
                "shuffling")
    if name == "tensor":
        return ("keep the tensor pipe fed: overlap the non-MMA work (softmax, epilogue) with the next "
                "MMAs (ping-pong warp groups, async wgmma) instead of running them in turn")
    if name == "XU":
        return ("cheaper transcendentals: exp2f with log2(e) folded into the scale, a reciprocal "
                "multiply instead of each division")
    if name == "LSU":
        return STALL_FIXES["lg_throttle"]
    return "cut instructions on the hottest pipe (ncu's Compute Workload Analysis names it)"


def _occupancy_fix(launch: KernelLaunch, t: Thresholds) -> str:
    theo = launch.value(THEORETICAL)
    if theo is None or theo >= t.occupancy_pct:
        return ("even out the blocks: launch more, smaller blocks so the last wave is full and no SM "
                "waits on a long block")
    limiters = occupancy_limiters(launch, t)
    limits = occupancy_limits(launch)
    blocks = int(limits[limiters[0]]) if limiters else 0
    regs, smem = launch.value(REGISTERS), launch.value(SHARED_MEM)
    threads = launch.block[0] * launch.block[1] * launch.block[2]
    regs_s = f" (now {fmt(regs)}/thread)" if regs else ""
    smem_s = f" (now {smem / 1024:.0f} KiB/block)" if smem else ""
    if "registers" in limiters and "shared memory" in limiters:
        return (f"reduce registers{regs_s} and shared memory{smem_s} together to fit {blocks + 1} blocks/SM: "
                "either alone leaves occupancy where it is")
    if "registers" in limiters:
        return (f"reduce registers{regs_s} to fit {blocks + 1} blocks/SM: __launch_bounds__({threads}, "
                f"{blocks + 1}) or fewer live values per thread")
    if "shared memory" in limiters:
        return (f"reduce shared memory{smem_s} to fit {blocks + 1} blocks/SM: fewer pipeline stages "
                "or smaller tiles")
    if "warps" in limiters:
        return f"pick a block size whose warps divide the SM's warp slots evenly ({threads} threads now)"
    return f"use bigger blocks: the per-SM block limit caps occupancy at {threads} threads per block"


def _notes(kind: Bottleneck, launch: KernelLaunch, t: Thresholds,
           overhead: tuple[str, Confidence] | None, occupancy: tuple[str, ...],
           stalls: tuple[tuple[str, float], ...]) -> tuple[str, ...]:
    notes: list[str] = []
    if overhead and kind != "launch-overhead":
        notes.append(f"launch overhead matters too: {overhead[0]}")
    if kind != "small-grid":  # a grid under one wave explains its own occupancy
        notes.extend(occupancy[1:] if kind == "occupancy" else occupancy)
    notes.append(stall_note(stalls))
    ratio = bank_conflict_ratio(launch)
    if ratio is not None and ratio >= t.bank_conflicts and _padding_first(kind, launch, t, stalls) is None:
        notes.append(f"shared-memory bank conflicts: {ratio:.0%} of shared-memory wavefronts")
    unit = memory_unit(launch)
    if kind == "memory-bound" and unit is not None:
        for name, metric in MEMORY_UNITS:
            v = launch.value(metric)
            if name != unit[0] and v is not None and v >= t.bound_pct:
                notes.append(f"{name} is near its peak too ({v:.1f} %)")
    if launch.value(THEORETICAL) is None:
        notes.append("no occupancy metrics in this report (add --section Occupancy)")
    return tuple(notes)
