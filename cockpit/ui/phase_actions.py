"""The phase timer's keys: next, skip, pause, go to, and a status by hand. The moves that end a
phase ask first (a key pressed by mistake must not move the timer)."""

from __future__ import annotations

from collections.abc import Callable

from cockpit.session import timer
from cockpit.ui.host import CockpitHost


def confirm(host: CockpitHost, question: str, then: Callable[[], object]) -> None:
    """Ask `question`; run `then` on y."""
    from cockpit.ui.dialogs import ConfirmDialog

    def answered(yes: bool | None) -> None:
        if yes:
            then()

    host.push_screen(ConfirmDialog(question), answered)


def next_phase(host: CockpitHost) -> None:
    def advance() -> None:
        if host.intent(timer.advance):
            host.notify(f"Now: {host.current_phase_text()}", markup=False)

    if host.live is not None:
        confirm(host, f"End {host.current_phase_text()} as done and start the next phase?", advance)


def skip_phase(host: CockpitHost) -> None:
    def skip() -> None:
        if host.intent(timer.skip):
            host.notify(f"Skipped; now: {host.current_phase_text()}", markup=False)

    if host.live is not None:
        confirm(host, f"Skip the rest of {host.current_phase_text()} and start the next phase?",
                skip)


def toggle_pause(host: CockpitHost) -> None:
    """Not asked: a second p undoes it."""
    if host.intent(timer.toggle_pause) and host.live is not None:
        host.notify("Paused: the clock is stopped (p resumes)." if host.live.state.paused
                    else "Resumed.")


def goto_phase(host: CockpitHost) -> None:
    if host.live is None:
        return
    state = host.live.state
    current = state.current_run.phase if state.current_run else None

    def chosen(phase: str | None) -> None:
        if phase and host.intent(lambda s, now: timer.goto(s, now, phase)):
            host.notify(f"Now: {phase}", markup=False)

    from cockpit.ui.dialogs import PhasePickerDialog

    host.push_screen(PhasePickerDialog([p.name for p in state.phases], current), chosen)


def ask_status(host: CockpitHost) -> None:
    if host.live is None:
        return

    def posted(doing: str | None) -> None:
        if doing is not None:
            host.post_status(auto=False, doing=doing or None)

    from cockpit.ui.dialogs import StatusDialog

    host.push_screen(StatusDialog(host.status_line()), posted)
