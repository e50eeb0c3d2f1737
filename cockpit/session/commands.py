"""The phase timer without the TUI: `cockpit phase next|skip|pause|NAME` and `cockpit end`.

A session run from a plain shell (a script over SSH, a box where the TUI cannot open) moves
through its phases the same way the keys do: the same timer functions, the same journal events,
so a TUI opened later, `cockpit status` and the report see one story.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from cockpit.errors import CockpitError
from cockpit.session import timer
from cockpit.session.journal import Event
from cockpit.session.live import LiveSession
from cockpit.session.state import SessionState
from cockpit.workspace import SessionRef, Workspace, resolve_session

MOVES: dict[str, Callable[[SessionState, float], list[Event]]] = {
    "next": timer.advance,
    "skip": timer.skip,
    "pause": timer.toggle_pause,
}


def _open(ws: Workspace, spec: str | None) -> SessionRef:
    ref = resolve_session(ws, spec)
    if ref is None:
        raise CockpitError('no open session; start one with: cockpit new "OBJECTIVE"')
    return ref


def _events_for(state: SessionState, move: str, now: float) -> list[Event]:
    if move in MOVES:
        return MOVES[move](state, now)
    names = [p.name for p in state.phases]
    for name in names:
        if name.lower() == move.lower():
            return timer.goto(state, now, name)
    raise CockpitError(f"{move!r} is not a move or a phase of this session "
                       f"(next, skip, pause, or one of: {', '.join(names)})")


def phase_command(ws: Workspace, spec: str | None, move: str) -> int:
    """Apply one timer move and print where the session stands."""
    live = LiveSession(_open(ws, spec))
    try:
        state = live.append(_events_for(live.state, move, time.time()))
    finally:
        live.close()
    run = state.current_run
    print(f"{state.id}: {'paused, ' if state.paused else ''}{run.phase if run else 'no phase running'}")
    return 0


def end_command(ws: Workspace, spec: str | None, reason: str) -> int:
    """End the session (the running phase ends with it), then write its report."""
    from cockpit.report.commands import export_command

    ref = _open(ws, spec)
    live = LiveSession(ref)
    stamp = time.time()
    try:
        live.append(timer.end_session(live.state, stamp, reason))
    finally:
        live.close()
    print(f"{ref.id}: ended")
    return export_command(ws, ref.id, None, None, stamp)
