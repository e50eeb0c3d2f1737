"""The session's keys: next, skip, pause and go to phase, a status by hand, a new session, the
end of one. The moves that end a phase or the session, and a new session beside an open one, ask
first (a key pressed by mistake must not move the timer)."""

from __future__ import annotations

from collections.abc import Callable

from cockpit.errors import CockpitError
from cockpit.session import timer
from cockpit.session.workspace import create_session, latest_open_session, shipped_with_the_cockpit
from cockpit.ui.controllers.host import CockpitHost


def confirm(host: CockpitHost, question: str, then: Callable[[], object]) -> None:
    """Ask `question`; run `then` on y."""
    from cockpit.ui.screens.dialogs import ConfirmDialog

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

    from cockpit.ui.screens.dialogs import PhasePickerDialog

    host.push_screen(PhasePickerDialog([p.name for p in state.phases], current), chosen)


def ask_status(host: CockpitHost) -> None:
    if host.live is None:
        return

    def posted(doing: str | None) -> None:
        if doing is not None:
            host.post_status(auto=False, doing=doing or None)

    from cockpit.ui.screens.dialogs import StatusDialog

    host.push_screen(StatusDialog(host.status_line()), posted)


def say_unreadable(host: CockpitHost) -> None:
    """Before offering a new session: the session folders that could not be offered, and why, in
    the words `cockpit export` uses (a newer one than the latest open one is lost otherwise)."""
    from cockpit.session.workspace import unreadable_sessions

    unreadable = unreadable_sessions(host.workspace)
    if not unreadable:
        return
    ref, refused = max(unreadable, key=lambda named: named[0].id)
    more = f" ({len(unreadable) - 1} more session folders cannot be opened)" if len(unreadable) > 1 else ""
    host.notify(f"Session {ref.id} cannot be opened: {refused.why}{more}",
                severity="warning", timeout=30, markup=False)


NO_SESSION_SAID = ("No session open: H shows every session, o the pattern library; ctrl+n starts a "
                   "session, q quits.")
OWN_REPOSITORY = ("This folder is the cockpit's own repository: a session here is about its example "
                  "kernel and lands in its sessions/. Start it anyway? (For your kernel: cockpit init "
                  "DIR in your repository, then cockpit --workspace DIR.)")
EXAMPLE_SESSIONS = ("This folder is the cockpit's example sessions (the team's, committed with it): a "
                    "session here lands among them in examples/sessions/. Start it anyway? (For your "
                    "kernel: cockpit init DIR in your repository, then cockpit --workspace DIR.)")
ASKED_FIRST = {"repository": OWN_REPOSITORY, "examples": EXAMPLE_SESSIONS}


def ask_new_session(host: CockpitHost, first: bool = False) -> None:
    """The new-session form. With a session still open it asks first, as `cockpit new` refuses
    without --force: a second session beside an open one is a choice, not a slip of ctrl+n. In the
    cockpit's own repository (a fresh clone) or its example sessions it asks first too. `first`:
    the dialog the app opens on, whose escape leaves the app up for browsing."""
    def created(answer: tuple[str, str] | None) -> None:
        if answer is None:
            if first and host.live is None:  # the app stays up for browsing, and says what it offers
                host.notify(NO_SESSION_SAID, severity="information", timeout=30, markup=False,
                            about="no-session")
            return
        objective, template = answer
        try:
            ref = create_session(host.workspace, host.config, objective, template, host.clock.now())
        except CockpitError as exc:
            host.notify(str(exc), severity="error", markup=False)
            return
        host.open_session(ref)
        host.notify(f"Session {ref.id} started: {host.current_phase_text()}", markup=False)

    def form() -> None:
        from cockpit.ui.controllers.key_states import NO_WORKLOAD
        from cockpit.ui.screens.dialogs import NewSessionDialog, suggested_objective  # loaded on first use

        no_workload = "" if host.config.workload.named else NO_WORKLOAD
        host.push_screen(NewSessionDialog(sorted(host.config.templates), host.config.default_template,
                                          suggested_objective(host.config.workload.source), no_workload),
                         created)

    def answered(yes: bool | None) -> None:
        if yes:
            form()
        else:
            created(None)  # as if the form was cancelled

    still_open = open_session_id(host)
    if still_open is not None:
        question = (f"Session {still_open} is still open: start another beside it? (To end it first: "
                    "n, then E.)")
    elif (shipped := shipped_with_the_cockpit(host.workspace.root)) is not None:
        question = ASKED_FIRST[shipped]
    else:
        form()
        return
    from cockpit.ui.screens.dialogs import ConfirmDialog

    host.push_screen(ConfirmDialog(question), answered)


def open_session_id(host: CockpitHost) -> str | None:
    """The open session a new one would start beside: the one shown, else the workspace's latest
    open one (another cockpit's, or one `cockpit new` made since)."""
    live = host.live
    if live is not None and live.state.is_open:
        return live.state.id
    try:
        ref = latest_open_session(host.workspace)
    except CockpitError:  # no sessions folder to list: the form's create says what is wrong
        return None
    return ref.id if ref is not None else None


def end_session(host: CockpitHost) -> None:
    live = host.live
    if live is None or not live.state.is_open:
        return

    def end() -> None:
        if host.intent(timer.end_session):
            from cockpit.ui.controllers.report_actions import export_report

            host.notify("Session ended: it is read-only now (R its report). ctrl+n starts the next one.",
                        about="ended")
            export_report(host, "Session ended")

    confirm(host, f"End session {live.state.id} for good?", end)
