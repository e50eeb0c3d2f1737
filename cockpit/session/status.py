"""The status line ("2:15 elapsed · PROFILE 12:31/30:00 · now: ncu on flash_fwd · ~1:30 left")
and the cadence that posts it every `status_every_s`.
"""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.printable import printable
from cockpit.session.state import SessionState
from cockpit.session.timer import TimerView


@dataclass(frozen=True)
class Activity:
    """What is running now. The gate engine supplies it; `None` when nothing runs."""

    text: str
    eta_s: float | None = None
    fraction: float | None = None


def fmt_duration(seconds: float) -> str:
    """1:05, 12:31, 1:02:03 — the clock format used everywhere on screen."""
    s = int(max(0.0, seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def fmt_minutes(seconds: float) -> str:
    """12 min, 1 h 05 — the header's clock: it moves once a minute (the phase panel has seconds)."""
    m = int(max(0.0, seconds)) // 60
    return f"{m // 60} h {m % 60:02d}" if m >= 60 else f"{m} min"


def compose_status(
    state: SessionState, view: TimerView, activity: Activity | None = None
) -> str:
    """The one-line status of a session at the moment `view` was computed."""
    parts = [f"{fmt_duration(view.total_elapsed_s)} elapsed"]
    current = view.current
    if not state.is_open:
        parts.append("session ended")
    elif current is not None:
        budget = (f"/{fmt_duration(current.budget_s)}" if current.budget_s > 0
                  else " (no budget: not in the template)")
        phase = f"{current.name.upper()} {fmt_duration(current.elapsed_s)}{budget}"
        parts.append(phase + (" PAUSED" if view.paused else ""))
    elif view.finished:
        parts.append("all phases done")
    else:
        parts.append("timer not started")

    if activity is not None:
        now = activity.text
        if activity.fraction is not None:
            now += f" {activity.fraction:.0%}"
        parts.append(f"now: {now}")
        if activity.eta_s is not None:
            parts.append(f"~{fmt_duration(activity.eta_s)} left")
    elif current is not None and state.is_open and current.budget_s > 0:
        if current.remaining_s >= 0:
            parts.append(f"{fmt_duration(current.remaining_s)} left in phase")
        else:
            parts.append(f"OVER BUDGET by {fmt_duration(-current.remaining_s)}")
    return " · ".join(parts)


def next_status_due(state: SessionState, every_s: float, since_t: float) -> float:
    """When the next automatic status is due: `every_s` after the last status (of either
    kind) or after `since_t` (when the cockpit attached), whichever is later."""
    last = state.statuses[-1].t if state.statuses else state.created_t
    return max(last, since_t) + every_s


def terminal_title(state: SessionState, line: str) -> str:
    """OSC 2 escape that sets the terminal (and tmux pane) title to the status line."""
    text = printable(f"cockpit {state.id.split('-')[0]} · {line}")  # one OSC of ours, none of theirs
    text = text.replace("\t", " ").replace("\r\n", " ").replace("\n", " ")
    return f"\x1b]2;{text}\x07"
