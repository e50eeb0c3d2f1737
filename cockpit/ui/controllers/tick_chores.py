"""What the app's clock does once a second besides drawing: follow the journal, journal the gate
ends a full disk refused, flag a phase that ran over its budget. Each says what went wrong once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cockpit.errors import CockpitError
from cockpit.session import timer
from cockpit.session.live import LiveSession
from cockpit.ui.controllers.host import CockpitHost

if TYPE_CHECKING:
    from cockpit.ui.controllers.gate_board import GateBoard

Report = Callable[[str], None]


def follow_journal(host: CockpitHost, live: LiveSession, reading: bool, report: Report) -> None:
    """Read what other writers appended; a session being written also heals a torn last line."""
    try:
        if not reading and (told := live.heal(host.clock.now())):
            host.notify(told, severity="warning", timeout=30, markup=False)
        live.refresh()
    except CockpitError as exc:
        report(str(exc))


def journal_refused_ends(gates: GateBoard, report: Report) -> None:
    """A full disk refused a run's end: try again, and say so while it still fails."""
    for run in list(gates.unjournaled):
        if run.retry_journal():
            gates.unjournaled.remove(run)
        else:
            report(f"{run.run_id} finished but is not journaled yet: {run.journal_error}")


def flag_overrun(host: CockpitHost, live: LiveSession, now: float) -> None:
    """The running phase passed its budget: journal it once, and tell the user what to do."""
    overrun = timer.overrun_events(live.state, now)
    if overrun and host.append(overrun):
        phase = overrun[0]["phase"]
        host.notify(f"{phase} is over its budget — wrap up, or move on with n.",
                    title="Over budget", severity="warning", timeout=10)
