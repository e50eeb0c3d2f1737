"""A journal written again from a running cockpit's state, when the file was deleted under it.

The TUI holds the session's bounded fold (session/saved_state.py): the template and its phases,
every phase visit and pause, the latest statuses, notes and gate runs, the latest tune, the
patterns applied. Those become events again, in time order, and the note that says what
happened goes last. What the fold no longer held (older statuses, notes and gate runs) is gone
from this file: `git checkout -- <journal>` brings back a committed one.
"""

from __future__ import annotations

from pathlib import Path

from cockpit.session import events as ev
from cockpit.session.journal import Event
from cockpit.session.paths import stored_path
from cockpit.session.state import SessionState


def events_from_state(state: SessionState, workspace: Path, now: float, why: str) -> list[Event]:
    """The events that fold back into `state` (as far as it goes), then a note saying `why`."""
    first = ev.session_started(state.created_t, state.id, state.objective, state.template,
                               state.phases, state.gpu_cost_per_hour)
    timed: list[tuple[float, int, Event]] = []

    def add(t: float, event: Event) -> None:
        timed.append((t, len(timed), event))

    for run in state.runs:
        add(run.started_t, ev.phase_started(run.started_t, run.phase))
        if run.ended_t is not None:
            add(run.ended_t, ev.event(ev.PHASE_ENDED, run.ended_t, phase=run.phase,
                                      outcome=run.outcome or "done"))
    for pause in state.pauses:
        add(pause.started_t, ev.event(ev.TIMER_PAUSED, pause.started_t))
        if pause.ended_t is not None:
            add(pause.ended_t, ev.event(ev.TIMER_RESUMED, pause.ended_t))
    for status in state.statuses:
        add(status.t, ev.status(status.t, status.text, status.auto))
    for note in state.notes:
        add(note.t, ev.note(note.t, note.text))
    for gate in state.gate_runs:
        log = stored_path(Path(gate.log), workspace) if gate.log else ""
        add(gate.started_t, ev.event(ev.GATE_STARTED, gate.started_t, run_id=gate.run_id, gate=gate.gate,
                                     argv=[], log=log, pid=gate.pid))
        if gate.finished:
            finished = ev.gate_finished(gate.finished_t or gate.started_t, gate.run_id, gate.gate,
                                        gate.status or "error", gate.summary, gate.duration_s or 0.0,
                                        gate.exit_code, log, gate.result_inline)
            if gate.result_file:
                finished["result_file"] = stored_path(Path(gate.result_file), workspace)
            add(gate.finished_t or gate.started_t, finished)
    for event in state.tune_events:
        add(float(event["t"]), event)
    last = max([state.last_event_t, *(t for t, _, _ in timed)])
    for pattern in state.applied_patterns:
        add(last, ev.event(ev.PATTERN_APPLIED, last, pattern=pattern, title="", why="rebuilt"))
    if state.ended_t is not None:
        add(state.ended_t, ev.session_ended(state.ended_t, "rebuilt"))
    timed.sort(key=lambda item: (item[0], item[1]))
    return [first, *(event for _, _, event in timed), ev.note(now, why)]

