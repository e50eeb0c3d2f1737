"""Was one timed block clean? The rule the bench probe applies to every block as it times it, so a
block the card slowed is dropped and timed again instead of costing the whole run its verdict.

A block is the span in which one implementation's timed calls ran on one config (tens to hundreds
of milliseconds). The probe's NVML watch samples the card every 20 ms; the samples inside the
block, and the nearest one on each side (a 20 ms block may hold none), say what it ran at:

- a slowdown clock-event reason (SW or HW thermal, HW slowdown, HW power brake) the user did not
  tolerate, active in at least `reason_share` of those samples: dirty, named by that reason;
- an SM clock under `clock_fraction` of the run's busy clock, not explained by the power cap
  alone (at its cap each implementation runs at the clock its own draw allows, as in real use):
  dirty, "SM clock dip".

A dirty block is re-measured after a recovery wait that doubles each time (nvbench drops a sample
under 75 % of the default clock and re-measures after a recovery delay), within a budget per
config; a block that never gets clean leaves its cell marked unclean, for the verdict to name.

Stdlib only, like timing_method.py: the probes import it in the user's Python.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

SLOWDOWN_BITS: tuple[tuple[int, str], ...] = (
    (0x8, "HW slowdown"),
    (0x20, "SW thermal slowdown"),
    (0x40, "HW thermal slowdown"),
    (0x80, "HW power brake"),
)
"""NVML's clock-event bits that mean heat or hardware held the card back, with the words
cockpit/hardware/clock_events.py shows for them (written out: the probes import nothing of the
house; a test keeps the two in step)."""
POWER_CAP_BIT = 0x4
IDLE_BIT = 0x1
DIP = "SM clock dip"

CLOCK_FRACTION = 0.85
"""Under 85 % of the run's busy clock is a dip. On the recorded H100 benches the SW thermal dips
went to 1320–1417 MHz of 1980 (67–72 %); a heavy kernel at the H100's power cap runs at ~80 % of
max, which the power-cap exception covers."""
REASON_SHARE = 0.25
"""A slowdown in a quarter of a block's samples (one of the two to four a short block has) is
material."""
BUDGET = 8
"""Re-measures per config before its dirty blocks are given up as never clean: with the waits
below, at most ~6 s of waiting on one config."""
STREAK = 2
"""After this many configs in a row gave up, the next ones get one re-measure each until one ends
clean: a card that never recovers costs the run seconds, not minutes."""
FIRST_WAIT_S = 0.05
MAX_WAIT_S = 1.6
"""Recovery waits: 50 ms (nvbench's throttle recovery delay), doubling per re-measure, at most 1.6 s."""
REFERENCE_SAMPLES = 20
"""Busy samples the run's own clock needs before it replaces the card's max as the reference."""


@dataclass(frozen=True)
class BlockRules:
    """How blocks are judged: the dip fraction, the material share of a reason, the reasons the
    user tolerates (`[thresholds] tolerated_clock_events`), the re-measure budget and waits."""

    clock_fraction: float = CLOCK_FRACTION
    reason_share: float = REASON_SHARE
    tolerated: frozenset[str] = field(default_factory=frozenset)
    budget: int = BUDGET
    first_wait_s: float = FIRST_WAIT_S
    max_wait_s: float = MAX_WAIT_S

    def wait_s(self, attempt: int) -> float:
        """The recovery wait before re-measure number `attempt` (0-based)."""
        return min(self.max_wait_s, self.first_wait_s * 2.0 ** attempt)

    def as_json(self) -> dict[str, object]:
        return {"clock_fraction": self.clock_fraction, "reason_share": self.reason_share,
                "tolerated": sorted(self.tolerated), "budget": self.budget,
                "first_wait_s": self.first_wait_s, "max_wait_s": self.max_wait_s}


Sample = Mapping[str, float]
"""One NVML look, as the probe's watch records it: t, sm_clock, throttle, util (and more)."""


def around(samples: Sequence[Sample], t0: float, t1: float, reach_s: float = 0.25) -> list[Sample]:
    """The samples inside [t0, t1] and the nearest one on each side within `reach_s`, from samples
    ordered by time (the watch appends them so): a block shorter than the watch's period is judged
    by its neighbours."""
    lo = bisect.bisect_left(samples, t0, key=_time)
    hi = bisect.bisect_right(samples, t1, key=_time)
    before = [samples[lo - 1]] if lo > 0 and samples[lo - 1]["t"] >= t0 - reach_s else []
    after = [samples[hi]] if hi < len(samples) and samples[hi]["t"] <= t1 + reach_s else []
    return [*before, *samples[lo:hi], *after]


def _time(sample: Sample) -> float:
    return float(sample["t"])


def reference_clock(samples: Sequence[Sample], max_mhz: float | None) -> float | None:
    """The run's busy clock: the median SM clock of the busy samples so far (not idle), or the
    card's max until there are `REFERENCE_SAMPLES` of them."""
    busy = [float(s["sm_clock"]) for s in samples if _busy(s)]
    if len(busy) >= REFERENCE_SAMPLES:
        middle: float = statistics.median(busy)
        return middle
    return max_mhz


def block_fault(near: Sequence[Sample], reference_mhz: float | None, rules: BlockRules) -> str | None:
    """Why the block these samples surround is dirty (a slowdown's words, or "SM clock dip"), or
    None when it is clean or nothing was seen (an unwatched run is the window verdict's to say)."""
    if not near:
        return None
    for bit, word in SLOWDOWN_BITS:
        if word in rules.tolerated:
            continue
        hits = sum(1 for s in near if int(s.get("throttle", 0)) & bit)
        if hits and hits / len(near) >= rules.reason_share:
            return word
    if reference_mhz:
        floor = rules.clock_fraction * reference_mhz
        for s in near:
            if _busy(s) and float(s["sm_clock"]) < floor and not _capped_only(s):
                return DIP
    return None


def _busy(s: Sample) -> bool:
    return not int(s.get("throttle", 0)) & IDLE_BIT and float(s.get("sm_clock") or 0) > 0


def _capped_only(s: Sample) -> bool:
    """The power cap is the only event held: the clock this implementation's draw allows."""
    return int(s.get("throttle", 0)) & ~IDLE_BIT == POWER_CAP_BIT


def unclean_line(why: Mapping[str, int], attempts: int) -> str:
    """"SW thermal slowdown in 8 of 8 tries": why a cell's blocks never got clean."""
    word, count = max(why.items(), key=lambda kv: kv[1]) if why else ("dirty", attempts)
    return f"{word} in {count} of {attempts} tries"
