"""What one kernel launch's ncu metrics say, read one question at a time: the memory unit that
sets the memory SOL, the hottest pipe, the resource that limits occupancy, the bank-conflict
ratio, the top warp stalls; and the thresholds (ncu's own) the bottleneck verdict judges them by.
The verdict is bottleneck.py's; the fix it recommends, bottleneck_fix.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cockpit.analysis.ncu import KernelLaunch
from cockpit.analysis.ncu_metrics import (
    _STALL,
    CONFLICTS,
    LIMITS,
    MEMORY,
    MEMORY_UNITS,
    PIPES,
    THEORETICAL,
    WAVEFRONTS,
)

Bottleneck = Literal["memory-bound", "compute-bound", "latency", "occupancy", "launch-overhead",
                     "small-grid", "balanced"]


@dataclass(frozen=True)
class NcuThresholds:
    bound_pct: float = 80.0        # ncu: above this, compute or memory is at the roof
    latency_pct: float = 60.0      # ncu: both below this points at latency
    lead_points: float = 10.0      # ncu: between the two, one side leads by this many points
    waves: float = 1.0             # ncu: fewer waves than this is a small grid
    occupancy_pct: float = 80.0    # theoretical occupancy below this % of the maximum is limited
    achieved_ratio: float = 0.8    # achieved below this fraction of theoretical is "far below"
    bank_conflicts: float = 0.10   # conflicts per shared-memory wavefront worth a fix
    launch_fraction: float = 0.5   # kernel time below this fraction of the benchmark's per call
    launch_floor_ns: float = 10_000.0  # a kernel shorter than this is dominated by its launch


NCU_THRESHOLDS = NcuThresholds()
"""ncu's own lines: what a verdict judges by when its caller passes none."""


def fmt(value: float) -> str:
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.1f}" if abs(value) >= 1000 else f"{value:.4g}"


def fmt_ns(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} µs"


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


def occupancy_limiters(launch: KernelLaunch, t: NcuThresholds = NcuThresholds()) -> tuple[str, ...]:
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
