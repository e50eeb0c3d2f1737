"""The phase timer: elapsed time per phase and in total (pauses excluded), budget states,
and the intents (start, advance, skip, go to, pause, resume, end) as journal events.

Everything is a pure function of a `SessionState` and `now`; nothing here sleeps or reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cockpit.errors import CockpitError
from cockpit.session import events as ev
from cockpit.session.journal import Event
from cockpit.session.state import Pause, PhaseRun, SessionState

BudgetState = Literal["ok", "warn", "over"]
PhaseProgress = Literal["pending", "running", "paused", "done", "skipped"]


class TimerError(CockpitError):
    """An intent that does not apply to the timer as it stands."""


def active_seconds(start: float, end: float, pauses: tuple[Pause, ...]) -> float:
    """Seconds in [start, end] not covered by a pause."""
    if end <= start:
        return 0.0
    paused = 0.0
    for p in pauses:
        lo = max(start, p.started_t)
        hi = min(end, p.ended_t if p.ended_t is not None else end)
        if hi > lo:
            paused += hi - lo
    return end - start - paused


def run_elapsed(state: SessionState, run: PhaseRun, now: float) -> float:
    end = run.ended_t if run.ended_t is not None else _end(state, now)
    return active_seconds(run.started_t, end, state.pauses)


def phase_elapsed(state: SessionState, phase: str, now: float) -> float:
    """All time spent in `phase` so far, over every visit."""
    return sum(run_elapsed(state, r, now) for r in state.runs if r.phase == phase)


def total_elapsed(state: SessionState, now: float) -> float:
    """Working time since the first phase started, pauses excluded."""
    if not state.runs:
        return 0.0
    return active_seconds(state.runs[0].started_t, _end(state, now), state.pauses)


def wall_seconds(state: SessionState, now: float) -> float:
    """Time the session has held the GPU box (pauses included): what it costs."""
    return max(0.0, _end(state, now) - state.created_t)


def cost_so_far(state: SessionState, now: float) -> float:
    return wall_seconds(state, now) / 3600.0 * state.gpu_cost_per_hour


def _end(state: SessionState, now: float) -> float:
    return state.ended_t if state.ended_t is not None else now


def budget_state(elapsed_s: float, budget_s: float, warn_fraction: float) -> BudgetState:
    if elapsed_s > budget_s:
        return "over"
    if elapsed_s >= warn_fraction * budget_s:
        return "warn"
    return "ok"


@dataclass(frozen=True)
class PhaseView:
    name: str
    budget_s: float
    elapsed_s: float
    progress: PhaseProgress
    budget: BudgetState

    @property
    def remaining_s(self) -> float:
        return self.budget_s - self.elapsed_s


@dataclass(frozen=True)
class TimerView:
    phases: tuple[PhaseView, ...]
    current: PhaseView | None
    total_elapsed_s: float
    total_budget_s: float
    paused: bool
    started: bool
    finished: bool
    """Every phase has been left and none is running."""


def timer_view(state: SessionState, now: float, warn_fraction: float) -> TimerView:
    current_run = state.current_run
    views: list[PhaseView] = []
    current: PhaseView | None = None
    for spec in state.phases:
        runs = [r for r in state.runs if r.phase == spec.name]
        elapsed = sum(run_elapsed(state, r, now) for r in runs)
        progress: PhaseProgress
        if current_run is not None and current_run.phase == spec.name:
            progress = "paused" if state.paused else "running"
        elif not runs:
            progress = "pending"
        else:
            progress = "skipped" if runs[-1].outcome == "skipped" else "done"
        view = PhaseView(spec.name, spec.budget_s, elapsed, progress,
                         budget_state(elapsed, spec.budget_s, warn_fraction))
        views.append(view)
        if progress in ("running", "paused"):
            current = view
    return TimerView(
        phases=tuple(views),
        current=current,
        total_elapsed_s=total_elapsed(state, now),
        total_budget_s=sum(p.budget_s for p in state.phases),
        paused=state.paused,
        started=state.started,
        finished=state.started and current_run is None,
    )


# Intents -----------------------------------------------------------------------------------


def _not_before_the_journal(state: SessionState, now: float) -> float:
    """`now`, or the journal's last event when the clock reads earlier (stepped back a day by hand or
    by NTP): a phase change timed before the phase it ends would charge the next phase the day once
    the clock is set right again."""
    return max(now, state.last_event_t)


def _require_open(state: SessionState) -> None:
    if not state.is_open:
        raise TimerError(f"session {state.id} has ended; start a new one with `cockpit new`")


def _resume_if_paused(state: SessionState, now: float) -> list[Event]:
    return [ev.event(ev.TIMER_RESUMED, now)] if state.paused else []


def _end_current(state: SessionState, now: float, outcome: str) -> list[Event]:
    run = state.current_run
    if run is None:
        return []
    return [ev.phase_ended(now, run.phase, outcome, phase_elapsed(state, run.phase, now),
                           state.phase(run.phase).budget_s)]


def start(state: SessionState, now: float) -> list[Event]:
    """Start the first phase of a session whose timer has not run yet."""
    now = _not_before_the_journal(state, now)
    _require_open(state)
    if state.started:
        raise TimerError("the timer is already started; use next phase or go to phase")
    if not state.phases:
        raise TimerError(f"session {state.id} has no phases to time")
    return [ev.phase_started(now, state.phases[0].name)]


def advance(state: SessionState, now: float, outcome: str = "done") -> list[Event]:
    """End the current phase (done or skipped) and start the next one, if any."""
    now = _not_before_the_journal(state, now)
    _require_open(state)
    run = state.current_run
    if run is None:
        if not state.started:
            return start(state, now)
        raise TimerError("every phase is over; end the session or go to a phase to revisit it")
    events = _resume_if_paused(state, now) + _end_current(state, now, outcome)
    index = state.phase_index(run.phase)
    if index + 1 < len(state.phases):
        events.append(ev.phase_started(now, state.phases[index + 1].name))
    return events


def skip(state: SessionState, now: float) -> list[Event]:
    return advance(state, now, outcome="skipped")


def goto(state: SessionState, now: float, phase: str) -> list[Event]:
    """Leave the current phase (done) and enter `phase`, earlier or later."""
    now = _not_before_the_journal(state, now)
    _require_open(state)
    target = state.phase(phase).name
    run = state.current_run
    if run is not None and run.phase == target:
        raise TimerError(f"already in {target}")
    return (_resume_if_paused(state, now) + _end_current(state, now, "done")
            + [ev.phase_started(now, target)])


def toggle_pause(state: SessionState, now: float) -> list[Event]:
    now = _not_before_the_journal(state, now)
    _require_open(state)
    if state.paused:
        return [ev.event(ev.TIMER_RESUMED, now)]
    if state.current_run is None:
        raise TimerError("no phase is running, nothing to pause")
    return [ev.event(ev.TIMER_PAUSED, now)]


def end_session(state: SessionState, now: float, reason: str = "ended by the engineer") -> list[Event]:
    now = _not_before_the_journal(state, now)
    _require_open(state)
    return (_resume_if_paused(state, now) + _end_current(state, now, "done")
            + [ev.session_ended(now, reason)])


def overrun_events(state: SessionState, now: float) -> list[Event]:
    """A `phase_over_budget` event the first time the running phase passes its budget."""
    run = state.current_run
    if run is None or not state.is_open or (len(state.runs) - 1) in state.overrun_runs:
        return []
    elapsed = phase_elapsed(state, run.phase, now)
    budget = state.phase(run.phase).budget_s
    if budget <= 0 or elapsed <= budget:  # a phase without a budget (one the template lacks)
        return []
    return [ev.phase_over_budget(now, run.phase, elapsed, budget)]
