"""What a speedup means and what to do next: the seeds' profiling decision tree. A speedup whose
interval reaches 1.0 is PARITY, the same as the baseline, whichever side of 1.0 its middle fell on:
the measurement cannot tell them apart, so no word may say ahead or behind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["CRITICAL", "HIGH", "PARITY", "MEDIUM", "SUCCESS"]

LAUNCH_BOUND_MS = 0.010  # below ~10 µs per call, launch overhead dominates the kernel itself


@dataclass(frozen=True)
class SpeedupThresholds:
    critical: float = 0.5
    high: float = 1.0
    medium: float = 1.5


@dataclass(frozen=True)
class Decision:
    speedup: float
    level: Level
    next_step: str
    tool: str
    profile_first: bool
    kernel_ms: float | None = None
    launch_bound: bool = False


NEXT_STEP: dict[Level, tuple[str, str]] = {
    "CRITICAL": ("stop changing code: profile with ncu first (cockpit gate profile), fix the one "
                 "biggest bottleneck it shows, then measure again", "ncu"),
    "HIGH": ("slower than PyTorch but in reach: profile, then apply ONE fix and re-measure "
             "(keep it only if it is >= 20 % faster)", "ncu"),
    "PARITY": ("the same as PyTorch within the noise: profile for the bottleneck that would put it "
               "ahead, then apply ONE fix and re-measure", "ncu"),
    "MEDIUM": ("faster than PyTorch: check correctness on every config and write it down, then "
               "profile for the next bottleneck", "ncu"),
    "SUCCESS": ("well ahead of PyTorch: keep it (commit), record the result, then profile to find "
                "the next bottleneck", "ncu"),
}


URGENCY: dict[str, str] = {
    "CRITICAL": "urgent: profile before changing code",
    "HIGH": "behind the baseline: one fix at a time",
    "PARITY": "the same as the baseline",
    "MEDIUM": "ahead of the baseline",
    "SUCCESS": "well ahead of the baseline",
}
"""What a level asks of the engineer, in words of urgency: "HIGH" alone reads as a grade of speed."""


def same_as_baseline(interval: tuple[float, float] | None) -> bool:
    """The speedup's interval reaches 1.0: it cannot say ahead or behind (no interval: it can)."""
    return interval is not None and interval[0] <= 1.0 <= interval[1]


def classify(speedup: float, thresholds: SpeedupThresholds = SpeedupThresholds(),
             interval: tuple[float, float] | None = None) -> Level:
    """The speedup's class; PARITY wherever its interval reaches 1.0."""
    if same_as_baseline(interval):
        return "PARITY"
    if speedup < thresholds.critical:
        return "CRITICAL"
    if speedup < thresholds.high:
        return "HIGH"
    if speedup < thresholds.medium:
        return "MEDIUM"
    return "SUCCESS"


def class_words(level: str | None, interval: tuple[float, float] | None = None) -> str:
    """What a journaled level asks of the engineer, read with the speedup's interval: a bench that
    journaled MEDIUM (or HIGH) for 1.00x [0.99, 1.01], before PARITY was a class, reads as the same
    as the baseline. An unknown level reads as itself; no level, as nothing."""
    if not level:
        return ""
    return URGENCY["PARITY"] if same_as_baseline(interval) else URGENCY.get(level, level)


def decide(speedup: float, kernel_ms: float | None = None,
           thresholds: SpeedupThresholds = SpeedupThresholds(),
           interval: tuple[float, float] | None = None) -> Decision:
    """Classification, the next step and the tool for it; a kernel under ~10 µs is launch-bound."""
    if speedup <= 0 or speedup != speedup:
        raise ValueError(f"speedup must be a positive number, not {speedup}")
    level = classify(speedup, thresholds, interval)
    step, tool = NEXT_STEP[level]
    launch_bound = False
    if kernel_ms is not None and kernel_ms < LAUNCH_BOUND_MS:
        launch_bound = True
        step = (f"the kernel takes {kernel_ms * 1000:.1f} µs, under ~10 µs, so launch overhead "
                "dominates: use larger tiles or fuse kernels before tuning the inner loop "
                "(nsys shows the gaps between launches)")
        tool = "nsys"
    return Decision(speedup, level, step, tool, level == "CRITICAL", kernel_ms, launch_bound)
