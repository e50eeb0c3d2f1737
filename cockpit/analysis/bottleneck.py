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

The ONE fix to try first is bottleneck_fix.py's; the metrics read one question at a time
(and the thresholds), launch_reading.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cockpit.analysis.bottleneck_fix import padding_first, recommend
from cockpit.analysis.launch_reading import (
    NCU_THRESHOLDS,
    Bottleneck,
    NcuThresholds,
    bank_conflict_ratio,
    fmt,
    fmt_ns,
    hottest_pipe,
    memory_unit,
    occupancy_limiters,
    occupancy_limits,
    stall_note,
    top_stalls,
)
from cockpit.analysis.ncu import KernelLaunch
from cockpit.analysis.ncu_metrics import (
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
    STALL_METRIC,
    THEORETICAL,
    WAVEFRONTS,
    WAVES,
)

__all__ = ["Bottleneck", "BottleneckVerdict", "Measure", "NcuThresholds", "bank_conflict_ratio", "evidence",
           "hottest_pipe", "memory_unit", "occupancy_limiters", "occupancy_limits", "top_stalls", "verdict"]

Confidence = Literal["high", "medium", "low"]


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


def evidence(launch: KernelLaunch, names: tuple[str, ...]) -> dict[str, Measure]:
    """Each named metric the launch has (under the name ncu used), with its unit."""
    found = (launch.find(name) for name in names)
    return {f[0]: Measure(f[1], launch.unit(f[0])) for f in found if f is not None}


def verdict(launch: KernelLaunch, thresholds: NcuThresholds = NCU_THRESHOLDS,
            bench_ms: float | None = None, matrix_math: bool | None = None) -> BottleneckVerdict:
    """The bottleneck of one launch, the evidence for it, one fix, how sure, and side findings.
    `matrix_math`: whether the workload's FLOPs per byte make it a matrix product (the roofline,
    cockpit/analysis/roofline.py); None when unknown. Tensor cores are suggested only to one."""
    t = thresholds
    compute, memory, waves = launch.value(COMPUTE), launch.value(MEMORY), launch.value(WAVES)
    stalls = top_stalls(launch)
    used = _verdict_evidence(launch, stalls, bench_ms)
    duration = launch.duration_ns
    overhead = _launch_overhead(duration, bench_ms, t)
    occupancy = _occupancy_problems(launch, t)
    c, m = compute or 0.0, memory or 0.0
    kind, confidence, why = _classify(c, m, waves, overhead, occupancy, stalls, t)
    if (compute is None or memory is None) and kind not in ("small-grid", "launch-overhead"):
        confidence, why = "low", "no Speed Of Light metrics (add --section SpeedOfLight); " + why

    return BottleneckVerdict(kind, _headline(kind, launch, c, m, waves, overhead, occupancy, stalls),
                   used, recommend(kind, launch, t, duration, stalls, matrix_math),
                   confidence, why, _notes(kind, launch, t, overhead, occupancy, stalls))


def _verdict_evidence(launch: KernelLaunch, stalls: tuple[tuple[str, float], ...],
                      bench_ms: float | None) -> dict[str, Measure]:
    """Every metric the verdict reads that the launch has, the top stalls' among them, and the
    benchmark's time per call when there is one."""
    used = evidence(launch, (
        COMPUTE, MEMORY, WAVES, DURATION, *(m for _, m in (*MEMORY_UNITS, *PIPES, *LIMITS)), THEORETICAL,
        ACHIEVED, *CONFLICTS, *WAVEFRONTS, BYTES_PER_SECTOR, REGISTERS, SHARED_MEM, "launch__grid_size",
        "launch__sm_count", *(STALL_METRIC.format(reason) for reason, _ in stalls)))
    if bench_ms is not None:
        used["bench_ms"] = Measure(bench_ms, "ms")
    return used


def _classify(c: float, m: float, waves: float | None, overhead: tuple[str, Confidence] | None,
              occupancy: tuple[str, ...], stalls: tuple[tuple[str, float], ...],
              t: NcuThresholds) -> tuple[Bottleneck, Confidence, str]:
    """The bottleneck, how sure, and why, by the module's first-match rules on the compute (c)
    and memory (m) SOL."""
    top = max(c, m)
    if waves is not None and waves < t.waves and top < t.latency_pct:
        return "small-grid", "high", f"ncu's Small Grid rule: {waves:.2f} waves per SM"
    if overhead:
        return "launch-overhead", overhead[1], overhead[0]
    if top >= t.bound_pct:
        return _leading_side(c, m), "high", f"{top:.1f} % of peak is at the roof (>= {t.bound_pct:g} %)"
    if top < t.latency_pct:
        return _latency(occupancy, stalls, t)
    if abs(c - m) >= t.lead_points:
        return _leading_side(c, m), "medium", (f"{top:.1f} % of peak leads by {abs(c - m):.1f} points but is "
                                               f"under {t.bound_pct:g} %: leaning, not at the roof")
    return "balanced", "medium", (f"compute and memory within {t.lead_points:g} points of each other: "
                                  "both must shrink")


def _leading_side(c: float, m: float) -> Bottleneck:
    """Memory- or compute-bound, whichever SOL is higher (compute on a tie)."""
    return "memory-bound" if m > c else "compute-bound"


def _latency(occupancy: tuple[str, ...], stalls: tuple[tuple[str, float], ...],
             t: NcuThresholds) -> tuple[Bottleneck, Confidence, str]:
    """Both SOLs under the latency line: occupancy when too few warps fit or stay, else latency;
    only as sure as the warp-stall metrics let it be."""
    stall = f"; top stall {stalls[0][0]} {stalls[0][1]:.2f}" if stalls else ""
    why = (f"compute and memory both under {t.latency_pct:g} % of peak: warps wait instead of work"
           + ("; more warps hide that only if the stalls are latency" if occupancy else "") + stall)
    kind: Bottleneck = "occupancy" if occupancy else "latency"
    if stalls:
        return kind, "medium", why
    return kind, "low", why + "; no warp-stall metrics to say which latency (add --section WarpStateStats)"


def _launch_overhead(duration: float | None, bench_ms: float | None,
                     t: NcuThresholds) -> tuple[str, Confidence] | None:
    if duration is None:
        return None
    if bench_ms is not None and bench_ms > 0 and duration < t.launch_fraction * bench_ms * 1e6:
        # ncu locks clocks to base, so its duration is if anything longer than the benchmark's
        return (f"the kernel runs {fmt_ns(duration)} of the {fmt_ns(bench_ms * 1e6)} the benchmark "
                "measures per call", "high")
    if duration < t.launch_floor_ns:
        return f"the kernel runs {fmt_ns(duration)}, under ~{fmt_ns(t.launch_floor_ns)}", "medium"
    return None


def _occupancy_problems(launch: KernelLaunch, t: NcuThresholds) -> tuple[str, ...]:
    """Too few warps fit (theoretical occupancy, with its limiter) or stay (achieved vs theoretical)."""
    theo, achieved = launch.value(THEORETICAL), launch.value(ACHIEVED)
    found: list[str] = []
    if theo is not None and theo < t.occupancy_pct:
        found.append(_too_few_fit(launch, theo, t))
    if theo and achieved is not None and achieved < t.achieved_ratio * theo:
        found.append(f"achieved occupancy {achieved:.1f} % is {achieved / theo:.0%} of theoretical "
                     f"{theo:.1f} %: warps are not resident all the time (uneven blocks, a partial last "
                     "wave, or warps that exit early)")
    return tuple(found)


def _too_few_fit(launch: KernelLaunch, theo: float, t: NcuThresholds) -> str:
    """The theoretical occupancy, the resource(s) that limit it and by how much, and what the
    other resources would allow."""
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
    return (f"theoretical occupancy {theo:.1f} % of max warps, limited by "
            f"{' and '.join(limiters) or 'an unreported limit'} ({'; '.join(detail)})")


def _headline(kind: Bottleneck, launch: KernelLaunch, c: float, m: float, waves: float | None,
              overhead: tuple[str, Confidence] | None, occupancy: tuple[str, ...],
              stalls: tuple[tuple[str, float], ...]) -> str:
    """What the numbers say, in one line; the bottleneck itself is the BottleneckVerdict's own field."""
    sol = f"compute {c:.1f} %, memory {m:.1f} % of peak"
    if kind == "small-grid":
        return _small_grid_headline(launch, waves, sol)
    if kind == "launch-overhead":
        return f"{overhead[0] if overhead else 'a short kernel'} ({sol})"
    if kind in ("memory-bound", "compute-bound"):
        return _bound_headline(kind, launch, c, m)
    if kind == "occupancy":
        return f"{sol}; {occupancy[0]}"
    if kind == "latency":
        top = f"; warps stall most on {stalls[0][0]} ({stalls[0][1]:.2f} cycles/issue)" if stalls else ""
        return sol + top
    return f"{sol}, neither side leading"


def _bound_headline(kind: Bottleneck, launch: KernelLaunch, c: float, m: float) -> str:
    """The side at (or leaning on) its roof first, with the memory unit or the pipe that leads it."""
    if kind == "memory-bound":
        unit = memory_unit(launch)
        return f"memory {m:.1f} % vs compute {c:.1f} % of peak" + (
            f", {unit[0]} leads at {unit[1]:.1f} %" if unit else "")
    pipe = hottest_pipe(launch)
    return f"compute {c:.1f} % vs memory {m:.1f} % of peak" + (
        f", {pipe[0]} pipe hottest at {pipe[1]:.1f} %" if pipe else "")


def _small_grid_headline(launch: KernelLaunch, waves: float | None, sol: str) -> str:
    """How many blocks the grid has and how few waves they make, on how many SMs."""
    blocks = launch.value("launch__grid_size") or float(launch.grid[0] * launch.grid[1] * launch.grid[2])
    sms = launch.value("launch__sm_count")
    where = f" on {fmt(sms)} SMs" if sms else ""
    return f"{fmt(blocks)} block(s) make {waves or 0:.2f} waves{where} ({sol})"


def _notes(kind: Bottleneck, launch: KernelLaunch, t: NcuThresholds,
           overhead: tuple[str, Confidence] | None, occupancy: tuple[str, ...],
           stalls: tuple[tuple[str, float], ...]) -> tuple[str, ...]:
    notes: list[str] = []
    if overhead and kind != "launch-overhead":
        notes.append(f"launch overhead matters too: {overhead[0]}")
    if kind != "small-grid":  # a grid under one wave explains its own occupancy
        notes.extend(occupancy[1:] if kind == "occupancy" else occupancy)
    notes.append(stall_note(stalls))
    ratio = bank_conflict_ratio(launch)
    if ratio is not None and ratio >= t.bank_conflicts and padding_first(kind, launch, t, stalls) is None:
        notes.append(f"shared-memory bank conflicts: {ratio:.0%} of shared-memory wavefronts")
    if kind == "memory-bound":
        notes.extend(_also_near_peak(launch, t))
    if launch.value(THEORETICAL) is None:
        notes.append("no occupancy metrics in this report (add --section Occupancy)")
    return tuple(notes)


def _also_near_peak(launch: KernelLaunch, t: NcuThresholds) -> list[str]:
    """The memory units other than the one setting the memory SOL that are at their roof too:
    shrinking one unit's traffic alone will not lift a memory-bound kernel."""
    unit = memory_unit(launch)
    if unit is None:
        return []
    return [f"{name} is near its peak too ({v:.1f} %)" for name, metric in MEMORY_UNITS
            if name != unit[0] and (v := launch.value(metric)) is not None and v >= t.bound_pct]
