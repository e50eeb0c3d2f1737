"""Opening a session whose journal takes seconds to read (a week of events, an old journal with
every result inline, and no fold saved by an earlier reader): the journal is read by a worker
thread while the cockpit is already drawn and says what it is doing; the panels fill in when the
fold is ready. A journal that reads in well under a second opens at once, as before."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial

from cockpit.errors import CockpitError
from cockpit.session.live import LiveSession
from cockpit.session.saved_state import unread_bytes
from cockpit.session.workspace import SessionRef
from cockpit.ui.controllers.host import CockpitHost

LONG_READ_BYTES = 8 << 20
"""Journal bytes to read above which the read goes to a thread (8 MB: about half a second)."""


def reads_long(ref: SessionRef) -> bool:
    return unread_bytes(ref.journal, ref.workspace) > LONG_READ_BYTES


def open_in_background(host: CockpitHost, ref: SessionRef, attach: Callable[[LiveSession], None]) -> None:
    size = unread_bytes(ref.journal, ref.workspace) / 1e6
    host.notify(f"Reading {ref.id}'s journal ({size:.0f} MB); the panels fill in when it is read. "
                "Later openings start where this one stopped.", markup=False)

    def read() -> None:
        try:
            live = LiveSession(ref)
        except CockpitError as exc:
            done = partial(host.notify, str(exc), severity="error", markup=False)
        else:
            done = partial(attach, live)
        if host.is_running:
            host.call_from_thread(done)

    # a daemon thread, not a Textual worker: quitting in the middle of a 20 s read must not wait
    # for it (a worker thread cannot be cancelled, and the app waits for its workers)
    reader = threading.Thread(target=read, name="read journal", daemon=True)
    host.reading = reader
    reader.start()


def say_what_was_found(host: CockpitHost, live: LiveSession, reading: bool) -> None:
    """Another cockpit on the session (alive, or gone without closing), gate processes a killed
    cockpit left running (stopped, and their ends journaled: gates/orphans.py), the journal's
    first unreadable lines, and what of its first event is shown otherwise than written."""
    if not reading:
        from cockpit.gates.orphans import reap

        events, told = reap(live.state, host.clock.now, live.ref.workspace)
        if events and host.append(events):
            for line in told:
                host.notify(line, severity="warning", timeout=20, markup=False)
    pid = live.state.attached_pid
    if pid is not None:
        from cockpit.gates.pids import pid_alive

        if pid_alive(pid):
            host.notify(f"Another cockpit (pid {pid}) has this session open.", severity="warning")
        else:
            host.notify(f"The last cockpit (pid {pid}) did not close cleanly; state restored from the "
                        "journal.", severity="warning")
    for problem in live.problems[:3]:
        host.notify(problem.describe(live.ref.journal), severity="warning", markup=False)
    for refused in live.state.refused:
        host.notify(f"{live.ref.journal}: {refused}", severity="warning", markup=False)
