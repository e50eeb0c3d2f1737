"""Was a benchmark window clean? The verdict the bench gate records next to its numbers.

A window is suspect when, on a GPU it watched:
- a clock-event reason other than "idle" was active (power cap, thermal, HW slowdown, ...);
- the SM clock fell below `sm_clock_fraction` of the GPU's max while it was busy (util > 0);
- a compute process that is not ours (nor a descendant of ours) was on the GPU;
- the GPU fell off the bus.
The evidence holds the numbers behind each reason, JSON-ready.

A box can tolerate clock events (`tolerate`): an H100/H200 sits at its power cap under any heavy
kernel, so there "power cap" is the steady state every benchmark runs in, not a disturbance. A
tolerated event is kept in the evidence and said in `notes`, and a clock drop while only tolerated
events were active is explained by them; it makes nothing suspect.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from cockpit.telemetry.sample import (
    CLOCK_EVENT_GPU_IDLE,
    GpuSample,
    Snapshot,
    decode_throttle,
    throttled_seconds,
)


@dataclass(frozen=True)
class Validity:
    valid: bool
    reasons: tuple[str, ...] = ()
    """Why the window is suspect, one line each; empty when valid."""
    evidence: dict[str, Any] = field(default_factory=dict)
    checked: bool = True
    """False when no telemetry covers the window (no NVML): valid only because nothing was seen."""
    notes: tuple[str, ...] = ()
    """Tolerated clock events that were active, one line each."""


def judge_window(
    snapshots: Iterable[Snapshot],
    t0: float,
    t1: float,
    own_pids: Collection[int],
    sm_clock_fraction: float = 0.9,
    gpus: Collection[int] | None = None,
    tolerate: Collection[str] = (),
) -> Validity:
    """Judge [t0, t1] from the snapshots taken around it (`gpus`: only these indices).

    Samples inside the window count; a window shorter than a tick, holding none, is judged from
    the nearest sample on each side.
    """
    by_gpu: dict[int, list[GpuSample]] = {}
    max_clock: dict[int, int | None] = {}
    for snap in snapshots:
        for s in snap.samples:
            if gpus is None or s.index in gpus:
                by_gpu.setdefault(s.index, []).append(s)
                static = snap.static(s.index)
                if static is not None:
                    max_clock[s.index] = static.max_sm_clock_mhz
    reasons: list[str] = []
    notes: list[str] = []
    tolerated = frozenset(tolerate)
    evidence: dict[str, Any] = {"window_s": round(t1 - t0, 3), "samples": 0, "throttle": [],
                                "clocks": [], "foreign": [], "lost": [],
                                "tolerated": sorted(tolerated)}
    for index in sorted(by_gpu):
        ordered = sorted(by_gpu[index], key=lambda s: s.t)
        window = _in_window(ordered, t0, t1)
        if not window:
            continue
        evidence["samples"] += len(window)
        _judge_throttle(index, ordered, window, t0, t1, tolerated, reasons, notes, evidence)
        _judge_clocks(index, window, max_clock.get(index), sm_clock_fraction, tolerated, reasons,
                      evidence)
        _judge_processes(index, window, set(own_pids), reasons, evidence)
        if any(s.lost for s in window):
            evidence["lost"].append(index)
            reasons.append(f"GPU {index} fell off the bus (NVML: GPU is lost)")
    if not evidence["samples"]:
        return Validity(True, (), evidence, checked=False)
    return Validity(not reasons, tuple(reasons), evidence, notes=tuple(notes))


def _in_window(ordered: list[GpuSample], t0: float, t1: float) -> list[GpuSample]:
    inside = [s for s in ordered if t0 <= s.t <= t1]
    if inside:
        return inside
    before = [s for s in ordered if s.t < t0][-1:]
    after = [s for s in ordered if s.t > t1][:1]
    return before + after


def _judge_throttle(index: int, ordered: list[GpuSample], window: list[GpuSample], t0: float, t1: float,
                    tolerated: frozenset[str], reasons: list[str], notes: list[str],
                    evidence: dict[str, Any]) -> None:
    seconds = throttled_seconds(((s.t, s.throttle_mask) for s in ordered), t0, t1)
    counts: dict[str, int] = {}
    for s in window:
        for word in decode_throttle((s.throttle_mask or 0) & ~CLOCK_EVENT_GPU_IDLE):
            counts[word] = counts.get(word, 0) + 1
    for word in sorted(set(counts) | (set(seconds) - {"idle"})):
        active_s = round(seconds.get(word, 0.0), 1)
        evidence["throttle"].append({"gpu": index, "reason": word, "seconds": active_s,
                                     "samples": counts.get(word, 0), "tolerated": word in tolerated})
        line = (f"GPU {index}: {word} active for {active_s:.1f} s of the "
                f"{t1 - t0:.1f} s window ({counts.get(word, 0)} of {len(window)} samples)")
        if word in tolerated:
            notes.append(line + " (tolerated)")
        else:
            reasons.append(line)


def _explained(sample: GpuSample, tolerated: frozenset[str]) -> bool:
    """A clock drop explained by tolerated events: some were active, and only tolerated ones."""
    active = set(decode_throttle((sample.throttle_mask or 0) & ~CLOCK_EVENT_GPU_IDLE))
    return bool(active) and active <= tolerated


def _judge_clocks(index: int, window: list[GpuSample], max_mhz: int | None, fraction: float,
                  tolerated: frozenset[str], reasons: list[str], evidence: dict[str, Any]) -> None:
    busy_samples = [s for s in window if (s.util_gpu or 0) > 0 and s.sm_clock_mhz is not None]
    busy = [s.sm_clock_mhz or 0 for s in busy_samples]
    entry: dict[str, Any] = {"gpu": index, "busy_samples": len(busy), "max_sm_clock_mhz": max_mhz,
                             "min_busy_sm_clock_mhz": min(busy) if busy else None,
                             "max_busy_sm_clock_mhz": max(busy) if busy else None}
    if max_mhz:
        floor = fraction * max_mhz
        low = [s for s in busy_samples if (s.sm_clock_mhz or 0) < floor]
        below = [s.sm_clock_mhz or 0 for s in low if not _explained(s, tolerated)]
        entry.update(threshold_mhz=round(floor), samples_below=len(below),
                     samples_below_explained=len(low) - len(below))
        if below:
            reasons.append(f"GPU {index}: SM clock fell to {min(below)} MHz while busy "
                           f"(< {fraction:.0%} of its {max_mhz} MHz max) in {len(below)} of "
                           f"{len(busy)} busy samples")
    evidence["clocks"].append(entry)


def _judge_processes(index: int, window: list[GpuSample], own: set[int], reasons: list[str],
                     evidence: dict[str, Any]) -> None:
    seen: dict[int, dict[str, Any]] = {}
    for s in window:
        for p in s.processes:
            if p.pid in own or own.intersection(p.ancestors):
                continue
            entry = seen.setdefault(p.pid, {"gpu": index, "pid": p.pid, "name": p.name, "used_mib": None,
                                            "samples": 0})
            entry["samples"] += 1
            if p.used_mib is not None:
                entry["used_mib"] = max(entry["used_mib"] or 0, p.used_mib)
    for entry in seen.values():
        evidence["foreign"].append(entry)
        used = f"{entry['used_mib']} MiB" if entry["used_mib"] is not None else "unknown memory"
        reasons.append(f"GPU {index}: pid {entry['pid']} ({entry['name'] or 'unknown'}) is not ours and "
                       f"used {used} in {entry['samples']} of {len(window)} samples")
