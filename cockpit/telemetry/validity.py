"""Were the conditions of a benchmark window clean? The half of the bench verdict that needs no
timings: the other half, whether ours and the baseline ran at comparable clocks, is in
`block_clocks`.

A window is suspect, in either mode, when on the GPU it watched (chosen by UUID):
- a compute process that is not ours (nor a descendant of ours) was on it;
- it fell off the bus;
- it was never busy: a watch that saw no busy sample cannot vouch for a run (it watched
  another GPU, or the run never reached this one).
Clock events, by mode:
- "comparable" (the default): a slowdown (SW/HW thermal, HW slowdown, HW power brake) active for
  more than `slowdown_fraction` of the window makes it suspect; a briefer one, the power cap and
  every other event are shown in `notes`, never hidden. At its power cap an H100 or H200 runs
  heavy kernels at a lower clock: that is the card's normal loaded state, and each implementation
  is timed at its own capped clock, as it would run in real use.
- "strict": any clock event makes it suspect, and so does a busy SM clock below
  `sm_clock_fraction` of the max that no tolerated event explains.
Events in `tolerate` never make a window suspect in either mode; they are still in the notes.
Events in `remeasured` neither: the bench probe judged each timed block by them and timed again
the blocks they touched (cockpit/analysis/block_validity.py), so they are in the notes too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace

from cockpit.config.validity_rules import ValidityMode as ValidityMode
from cockpit.config.validity_rules import ValidityRules
from cockpit.hardware.clock_events import CLOCK_EVENT_GPU_IDLE
from cockpit.telemetry.identity import short_uuid
from cockpit.telemetry.sample import GpuSample, Snapshot, decode_throttle, throttled_seconds
from cockpit.telemetry.window_evidence import (
    BusyClock,
    ClockEvent,
    ForeignProcess,
    GpuWatched,
    WindowEvidence,
)

SLOWDOWNS = frozenset({"SW thermal slowdown", "HW thermal slowdown", "HW slowdown", "HW power brake"})
"""Clock events that mean the card was held back by heat or hardware, not by its own power budget."""


@dataclass(frozen=True)
class Validity:
    valid: bool
    reasons: tuple[str, ...] = ()
    """Why the window is suspect, one line each; empty when valid."""
    evidence: WindowEvidence = field(default_factory=WindowEvidence)
    checked: bool = True
    """False when no telemetry covers the window (no NVML): valid only because nothing was seen."""
    notes: tuple[str, ...] = ()
    """What was seen and does not make it suspect (the power cap, a brief slowdown), one line each."""


def gpu_label(index: int, uuid: str | None) -> str:
    """'GPU 1 (GPU-bb9154e7)': NVML's index for the eye, the UUID for the record."""
    return f"GPU {index}" + (f" ({short_uuid(uuid)})" if uuid else "")


def judge_window(
    snapshots: Iterable[Snapshot],
    t0: float,
    t1: float,
    own_pids: Collection[int],
    rules: ValidityRules | None = None,
    gpus: Collection[str] | None = None,
    remeasured: Collection[str] = (),
) -> Validity:
    """Judge [t0, t1] from the snapshots taken around it (`gpus`: only the GPUs with these UUIDs;
    `remeasured`: clock events whose blocks the run itself timed again: notes, never reasons).

    Samples inside the window count; a window shorter than a tick, holding none, is judged from
    the nearest sample on each side.
    """
    rules = rules or ValidityRules()
    again = frozenset(remeasured)
    wanted = None if gpus is None else {u.lower() for u in gpus}
    by_gpu: dict[int, list[GpuSample]] = {}
    max_clock: dict[int, int | None] = {}
    uuids: dict[int, str | None] = {}
    for snap in snapshots:
        for s in snap.samples:
            uuid = snap.uuid(s.index)
            if wanted is not None and (uuid or "").lower() not in wanted:
                continue
            by_gpu.setdefault(s.index, []).append(s)
            uuids[s.index] = uuid
            static = snap.static(s.index)
            if static is not None:
                max_clock[s.index] = static.max_sm_clock_mhz
    reasons: list[str] = []
    notes: list[str] = []
    seen = _Seen()
    for index in sorted(by_gpu):
        ordered = sorted(by_gpu[index], key=lambda s: s.t)
        window = _in_window(ordered, t0, t1)
        if not window:
            continue
        label = gpu_label(index, uuids.get(index))
        seen.samples += len(window)
        seen.gpus.append(GpuWatched(index, uuids.get(index)))
        seen.throttle += _judge_throttle(index, label, ordered, window, t0, t1, rules, reasons, notes, again)
        seen.clocks.append(_judge_clocks(index, label, window, max_clock.get(index), rules, reasons, again))
        seen.foreign += _judge_processes(index, label, window, set(own_pids), reasons)
        if any(s.lost for s in window):
            seen.lost.append(index)
            reasons.append(f"{label} fell off the bus (NVML: GPU is lost)")
    evidence = WindowEvidence(round(t1 - t0, 3), rules.mode, seen.samples, tuple(seen.gpus),
                              tuple(seen.throttle), tuple(seen.clocks), tuple(seen.foreign), tuple(seen.lost),
                              tuple(sorted(rules.tolerate)))
    if not seen.samples:
        return Validity(True, (), evidence, checked=False)
    return Validity(not reasons, tuple(reasons), evidence, notes=tuple(notes))


@dataclass
class _Seen:
    """The evidence as the GPUs are judged one by one."""

    samples: int = 0
    gpus: list[GpuWatched] = field(default_factory=list)
    throttle: list[ClockEvent] = field(default_factory=list)
    clocks: list[BusyClock] = field(default_factory=list)
    foreign: list[ForeignProcess] = field(default_factory=list)
    lost: list[int] = field(default_factory=list)


def _in_window(ordered: list[GpuSample], t0: float, t1: float) -> list[GpuSample]:
    inside = [s for s in ordered if t0 <= s.t <= t1]
    if inside:
        return inside
    before = [s for s in ordered if s.t < t0][-1:]
    after = [s for s in ordered if s.t > t1][:1]
    return before + after


def _judge_throttle(index: int, label: str, ordered: list[GpuSample], window: list[GpuSample],
                    t0: float, t1: float, rules: ValidityRules, reasons: list[str],
                    notes: list[str], remeasured: frozenset[str] = frozenset()) -> list[ClockEvent]:
    events = []
    seconds = throttled_seconds(((s.t, s.throttle_mask) for s in ordered), t0, t1)
    counts = _event_counts(window)
    span = max(t1 - t0, 1e-9)
    for word in sorted(set(counts) | (set(seconds) - {"idle"})):
        active_s = round(seconds.get(word, 0.0), 1)
        fraction = seconds.get(word, 0.0) / span
        tolerated = word in rules.tolerate
        events.append(ClockEvent(index, word, active_s, round(fraction, 4), counts.get(word, 0), tolerated))
        line = (f"{label}: {word} active for {active_s:.1f} s of the {t1 - t0:.1f} s window "
                f"({fraction:.1%}; {counts.get(word, 0)} of {len(window)} samples)")
        suspect, why = _throttle_verdict(word, fraction, rules, remeasured)
        (reasons if suspect else notes).append(line + why)
    return events


def _event_counts(window: list[GpuSample]) -> dict[str, int]:
    """How many of the window's samples had each clock event active (idle aside)."""
    counts: dict[str, int] = {}
    for s in window:
        for word in decode_throttle((s.throttle_mask or 0) & ~CLOCK_EVENT_GPU_IDLE):
            counts[word] = counts.get(word, 0) + 1
    return counts


def _throttle_verdict(word: str, fraction: float, rules: ValidityRules,
                      remeasured: frozenset[str]) -> tuple[bool, str]:
    """Whether a clock event active for `fraction` of the window makes the run suspect, and what
    its line adds to say why (or why not)."""
    if word in rules.tolerate:
        return False, " (tolerated)"
    if word in remeasured:
        return False, " (the blocks it touched were timed again: shown, not suspect)"
    if rules.mode == "strict":
        return True, ""
    if word in SLOWDOWNS and fraction > rules.slowdown_fraction:
        return True, f": over the {rules.slowdown_fraction:.0%} a slowdown may take"
    if word in SLOWDOWNS:
        return False, f" (brief: under {rules.slowdown_fraction:.0%})"
    if word == "power cap":
        return False, " (the card's normal loaded state: shown, not suspect)"
    return False, ""


def _explained(sample: GpuSample, tolerated: frozenset[str]) -> bool:
    """A clock drop explained by tolerated events: some were active, and only tolerated ones."""
    active = set(decode_throttle((sample.throttle_mask or 0) & ~CLOCK_EVENT_GPU_IDLE))
    return bool(active) and active <= tolerated


def _judge_clocks(index: int, label: str, window: list[GpuSample], max_mhz: int | None,
                  rules: ValidityRules, reasons: list[str],
                  remeasured: frozenset[str] = frozenset()) -> BusyClock:
    busy_samples = [s for s in window if (s.util_gpu or 0) > 0]
    busy = [s.sm_clock_mhz for s in busy_samples if s.sm_clock_mhz is not None]
    entry = BusyClock(index, min(busy, default=None), max(busy, default=None), max_mhz,
                      busy_samples=len(busy_samples))
    if not busy_samples and not any(s.lost for s in window):  # a lost GPU has its own reason
        reasons.append(f"{label} was idle in all {len(window)} samples: the watch cannot vouch for a "
                       "run it never saw (did the run use another GPU?)")
        return entry
    if rules.mode != "strict" or not max_mhz:
        return entry
    floor = rules.sm_clock_fraction * max_mhz
    low, below = _clock_drops(busy_samples, floor, rules.tolerate | remeasured)
    if below:
        reasons.append(f"{label}: SM clock fell to {min(below)} MHz while busy "
                       f"(< {rules.sm_clock_fraction:.0%} of its {max_mhz} MHz max) in {len(below)} of "
                       f"{len(busy)} busy samples")
    return replace(entry, threshold_mhz=round(floor), samples_below=len(below),
                   samples_below_explained=len(low) - len(below))


def _clock_drops(busy_samples: list[GpuSample], floor: float,
                 explains: frozenset[str]) -> tuple[list[GpuSample], list[int]]:
    """The busy samples whose SM clock fell under the floor, and the clocks of those no tolerated
    (or re-timed) clock event explains: only those make the run suspect."""
    low = [s for s in busy_samples if s.sm_clock_mhz is not None and s.sm_clock_mhz < floor]
    return low, [s.sm_clock_mhz or 0 for s in low if not _explained(s, explains)]


def _judge_processes(index: int, label: str, window: list[GpuSample], own: set[int],
                     reasons: list[str]) -> list[ForeignProcess]:
    seen = _foreign(index, window, own)
    for entry in seen.values():
        used_words = f"{entry.used_mib} MiB" if entry.used_mib is not None else "unknown memory"
        reasons.append(f"{label}: pid {entry.pid} ({entry.name or 'unknown'}) is not ours and "
                       f"used {used_words} in {entry.samples} of {len(window)} samples")
    return list(seen.values())


def _foreign(index: int, window: list[GpuSample], own: set[int]) -> dict[int, ForeignProcess]:
    """Each process on the GPU that is neither ours nor a child of ours, with the most memory it
    was seen to use and in how many samples."""
    seen: dict[int, ForeignProcess] = {}
    for s in window:
        for p in s.processes:
            if p.pid in own or own.intersection(p.ancestors):
                continue
            entry = seen.get(p.pid) or ForeignProcess(index, p.pid, p.name, None, 0)
            used = entry.used_mib if p.used_mib is None else max(entry.used_mib or 0, p.used_mib)
            seen[p.pid] = replace(entry, used_mib=used, samples=entry.samples + 1)
    return seen
