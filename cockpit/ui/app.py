"""The cockpit TUI: header, phase timer, status history; intents go to the session core."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen

from cockpit.clock import Clock, SystemClock
from cockpit.config import Config
from cockpit.errors import CockpitError
from cockpit.gates.catalog import GATES
from cockpit.session import events as ev
from cockpit.session import timer
from cockpit.session.journal import Event
from cockpit.session.live import LiveSession
from cockpit.session.state import SessionState
from cockpit.session.status import Activity, compose_status, fmt_duration, next_status_due, terminal_title
from cockpit.session.timer import TimerView
from cockpit.session.workspace import SessionRef, Workspace
from cockpit.telemetry.track import TRACK_NAME, TrackWriter
from cockpit.ui.app_hooks import CockpitHooks
from cockpit.ui.controllers import session_open, tick_chores
from cockpit.ui.controllers.gate_board import GateBoard
from cockpit.ui.controllers.gate_messages import GateMessageHandlers
from cockpit.ui.controllers.gpu_feed import GpuFeed
from cockpit.ui.controllers.key_actions import KeyActions
from cockpit.ui.controllers.key_states import KeyState
from cockpit.ui.controllers.pattern_desk import PatternDesk
from cockpit.ui.controllers.tick_pacer import TickPacer
from cockpit.ui.editor.pane import SessionEditor
from cockpit.ui.editor.typing_guard import TYPING_GAP_S
from cockpit.ui.screens.commands import palette_commands, pattern_provider
from cockpit.ui.screens.main_screen import MainScreen
from cockpit.ui.shims import hangup
from cockpit.ui.shims.crash import CrashWithoutLocals
from cockpit.ui.shims.textual_caches import SWEEP_EVERY_S, empty_textual_caches
from cockpit.ui.widgets.gate_panel import GateDetail, GatePanel
from cockpit.ui.widgets.gpu_panel import GpuPanel
from cockpit.ui.widgets.header import SessionHeader
from cockpit.ui.widgets.phases import PhasePanel
from cockpit.ui.widgets.status_history import StatusHistory
from cockpit.ui.widgets.tune_feed import TuneFeed
from cockpit.ui.widgets.tune_panel import TunePanel

if TYPE_CHECKING:
    from cockpit.patterns.library import Pattern
    from cockpit.telemetry.history import History
    from cockpit.telemetry.sample import Snapshot
    from cockpit.telemetry.sampler import TelemetrySource

ActivitySource = Callable[[], Activity | None]


class CockpitApp(KeyActions, GateMessageHandlers, CockpitHooks, CrashWithoutLocals):
    # A whole path: Textual reads a relative one beside the subclass's module, and the read-only
    # cockpit of pictures/frozen_cockpit.py is a subclass in another room.
    CSS_PATH = Path(__file__).resolve().with_name("cockpit.tcss")
    COMMANDS = App.COMMANDS | {pattern_provider}
    TITLE = "cockpit"
    def __init__(
        self,
        workspace: Workspace,
        config: Config,
        session: SessionRef | None,
        clock: Clock | None = None,
        tick_s: float = 1.0,
        telemetry: TelemetrySource | None = None,
        gpu_every_s: float = 1.0,
        initial_gpu: tuple[Sequence[Snapshot], History] | None = None,
        typing_gap_s: float = TYPING_GAP_S,
    ) -> None:
        super().__init__()
        self.workspace = workspace
        self.config = config
        self.clock = clock or SystemClock()
        self.live: LiveSession | None = None
        self.reading: threading.Thread | None = None
        self._initial = session
        self._typing_gap_s = typing_gap_s
        self._attached_t = self.clock.now()
        self._reported: set[str] = set()
        self._swept_t = self.clock.now()  # textual_caches: the last sweep
        self.pacer = TickPacer(tick_s, self.tick)
        self._initial_gpu = initial_gpu
        # The main screen's widgets, held so updates never depend on which screen is on top.
        self.header = SessionHeader(id="header")
        self.gpu_panel = GpuPanel(id="gpu")
        self.phase_panel = PhasePanel(id="phases")
        self.gate_panel = GatePanel(list(GATES), id="gates")
        self.gate_detail = GateDetail(id="gate-detail")
        self.status_history = StatusHistory(id="status-history")
        self.tune = TuneFeed(TunePanel(id="tune"))
        self.editor = SessionEditor(id="editor")
        self.gates = GateBoard(self)
        self.pattern_desk = PatternDesk(self, self.gates)
        self.gpu = GpuFeed(self, telemetry, gpu_every_s, initial_gpu[1] if initial_gpu else None,
                           self._gpu_frame)
        self.track: TrackWriter | None = None  # the session's telemetry.jsonl
        self._reading = False  # an ended session: shown, never written to
        self._keys_for: KeyState | None = None  # the state the key bar was last drawn for
        # What runs now, for the status line; the first source that reports something wins.
        self.activity_sources: list[ActivitySource] = [self.gates.activity, self.tune.activity]

    def _gpu_frame(self, snapshot: Snapshot) -> None:
        """A GPU poll was rendered: keep it in the session's track, tick the clock in its frame."""
        if self.track is not None:
            try:
                self.track.offer(snapshot)
            except CockpitError as exc:
                self.report_once(str(exc), "warning")
        self.pacer.on_gpu_frame(self.gpu.every_s)

    @property
    def gpu_history(self) -> History | None:
        return self.gpu.history

    async def gpu_polled(self) -> None:
        """Wait until the GPU poll in flight (if any) has been rendered (tests, screenshots)."""
        await self.gpu.settled()

    # Layout -------------------------------------------------------------------------------

    def get_default_screen(self) -> MainScreen:
        return MainScreen(self, self._typing_gap_s)

    def start(self) -> None:
        """The main screen is up (MainScreen.on_mount): open the session, start the clocks."""
        from cockpit.gates.device import gate_device

        self.gpu_panel.watch_gate(gate_device(self.config, "bench", os.environ))
        self.gates.refresh()  # the gates' rows with no session too: what a new workspace lacks shows
        if self._initial is not None:
            self.open_session(self._initial)
        else:
            from cockpit.ui.controllers import session_actions

            session_actions.say_unreadable(self)
            session_actions.ask_new_session(self, first=True)
        self.pacer.start(self._handle_exception)
        if self._initial_gpu is not None:  # recorded ticks, already in the history
            snapshots, history = self._initial_gpu
            for snapshot in snapshots:
                self.gpu_panel.show(snapshot, history)
        self.gpu.start()
        if not self.is_headless:
            hangup.install(self.close_for_signal, lambda: self.exit(0))
            threading.Thread(target=self.gates.find_python, name="gates-python", daemon=True).start()

    @property
    def main_screen(self) -> Screen[object]:
        return self.screen_stack[0]

    def on_unmount(self) -> None:
        self.gpu.stop()
        self.pacer.stop()
        self._close_session("quit")

    # Session lifecycle --------------------------------------------------------------------

    def open_session(self, ref: SessionRef) -> None:
        self._close_session("switched session")
        if session_open.reads_long(ref):
            self.sub_title = f"{ref.id} (reading its journal)"
            session_open.open_in_background(self, ref, self._attach_session)
            return
        try:
            live = LiveSession(ref)
        except CockpitError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self._attach_session(live)

    def _attach_session(self, live: LiveSession) -> None:
        ref = live.ref
        self.live = live
        state = live.state
        # An ended session opens for reading: nothing is appended to its journal or its track.
        self._reading = not state.is_open
        self.track = None if self._reading else TrackWriter(ref.path / TRACK_NAME)
        self._attached_t = self.clock.now()
        self.drop_toasts("no-session", "ended", "refused", "typing")  # said of the state before
        session_open.say_what_was_found(self, live, self._reading)
        if not self._reading:
            self.append([ev.app_opened(self.clock.now(), os.getpid())])
        self.sub_title = state.id + (" (ended: read only)" if self._reading else "")
        self.editor.open(ref.log_md)
        self.tick()
        self.gates.select(self.gate_panel.selected)

    def _close_session(self, reason: str) -> None:
        if self.editor.is_mounted:
            self.editor.flush()
        track, self.track = self.track, None
        if track is not None:
            with contextlib.suppress(CockpitError):  # a full disk was reported when it happened
                track.close()
        live, self.live = self.live, None
        if live is None:
            return
        if self._reading:
            live.close()
            return
        try:
            live.append([ev.app_closed(self.clock.now(), os.getpid(), reason)])
        except CockpitError:
            pass  # the events before this one are already on disk
        finally:
            live.close()

    # The clock ----------------------------------------------------------------------------

    def tick(self) -> None:
        """Once a second: follow the journal, flag overruns, post a due status, redraw."""
        self.pacer.ticked()
        if self.clock.now() - self._swept_t >= SWEEP_EVERY_S:
            self._swept_t = self.clock.now()
            empty_textual_caches()
        live = self.live
        if live is None:
            return
        tick_chores.follow_journal(self, live, self._reading, self.report_once)
        tick_chores.journal_refused_ends(self.gates, self.report_once)
        now = self.clock.now()
        tick_chores.flag_overrun(self, live, now)
        self.editor.check_disk()
        state = live.state
        if state.is_open and now >= next_status_due(state, self.config.status_every_s,
                                                     self._attached_t):
            self.post_status(auto=True)
        self._render(now)

    def _view(self, now: float) -> TimerView:
        assert self.live is not None
        return timer.timer_view(self.live.state, now, self.config.phase_warn_fraction)

    def redraw(self) -> None:
        self._render(self.clock.now())

    def _render(self, now: float) -> None:
        self.follow_state()
        if self.live is None or not self.header.is_mounted:
            return
        state = self.live.state
        view = self._view(now)
        self.header.show(state, view, now, self.pattern_desk.size())
        self.phase_panel.show(view)
        self.status_history.show(state.statuses, state.status_count)
        self.tune.show(state, now)
        self.gates.refresh()

    def follow_state(self) -> None:
        """The keys on offer and the editor follow the session's state at once: an end makes both
        read-only in the cockpit that ended it, as reopening it later would."""
        state = self.key_state()
        if state != self._keys_for:
            self._keys_for = state
            self.refresh_bindings()
        if self.editor.is_mounted:
            self.editor.follow(session=self.live is not None, ended=self.read_only)

    def current_activity(self) -> Activity | None:
        for source in self.activity_sources:
            activity = source()
            if activity is not None:
                return activity
        return None

    def status_line(self, doing: str | None = None) -> str:
        assert self.live is not None
        activity = Activity(doing) if doing else self.current_activity()
        return compose_status(self.live.state, self._view(self.clock.now()), activity)

    def post_status(self, auto: bool, doing: str | None = None) -> None:
        """Compose the status line, journal it, toast it, and put it in the title and status.txt."""
        live = self.live
        if live is None:
            return
        line = self.status_line(doing)
        if not self.append([ev.status(self.clock.now(), line, auto)]):
            return
        self.notify(line, title="Status" if auto else "Status (you)", markup=False)
        if not self.is_headless and self._driver is not None:
            self._driver.write(terminal_title(live.state, line))
        try:
            live.write_status_file(line)
        except CockpitError as exc:
            self.report_once(str(exc))
        self._render(self.clock.now())

    def append(self, events: list[Event]) -> bool:
        if self.live is None:
            return False
        try:
            self.live.append(events)
        except CockpitError as exc:
            self.notify(str(exc), severity="error", markup=False, timeout=15)
            return False
        return True

    def report_once(self, message: str, severity: SeverityLevel = "error") -> None:
        """A problem that may recur every tick is shown once."""
        if message not in self._reported:
            self._reported.add(message)
            self.notify(message, severity=severity, markup=False, timeout=15)

    def current_phase_text(self) -> str:
        view = self._view(self.clock.now())
        return view.current.name if view.current else "no phase running"

    # Intents ------------------------------------------------------------------------------

    def intent(self, make: Callable[[SessionState, float], list[Event]]) -> bool:
        if self.live is None:
            self.notify("No session is open: ctrl+n starts one.", severity="warning")
            return False
        try:
            events = make(self.live.state, self.clock.now())
        except CockpitError as exc:
            self.notify(str(exc), severity="warning", markup=False)
            return False
        ended = next((e for e in events if e["type"] == ev.PHASE_ENDED), None)
        if ended:
            self.editor.flush()  # a phase change is a natural checkpoint for the log
            summary = self.gpu.phase_summary(self.live.state, ended, self.config, self.gpu_panel.gpus)
            if summary is not None:  # beside the phase's end: before a session_ended after it
                events.insert(events.index(ended) + 1, summary)
        ok = self.append(events)
        self._render(self.clock.now())
        return ok

    # The editor ------------------------------------------------------------------------------

    def current_phase_label(self) -> str:
        view = self._view(self.clock.now()) if self.live else None
        if view is None or view.current is None:
            return ""
        c = view.current
        return f"{c.name.upper()} {fmt_duration(c.elapsed_s)}"

    def last_status_text(self) -> str | None:
        return self.live.state.statuses[-1].text if self.live and self.live.state.statuses else None

    def last_gate_markdown(self) -> str | None:
        if self.live is None:
            return None
        run = next((r for r in reversed(self.live.state.gate_runs) if r.finished), None)
        if run is None:
            return None
        from cockpit.ui.widgets.gate_results import gate_markdown

        return gate_markdown(run)

    # Patterns, the palette, quitting ----------------------------------------------------------

    @property
    def patterns(self) -> tuple[Pattern, ...]:
        return self.pattern_desk.patterns

    @property
    def read_only(self) -> bool:
        """The session shown has ended (here, or before it was opened): nothing changes it."""
        return self._reading or (self.live is not None and not self.live.state.is_open)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only what can act now is offered (the key bar shows it): a key pressed for anything else
        says why not (main_screen), and so does the palette (try_action)."""
        return self.why_not(action) is None

    async def action_quit(self) -> None:
        if self.read_only:  # nothing of an ended session is left open: no question to ask
            await self.quit_now()
            return
        self.confirm("quit", lambda: self.run_worker(self.quit_now(), exclusive=True))

    async def quit_now(self) -> None:
        await self.gates.stop_for_quit()
        self._close_session("quit")
        self.exit(0)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from palette_commands(self.try_action)
        yield from super().get_system_commands(screen)

    # SSH drop -----------------------------------------------------------------------------

    def close_for_signal(self, name: str) -> None:
        """SIGHUP or SIGTERM: stop the gates and journal the close (saves SESSION.md first)."""
        self.gates.abandon(f"the cockpit was closed by {name} while it ran")
        self._close_session(name)

