"""The status line ("2:15 elapsed · PROFILE 12:31/30:00 · now: ncu on softmax_fwd · ~1:30 left")
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


HOUR_S = 3600


def fmt_duration(seconds: float, hours: bool = False) -> str:
    """1:05, 12:31, 1:02:03 — the clock format used everywhere on screen; `hours`: with its hours
    even under one (0:12:31), beside a time that has them."""
    s = int(max(0.0, seconds))
    h, rem = divmod(s, HOUR_S)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h or hours else f"{m}:{sec:02d}"


def _has_hours(*seconds: float) -> bool:
    return any(int(max(0.0, s)) >= HOUR_S for s in seconds)


def fmt_against(elapsed_s: float, budget_s: float) -> str:
    """Time spent against a budget, both sides in one format: `12:31/30:00`, and where either needs
    hours `0:03:16/3:10:00` (`3:16/3:10:00` read as nearly three hours of it spent)."""
    hours = _has_hours(elapsed_s, budget_s)
    return f"{fmt_duration(elapsed_s, hours)}/{fmt_duration(budget_s, hours)}"


def fmt_minutes(seconds: float, hours: bool = False) -> str:
    """12 min, 1 h 05 — the header's clock: it moves once a minute (the phase panel has seconds);
    `hours`: 0 h 12, beside a time that has hours."""
    m = int(max(0.0, seconds)) // 60
    return f"{m // 60} h {m % 60:02d}" if m >= 60 or hours else f"{m} min"


def minutes_against(elapsed_s: float, budget_s: float) -> str:
    """The header's time spent against a budget, both sides in one format: `12/30 min`, and where
    either needs hours `0 h 05/1 h 30`."""
    if not _has_hours(elapsed_s, budget_s):
        return f"{int(max(0.0, elapsed_s)) // 60}/{int(max(0.0, budget_s)) // 60} min"
    return f"{fmt_minutes(elapsed_s, hours=True)}/{fmt_minutes(budget_s, hours=True)}"


def compose_status(
    state: SessionState, view: TimerView, activity: Activity | None = None
) -> str:
    """The one-line status of a session at the moment `view` was computed."""
    parts = [f"{fmt_duration(view.total_elapsed_s)} elapsed"]
    current = view.current
    if not state.is_open:
        parts.append("session ended")
    elif current is not None:
        spent = (fmt_against(current.elapsed_s, current.budget_s) if current.budget_s > 0
                 else f"{fmt_duration(current.elapsed_s)} (no budget: not in the template)")
        phase = f"{current.name.upper()} {spent}"
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
