"""The report's per-phase GPU table: the journal's `gpu_summary` events (an open cockpit writes
one as a phase ends on its screen) and, when there are none, one sentence saying why, as far as
the journal and the telemetry track can tell; where they cannot, only that there is none."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cockpit.report.model import GpuPhase
from cockpit.report.text import clean_value
from cockpit.session import events as ev
from cockpit.session.journal import Event

NO_SUMMARY = "No per-phase GPU summary in the journal."
BLIND_AFTER_S = 30.0
"""A cockpit open this long keeps track rows if it sees a GPU (one per 5 s): none means it saw none."""


def gpu_phases(events: tuple[Event, ...]) -> tuple[GpuPhase, ...]:
    """One row per phase and GPU, from the journal's `gpu_summary` events."""
    out = []
    for e in events:
        if e.get("type") != ev.GPU_SUMMARY or not isinstance(e.get("gpus"), list):
            continue
        out += [_gpu_phase(e, g) for g in e["gpus"] if isinstance(g, dict)]
    return tuple(out)


def _gpu_phase(e: Event, g: dict[str, Any]) -> GpuPhase:
    """One GPU's row of a phase's summary; a stat the summary lacks or garbles reads as None, and
    the throttle reasons (idle aside) as seconds each."""
    throttled = g["throttled_s"] if isinstance(g.get("throttled_s"), dict) else {}
    stats = {k: _float(g.get(k)) for k in ("util_mean", "util_max", "power_mean_w",
                                            "power_max_w", "temp_max_c", "sm_clock_min_mhz")}
    words = ", ".join(f"{clean_value(k)} {v:.0f} s" for k, v in throttled.items()
                      if _float(v) is not None and k != "idle")
    return GpuPhase(clean_value(e.get("phase")), _int(g.get("gpu")),
                    _int(g.get("samples")), **stats, throttled=words or "none")


def why_no_gpu_phases(events: tuple[Event, ...], track_t: Sequence[float], as_of: float) -> str:
    """Why the journal holds no per-phase GPU summary, in one sentence. `track_t`: the times of
    the session's telemetry track rows (the cockpit's, or `cockpit telemetry track`'s)."""
    if any(e.get("type") == ev.GPU_SUMMARY for e in events):
        return NO_SUMMARY  # summaries were written but named no GPU: nothing more is known
    ends = [float(e["t"]) for e in events if e.get("type") == ev.PHASE_ENDED]
    if not ends:
        return _no_phase_ended(events)
    windows = open_windows(events, as_of)
    seen = [w for w in windows if _within_any([w], ends)]
    if not seen:
        return ("No per-phase GPU summary: every phase ended while no cockpit was open (cockpit phase or "
                "cockpit end, from a shell); an open cockpit writes one as a phase ends.")
    if not _saw_no_gpu(seen, track_t):
        return NO_SUMMARY
    return f"No per-phase GPU summary: the open cockpit saw no GPU over NVML{_ended_unseen(windows, ends)}."


def _no_phase_ended(events: tuple[Event, ...]) -> str:
    """Why there is no summary when no phase has ended: the timer never started, or not yet."""
    if not any(e.get("type") == ev.PHASE_STARTED for e in events):
        return "No per-phase GPU summary: the phase timer was never started."
    return "No per-phase GPU summary yet: no phase has ended."


def _ended_unseen(windows: Sequence[tuple[float, float]], ends: Sequence[float]) -> str:
    """' (2 other phase ends came while no cockpit was open)': the phase ends no cockpit saw, if any."""
    closed = sum(1 for t in ends if not _within_any(windows, [t]))
    return (f" ({closed} other phase end{'s' if closed > 1 else ''} came while no cockpit was open)"
            if closed else "")


def _within_any(windows: Sequence[tuple[float, float]], ts: Sequence[float]) -> bool:
    """Whether any of the times falls inside any of the windows (ends included)."""
    return any(a <= t <= b for a, b in windows for t in ts)


def _saw_no_gpu(seen: Sequence[tuple[float, float]], track_t: Sequence[float]) -> bool:
    """Whether every cockpit open when a phase ended stayed open long enough to keep track rows
    and kept none: it saw no GPU."""
    return all(b - a >= BLIND_AFTER_S and not _within_any([(a, b)], track_t) for a, b in seen)


def open_windows(events: tuple[Event, ...], until: float) -> list[tuple[float, float]]:
    """When a cockpit had the session open, from its app_opened and app_closed events; one that
    never closed (it crashed) counts as open until `until`, the most anyone can say."""
    opened: dict[Any, float] = {}
    out = []
    for e in events:
        kind, pid = e.get("type"), e.get("pid")
        if kind == ev.APP_OPENED:
            if pid in opened:  # the same pid again: the first one never said it closed
                out.append((opened[pid], float(e["t"])))
            opened[pid] = float(e["t"])
        elif kind == ev.APP_CLOSED and pid in opened:
            out.append((opened.pop(pid), float(e["t"])))
    return sorted(out + [(t, max(t, until)) for t in opened.values()])


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
