"""A session's journal read for reporting: never fails on what a crash or a hand edit left."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cockpit.errors import CockpitError
from cockpit.session import events as ev
from cockpit.session.journal import Event, read_journal
from cockpit.session.paths import stored_path
from cockpit.session.state import SessionState, fold
from cockpit.session.workspace import SessionRef


@dataclass(frozen=True)
class SessionRead:
    """A session's journal read and folded, what was wrong with it, or why it could not be read."""

    ref: SessionRef
    state: SessionState | None
    events: tuple[Event, ...]
    problems: tuple[str, ...]


def read_session(ref: SessionRef) -> SessionRead:
    """The journal's events and state; torn and garbage lines become problems (file:line with
    the path relative to the workspace), an unreadable file a state of None."""
    shown = stored_path(ref.journal, ref.workspace)
    try:
        read = read_journal(ref.confined().journal)
    except CockpitError as exc:
        return SessionRead(ref, None, (), (str(exc),))
    problems = [p.describe(Path(shown)) for p in read.problems]
    if not read.events:
        return SessionRead(ref, None, (), (*problems, f"{shown}: holds no events"))
    state, more = tolerant_fold(read.events, ref)
    return SessionRead(ref, state, read.events, (*problems, *(f"{shown}: {m}" for m in more)))


def tolerant_fold(events: Sequence[Event], ref: SessionRef) -> tuple[SessionState, list[str]]:
    """The state the events describe even when the first line was lost: the events before
    `session_started` are skipped, and without one the session is known by its folder alone."""
    index = next((i for i, e in enumerate(events) if e.get("type") == ev.SESSION_STARTED), None)
    problems = []
    if index is None:
        t0 = min(float(e["t"]) for e in events)
        first = ev.event(ev.SESSION_STARTED, t0, id=ref.id, objective="", template="", phases=[],
                         gpu_cost_per_hour=0.0)
        problems.append("no session_started event: objective, phases and cost are unknown")
        events = [first, *events]
    elif index > 0:
        problems.append(f"{index} event(s) before session_started skipped")
        events = events[index:]
    return fold(events, ref.workspace), problems
