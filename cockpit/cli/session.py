"""A session from a shell: `cockpit new`, `status`, `phase next|skip|pause|NAME` and `end`.

A session run from a plain shell (a script over SSH, a box where the TUI cannot open) moves
through its phases the same way the keys do: the same timer functions, the same journal events,
so a TUI opened later, `cockpit status` and the report see one story.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence

from cockpit.cli.parser import session_named, workspace_of
from cockpit.config.warn_fraction import phase_warn_fraction
from cockpit.errors import CockpitError
from cockpit.session import timer
from cockpit.session.journal import Event
from cockpit.session.live import LiveSession
from cockpit.session.state import SessionState, StatusEntry
from cockpit.session.status import compose_status
from cockpit.session.workspace import SessionRef, Workspace, create_session, load_state, resolve_session

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


def new(args: argparse.Namespace) -> int:
    """`cockpit new "OBJECTIVE"`: make the session folder; print its id and path."""
    ws = workspace_of(args)
    from cockpit.config import load_config  # every table's code: not for `status`

    config = load_config(ws.root)
    try:
        open_now = resolve_session(ws, None)
    except CockpitError:  # no sessions folder to list: creating one says what is wrong
        open_now = None
    if open_now is not None and not args.force:
        raise CockpitError(f"session {open_now.id} is still open: end it first (`cockpit end`), or pass "
                           "--force to start another beside it")
    ref = create_session(ws, config, args.objective, args.template, time.time())
    if args.json:
        print(json.dumps({"id": ref.id, "path": str(ref.path), "journal": str(ref.journal),
                          "session_md": str(ref.log_md)}))
    else:
        print(f"{ref.id} {ref.path}")
    return 0


NOW = " · now: "


def now_of(text: str) -> str | None:
    """The "now:" part of a posted status line ("… · now: ncu on softmax_fwd · ~2:00 left"), without
    its time left; None when the line has none."""
    if NOW not in text:
        return None
    doing = text.split(NOW, 1)[1]
    head, sep, tail = doing.rpartition(" · ~")
    return (head if sep and tail.endswith(" left") else doing).strip() or None


def last_now(statuses: Sequence[StatusEntry]) -> tuple[StatusEntry, str] | None:
    """The status whose "now:" still stands, and that text. The engineer's own (a manual status)
    stands until they post another; the cockpit's (an automatic status, what a gate was doing)
    until the next automatic one."""
    superseded = False
    for entry in reversed(statuses):
        doing = now_of(entry.text)
        if doing is None:
            if not entry.auto:
                return None
            superseded = True
        elif not (entry.auto and superseded):
            return entry, doing
    return None


def ago(seconds: float) -> str:
    """"just now", "12m ago", "2h05m ago": short, for a status bar."""
    m = int(max(0.0, seconds)) // 60
    if m < 1:
        return "just now"
    return f"{m}m ago" if m < 60 else f"{m // 60}h{m % 60:02d}m ago"


def status(args: argparse.Namespace) -> int:
    """`cockpit status`: one line for tmux's status bar, or one JSON object."""
    ws = workspace_of(args)
    warn_fraction = phase_warn_fraction(ws.root)
    ref = resolve_session(ws, session_named(args))
    if ref is None:
        if args.json:
            print(json.dumps({"open": False, "session": None, "line": None}))
        else:
            print("no open cockpit session")
        return 0
    state = load_state(ref)
    now = time.time()
    view = timer.timer_view(state, now, warn_fraction)
    line = compose_status(state, view)
    carried = last_now(state.statuses) if state.is_open else None
    if carried is not None:  # what the last status said is being done: a tmux status bar shows it
        line += f"{NOW}{carried[1]} ({ago(now - carried[0].t)})"
    if not args.json:
        print(line)
        return 0
    current = view.current
    last = state.statuses[-1] if state.statuses else None
    print(json.dumps({
        "open": state.is_open,
        "session": state.id,
        "objective": state.objective,
        "line": line,
        "phase": current.name if current else None,
        "phase_elapsed_s": round(current.elapsed_s, 1) if current else None,
        "phase_budget_s": current.budget_s if current else None,
        "budget": current.budget if current else None,
        "paused": view.paused,
        "elapsed_s": round(view.total_elapsed_s, 1),
        "cost": round(timer.cost_so_far(state, now), 2),
        "last_status": {"t": last.t, "text": last.text, "auto": last.auto} if last else None,
        "now": {"text": carried[1], "t": carried[0].t, "auto": carried[0].auto} if carried else None,
    }))
    return 0


def phase(args: argparse.Namespace) -> int:
    """`cockpit phase MOVE`: apply one timer move and print where the session stands."""
    live = LiveSession(_open(workspace_of(args), session_named(args)))
    move = args.move
    try:
        state = live.append(_events_for(live.state, move, time.time()))
    finally:
        live.close()
    run = state.current_run
    print(f"{state.id}: {'paused, ' if state.paused else ''}{run.phase if run else 'no phase running'}")
    return 0


def end(args: argparse.Namespace) -> int:
    """`cockpit end`: end the session (the running phase ends with it), then write its report."""
    from cockpit.cli.report import export_session  # the report stack, only when a session ends

    ws = workspace_of(args)
    ref = _open(ws, session_named(args))
    reason = args.reason
    live = LiveSession(ref)
    stamp = time.time()
    try:
        live.append(timer.end_session(live.state, stamp, reason))
    finally:
        live.close()
    print(f"{ref.id}: ended")
    return export_session(ws, ref.id, None, None, stamp)
