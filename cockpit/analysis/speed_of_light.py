"""Times no GPU can reach: a call faster than its bytes can move through the memory system, or its
FLOPs through the tensor cores, is a cached or skipped result, never a speedup.

From the workload's own byte and FLOP counts (the least one call must move and compute) and the
card's datasheet peaks (cockpit/hardware/peaks.py). A margin leaves room for what the byte model
does not count: L2 serves reads at about twice HBM's rate on these cards, and the bench rotates
inputs past L2, so a call that reads as more than twice the HBM peak did not move its bytes; the
FLOP peaks are dense datasheet figures at the boost clock, which a kernel does not pass by 10 %.
Measured on an H100: a candidate that cached its result per shape read 0.0008 ms for 512 MB,
702,407 GB/s, "20,967 % of the HBM peak".
"""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.hardware.peaks import Peak

BANDWIDTH_MARGIN = 2.0
"""A call may read as up to this many times the HBM peak (caches the byte model does not count)."""
COMPUTE_MARGIN = 1.1
"""A call may read as up to this many times the dense tensor (or FP32) peak of its dtype."""


@dataclass(frozen=True)
class Impossible:
    """One implementation's time at one config that the card cannot reach."""

    impl: str
    config: str
    ms: float
    times: float
    """How many times faster than the peak allows (the peak itself, without the margin)."""
    limit: str
    """What it would have to beat: "512 MB can move at 3.35 TB/s"."""

    def line(self, label: str) -> str:
        if self.ms <= 0:  # the events read no time at all: no work reached the GPU
            return (f"{label}: 0 ms at {self.config}, where {self.limit} takes {self.floor_ms:.4g} ms: "
                    "a cached or skipped result?")
        return (f"{label}: {self.ms:.4g} ms at {self.config} is about {self.times:.0f}x faster than "
                f"{self.limit}: a cached or skipped result?")

    @property
    def floor_ms(self) -> float:
        return self.ms * self.times if self.ms > 0 else self.times


@dataclass(frozen=True)
class Floor:
    """The least time one call can take on a card, at its peak (no margin), and what sets it."""

    ms: float
    limit: str
    margin: float


def fastest(peak: Peak, nbytes: float | None, flops: float | None, dtype: str | None) -> Floor | None:
    """The tighter of the memory floor and the compute floor; None when neither is known."""
    floors: list[Floor] = []
    if nbytes and peak.memory_gbps:
        floors.append(Floor(nbytes / (peak.memory_gbps * 1e9) * 1e3,
                            f"{_bytes(nbytes)} can move at {peak.memory_gbps / 1000:.3g} TB/s",
                            BANDWIDTH_MARGIN))
    top = peak.tflops_for(dtype)
    if flops and top:
        floors.append(Floor(flops / (top * 1e12) * 1e3,
                            f"{flops / 1e9:.3g} GFLOP can run at {top:.4g} TFLOP/s ({dtype})",
                            COMPUTE_MARGIN))
    return max(floors, key=lambda f: f.ms / f.margin) if floors else None


def impossible(impl: str, config: str, ms: float, peak: Peak | None, nbytes: float | None,
               flops: float | None, dtype: str | None) -> Impossible | None:
    """The refusal for this time, or None when the card could have done it (or its peak is unknown)."""
    if peak is None:
        return None
    floor = fastest(peak, nbytes, flops, dtype)
    if floor is None or ms * floor.margin >= floor.ms:
        return None
    # `times` of a zero time is the floor itself (its line says 0 ms): no ratio to a zero
    return Impossible(impl, config, ms, floor.ms / ms if ms > 0 else floor.ms, floor.limit)


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"
