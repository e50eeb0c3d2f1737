"""A journal written again from a running cockpit's state, when the file was deleted under it.

The TUI holds the session's bounded fold (session/saved_state.py): the template and its phases,
every phase visit and pause, the latest statuses, notes and gate runs, the latest tune, the
patterns applied. Those become events again, in time order, and the note that says what
happened goes last. What the fold no longer held (older statuses, notes and gate runs) is gone
from this file: `git checkout -- <journal>` brings back a committed one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from cockpit.session import events as ev
from cockpit.session.journal import Event
from cockpit.session.paths import stored_path
from cockpit.session.state import SessionState

Timed = tuple[float, Event]
"""An event and the time it sorts by (a pattern applied sorts last: its time is not kept)."""


def events_from_state(state: SessionState, workspace: Path, now: float, why: str) -> list[Event]:
    """The events that fold back into `state` (as far as it goes), then a note saying `why`."""
    first = ev.session_started(state.created_t, state.id, state.objective, state.template,
                               state.phases, state.gpu_cost_per_hour)
    timed: list[Timed] = [*_phase_events(state), *_pause_events(state), *_said_events(state),
                          *_gate_events(state, workspace)]
    timed += [(float(event["t"]), event) for event in state.tune_events]
    last = max([state.last_event_t, *(t for t, _ in timed)])
    timed += [(last, ev.event(ev.PATTERN_APPLIED, last, pattern=pattern, title="", why="rebuilt"))
              for pattern in state.applied_patterns]
    if state.ended_t is not None:
        timed.append((state.ended_t, ev.session_ended(state.ended_t, "rebuilt")))
    timed.sort(key=lambda item: item[0])  # a stable sort: events of one instant keep their order
    return [first, *(event for _, event in timed), ev.note(now, why)]


def _phase_events(state: SessionState) -> Iterator[Timed]:
    """Each phase visit's start, and its end once it ended."""
    for run in state.runs:
        yield run.started_t, ev.phase_started(run.started_t, run.phase)
        if run.ended_t is not None:
            yield run.ended_t, ev.event(ev.PHASE_ENDED, run.ended_t, phase=run.phase,
                                        outcome=run.outcome or "done")


def _pause_events(state: SessionState) -> Iterator[Timed]:
    """Each pause of the timer, and its resume once it resumed."""
    for pause in state.pauses:
        yield pause.started_t, ev.event(ev.TIMER_PAUSED, pause.started_t)
        if pause.ended_t is not None:
            yield pause.ended_t, ev.event(ev.TIMER_RESUMED, pause.ended_t)


def _said_events(state: SessionState) -> Iterator[Timed]:
    """The statuses, then the notes, the fold still holds."""
    for status in state.statuses:
        yield status.t, ev.status(status.t, status.text, status.auto)
    for note in state.notes:
        yield note.t, ev.note(note.t, note.text)


def _gate_events(state: SessionState, workspace: Path) -> Iterator[Timed]:
    """Each gate run's start, and its finish (with the file holding a big result) once it finished."""
    for gate in state.gate_runs:
        log = stored_path(Path(gate.log), workspace) if gate.log else ""
        yield gate.started_t, ev.event(ev.GATE_STARTED, gate.started_t, run_id=gate.run_id, gate=gate.gate,
                                       argv=[], log=log, pid=gate.pid)
        if not gate.finished:
            continue
        finished = ev.gate_finished(gate.finished_t or gate.started_t, gate.run_id, gate.gate,
                                    gate.status or "error", gate.summary, gate.duration_s or 0.0,
                                    gate.exit_code, log, gate.result_inline)
        if gate.result_file:
            finished["result_file"] = stored_path(Path(gate.result_file), workspace)
        yield gate.finished_t or gate.started_t, finished
