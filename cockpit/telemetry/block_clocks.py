"""The clock each implementation ran at, and whether ours and a baseline ran at comparable ones.

The bench times each implementation in blocks (after settling at its own clock) and records each
timed block's span; the NVML samples that fall inside an implementation's blocks are the clocks
it ran at. Per config, ours' median SM clock is compared with the baseline's; the comparison is
the median of those per-config differences, so a config mix that favours one side (ours spends
longer in the big, power-hungry configs) does not skew it.

A difference beyond the threshold is material. It is explained, and shown rather than suspect,
when the side that ran slower sat at its power cap in most of its samples where it was slower:
on a power-capped card each implementation settles at the clock its own power draw allows, as it
does in real use. Unexplained, it means the two were not measured under the same conditions.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cockpit.hardware.clock_events import CLOCK_EVENT_SW_POWER_CAP
from cockpit.telemetry.sample import GpuSample

MIN_CONFIGS = 3
"""Fewer configs with samples of both sides than this: too little to compare."""


@dataclass(frozen=True)
class Block:
    """One timed block of one implementation on one config, in wall-clock seconds."""

    config: str
    impl: str
    t0: float
    t1: float


@dataclass(frozen=True)
class ImplClock:
    """The SM clock of the samples inside one implementation's timed blocks, over the whole run."""

    impl: str
    samples: int
    median_mhz: float | None
    power_cap_fraction: float | None
    """The share of those samples taken while the power cap held the clock."""

    def as_json(self) -> dict[str, Any]:
        return {"samples": self.samples, "median_mhz": self.median_mhz,
                "power_cap_fraction": None if self.power_cap_fraction is None
                else round(self.power_cap_fraction, 3)}


@dataclass(frozen=True)
class ClockComparison:
    ours: str
    baseline: str
    configs: int
    """Configs with samples of both sides."""
    difference: float | None
    """Median over those configs of ours' clock / the baseline's − 1 (+0.05: ours ran 5 % faster)."""
    ours_mhz: float | None
    baseline_mhz: float | None
    material: bool
    explained_by_cap: bool
    slower_cap_fraction: float | None = None
    """Where the slower side was slower: the share of its samples at the power cap."""

    @property
    def comparable(self) -> bool:
        return not self.material or self.explained_by_cap

    def line(self, threshold: float, base: str) -> str:
        """The comparison in words, the baseline shown as `base` (its label)."""
        if self.difference is None or self.configs < MIN_CONFIGS:
            return (f"clocks vs {base} not compared: {self.configs} configs had samples of both "
                    f"(needs {MIN_CONFIGS})")
        mhz = f"{_mhz(self.ours_mhz)} vs {_mhz(self.baseline_mhz)} MHz"
        head = (f"ours ran at {self.difference:+.1%} of {base}'s SM clock ({mhz}, median over "
                f"{self.configs} configs)")
        if not self.material:
            return f"{head}: comparable (within {threshold:.0%})"
        slower = base if self.difference > 0 else "ours"
        if self.explained_by_cap:
            return (f"{head}: {slower} sat at its power cap in {self.slower_cap_fraction:.0%} of its "
                    "samples there, each at its own capped clock (shown, not suspect)")
        return f"{head}: over {threshold:.0%}, and the power cap does not explain it"

    def as_json(self) -> dict[str, Any]:
        return {"ours": self.ours, "baseline": self.baseline, "configs": self.configs,
                "difference": None if self.difference is None else round(self.difference, 4),
                "ours_mhz": self.ours_mhz, "baseline_mhz": self.baseline_mhz,
                "material": self.material, "explained_by_cap": self.explained_by_cap,
                "slower_cap_fraction": None if self.slower_cap_fraction is None
                else round(self.slower_cap_fraction, 3)}


def _mhz(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}"


BlockSamples = dict[tuple[str, str], list[GpuSample]]
"""(config, implementation) → the samples taken inside its timed blocks."""


def samples_in_blocks(blocks: Iterable[Block], samples: Sequence[GpuSample]) -> BlockSamples:
    """The samples (with an SM clock) that fall inside each implementation's timed blocks."""
    ordered = sorted((s for s in samples if s.sm_clock_mhz is not None), key=lambda s: s.t)
    times = [s.t for s in ordered]
    inside: BlockSamples = {}
    for b in blocks:
        lo, hi = bisect.bisect_left(times, b.t0), bisect.bisect_right(times, b.t1)
        inside.setdefault((b.config, b.impl), []).extend(ordered[lo:hi])
    return inside


def _capped(samples: Sequence[GpuSample]) -> float | None:
    if not samples:
        return None
    return sum(1 for s in samples if (s.throttle_mask or 0) & CLOCK_EVENT_SW_POWER_CAP) / len(samples)


def _median(samples: Sequence[GpuSample]) -> float | None:
    return float(statistics.median(s.sm_clock_mhz or 0 for s in samples)) if samples else None


def impl_clocks(inside: BlockSamples) -> dict[str, ImplClock]:
    """Each implementation's clock over the whole run, in the order they first appear."""
    by_impl: dict[str, list[GpuSample]] = {}
    for (_, impl), samples in inside.items():
        by_impl.setdefault(impl, []).extend(samples)
    return {impl: ImplClock(impl, len(s), _median(s), _capped(s)) for impl, s in by_impl.items()}


def config_clocks(inside: BlockSamples) -> dict[str, dict[str, float]]:
    """config → implementation → the median SM clock of its blocks there (where it has samples)."""
    out: dict[str, dict[str, float]] = {}
    for (config, impl), samples in inside.items():
        median = _median(samples)
        if median is not None:
            out.setdefault(config, {})[impl] = median
    return out


def compare_clocks(inside: BlockSamples, baseline: str, threshold: float, cap_explains: bool = True,
                   ours: str = "ours") -> ClockComparison:
    """Ours against `baseline`: the median per-config clock difference, material beyond
    `threshold`, explained when the slower side sat at its power cap (if `cap_explains`)."""
    pairs = _config_pairs(inside, baseline, ours)
    clocks = impl_clocks({k: v for k, v in inside.items() if k[1] in (ours, baseline)})
    ours_mhz = clocks[ours].median_mhz if ours in clocks else None
    base_mhz = clocks[baseline].median_mhz if baseline in clocks else None
    if len(pairs) < MIN_CONFIGS:
        return ClockComparison(ours, baseline, len(pairs), None, ours_mhz, base_mhz, False, False)
    difference = statistics.median(d for _, _, d in pairs)
    if abs(difference) <= threshold:
        return ClockComparison(ours, baseline, len(pairs), difference, ours_mhz, base_mhz, False, False)
    capped = _capped(_slower_samples(pairs, difference, threshold))
    explained = cap_explains and capped is not None and capped >= 0.5
    return ClockComparison(ours, baseline, len(pairs), difference, ours_mhz, base_mhz, True, explained,
                           capped)


ClockPair = tuple[list[GpuSample], list[GpuSample], float]
"""One config's samples of ours and of the baseline, and how much faster ours clocked there."""


def _config_pairs(inside: BlockSamples, baseline: str, ours: str) -> list[ClockPair]:
    """Each config where both ours and the baseline have samples, with ours' median clock over
    the baseline's, less one."""
    pairs = []
    for (config, impl), mine in inside.items():
        theirs = inside.get((config, baseline), [])
        if impl == ours and mine and theirs:
            pairs.append((mine, theirs, (_median(mine) or 0) / (_median(theirs) or 1) - 1))
    return pairs


def _slower_samples(pairs: list[ClockPair], difference: float, threshold: float) -> list[GpuSample]:
    """The slower side's samples in the configs where it was materially slower: whether they sat
    at the power cap says if the cap explains the difference."""
    return [s for mine, theirs, d in pairs if abs(d) > threshold and (d > 0) == (difference > 0)
            for s in (theirs if difference > 0 else mine)]
