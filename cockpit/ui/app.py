"""The cockpit TUI: header, phase timer, status history; intents go to the session core."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import signal
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Vertical
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Footer

from cockpit.clock import Clock, SystemClock
from cockpit.config import Config
from cockpit.errors import CockpitError
from cockpit.gates.catalog import GATES
from cockpit.session import events as ev
from cockpit.session import timer
from cockpit.session.journal import Event
from cockpit.session.live import LiveSession
from cockpit.session.state import SessionState
from cockpit.session.status import (
    Activity,
    compose_status,
    fmt_duration,
    next_status_due,
    terminal_title,
)
from cockpit.session.timer import TimerView
from cockpit.ui.commands import COMMANDS, bindings
from cockpit.ui.editor import SessionEditor
from cockpit.ui.gate_board import GateBoard
from cockpit.ui.gate_panel import GateDetail, GatePanel
from cockpit.ui.gate_results import gate_markdown
from cockpit.ui.gpu_panel import GpuPanel
from cockpit.ui.header import SessionHeader
from cockpit.ui.patterns import PatternProvider
from cockpit.ui.phases import PhasePanel
from cockpit.ui.status_history import StatusHistory
from cockpit.workspace import SessionRef, Workspace, create_session

if TYPE_CHECKING:
    from cockpit.patterns.library import Pattern
    from cockpit.telemetry.history import History
    from cockpit.telemetry.poller import Poller
    from cockpit.telemetry.sample import Snapshot
    from cockpit.telemetry.sampler import TelemetrySource

ActivitySource = Callable[[], Activity | None]


class Column(Vertical):
    """A screen column: no border, no content of its own, so Textual paints it as blank lines
    instead of running its style cache over the full height on every frame."""

    BLANK = True


class CockpitApp(App[int]):
    CSS_PATH = "cockpit.tcss"
    COMMANDS = App.COMMANDS | {PatternProvider}
    TITLE = "cockpit"
    BINDINGS = bindings()

    def __init__(
        self,
        workspace: Workspace,
        config: Config,
        session: SessionRef | None,
        clock: Clock | None = None,
        tick_s: float = 1.0,
        telemetry: TelemetrySource | None = None,
        gpu_every_s: float = 1.0,
        initial_gpu: tuple[Snapshot, History] | None = None,
    ) -> None:
        super().__init__()
        self.workspace = workspace
        self.config = config
        self.clock = clock or SystemClock()
        self.live: LiveSession | None = None
        self._initial = session
        self._tick_s = tick_s
        self._attached_t = self.clock.now()
        self._reported: set[str] = set()
        self._ticked_at = -1e9  # time.monotonic() of the last clock tick ...
        self._gpu_ticked_at = -1e9  # ... and of the last one a GPU poll made
        self._poller: Poller | None = None
        self._gpu_rearm: asyncio.TimerHandle | None = None
        self._trimmed = False
        self._gpu_settled = asyncio.Event()
        self._gpu_settled.set()
        # Live NVML unless a source (a recording) is given; opened in the worker, not here.
        self._telemetry = telemetry
        self._gpu_every_s = gpu_every_s
        self.gpu_history: History | None = initial_gpu[1] if initial_gpu else None
        self._initial_gpu = initial_gpu
        # The main screen's widgets, held so updates never depend on which screen is on top.
        self.header = SessionHeader(id="header")
        self.gpu_panel = GpuPanel(id="gpu")
        self.phase_panel = PhasePanel(id="phases")
        self.gate_panel = GatePanel(list(GATES), id="gates")
        self.gate_detail = GateDetail(id="gate-detail")
        self.status_history = StatusHistory(id="status-history")
        self.editor = SessionEditor(id="editor")
        self.patterns: tuple[Pattern, ...] = ()
        self.gates = GateBoard(self)
        # What runs now, for the status line; the first source that reports something wins.
        self.activity_sources: list[ActivitySource] = [self.gates.activity]

    # Layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        # The columns are the screen's own children (no wrapper): each frame Textual repaints
        # every container around a change, and the clock changes every second.
        with Column(id="top"):  # in a column of its own, a frame below never repaints it
            yield self.header
        with Column(id="left"):
            with Column(id="live"):  # what changes every second, apart from what does not:
                yield self.gpu_panel  # a frame then repaints only the widgets in this column
                yield self.phase_panel
            with Column(id="quiet"):
                yield self.gate_panel
                yield self.status_history
        with Column(id="right"):
            yield self.editor
            yield self.gate_detail
        with Column(id="bottom"):
            yield Footer()

    def on_mount(self) -> None:
        # The main screen is covered by its columns: painted as blank lines, not from its style
        # cache over the full height, on every frame (the dialogs keep their own screens).
        self.screen.BLANK = True  # type: ignore[misc]
        self._ui_loop = asyncio.get_running_loop()
        self._thread_context = contextvars.copy_context()  # Textual's active app, for thread callbacks
        self.load_patterns()
        if self._initial is not None:
            self.open_session(self._initial)
        else:
            self._ask_new_session(exit_on_cancel=True)
        self.set_interval(self._tick_s, self._on_tick_timer)
        if self._initial_gpu is not None:
            self.gpu_panel.show(*self._initial_gpu)
        if self._gpu_every_s > 0:  # 0: a still picture (screenshots)
            self.poll_gpu()
        if not self.is_headless:
            self._install_signal_handlers()

    def on_unmount(self) -> None:
        if self._gpu_rearm is not None:
            self._gpu_rearm.cancel()
        if self._poller is not None:
            self._poller.close()
        self._close_session("quit")

    # Session lifecycle --------------------------------------------------------------------

    def open_session(self, ref: SessionRef) -> None:
        self._close_session("switched session")
        try:
            live = LiveSession(ref)
        except CockpitError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.live = live
        self._attached_t = self.clock.now()
        state = live.state
        if state.attached_pid is not None:
            from cockpit.gates.process import pid_alive

            if pid_alive(state.attached_pid):
                self.notify(f"Another cockpit (pid {state.attached_pid}) has this session open.",
                            severity="warning")
            else:
                self.notify(f"The last cockpit (pid {state.attached_pid}) did not close cleanly; "
                            "state restored from the journal.", severity="warning")
        for problem in live.problems[:3]:
            self.notify(problem.describe(ref.journal), severity="warning", markup=False)
        self._append([ev.app_opened(self.clock.now(), os.getpid())])
        self.sub_title = state.id
        self.editor.open(ref.log_md)
        self.tick()
        self.gates.select(self.gate_panel.selected)

    def _close_session(self, reason: str) -> None:
        if self.editor.is_mounted:
            self.editor.flush()
        live, self.live = self.live, None
        if live is None:
            return
        try:
            live.append([ev.app_closed(self.clock.now(), os.getpid(), reason)])
        except CockpitError:
            pass  # the events before this one are already on disk
        finally:
            live.close()

    def _ask_new_session(self, exit_on_cancel: bool = False) -> None:
        def created(answer: tuple[str, str] | None) -> None:
            if answer is None:
                if exit_on_cancel and self.live is None:
                    self.exit(0, message='No session opened. Start one with: cockpit new "OBJECTIVE"')
                return
            objective, template = answer
            try:
                ref = create_session(self.workspace, self.config, objective, template,
                                     self.clock.now())
            except CockpitError as exc:
                self.notify(str(exc), severity="error", markup=False)
                return
            self.open_session(ref)
            self.notify(f"Session {ref.id} started: {self._current_phase_text()}", markup=False)

        from cockpit.ui.dialogs import NewSessionDialog  # dialogs load on first use: faster start

        self.push_screen(
            NewSessionDialog(sorted(self.config.templates), self.config.default_template), created
        )

    # The clock ----------------------------------------------------------------------------

    def _on_tick_timer(self) -> None:
        # While live GPU polls come at least once a clock tick, they tick the clock as they render:
        # one frame a second, not two. The timer ticks when they do not (no NVML, slow polls).
        now = time.monotonic()
        if now - self._gpu_ticked_at < 1.5 * self._tick_s:
            return
        if now - self._ticked_at >= 0.9 * self._tick_s:
            self.tick()

    def _tick_with_gpu_frame(self) -> None:
        """A GPU poll was just rendered: tick the clock now too, so both go out in one frame.
        Also when the timer ticked less than a tick ago (once, to take over from it), unless it
        ticked just now."""
        now = time.monotonic()
        since = now - self._ticked_at
        taking_over = now - self._gpu_ticked_at >= 1.5 * self._tick_s
        if since >= 0.9 * self._tick_s or (taking_over and since >= 0.2 * self._tick_s):
            self.tick()
            if self._gpu_every_s <= self._tick_s:
                self._gpu_ticked_at = now

    def tick(self) -> None:
        """Once a second: follow the journal, flag overruns, post a due status, redraw."""
        self._ticked_at = time.monotonic()
        live = self.live
        if live is None:
            return
        try:
            live.refresh()
        except CockpitError as exc:
            self._report_once(str(exc))
        now = self.clock.now()
        overrun = timer.overrun_events(live.state, now)
        if overrun and self._append(overrun):
            phase = overrun[0]["phase"]
            self.notify(f"{phase} is over its budget — wrap up, or move on with n.",
                        title="Over budget", severity="warning", timeout=10)
        self.editor.check_disk()
        state = live.state
        if state.is_open and now >= next_status_due(state, self.config.status_every_s,
                                                     self._attached_t):
            self.post_status(auto=True)
        self._render(now)

    # GPU telemetry: the poller's thread collects, the UI renders, then re-arms (no overlap) --

    def poll_gpu(self) -> None:
        if self._poller is None:
            from cockpit.telemetry.poller import Poller

            self._poller = Poller(self._open_gpu, self._gpu_delivered)
        if self._poller.request():
            self._gpu_settled.clear()

    def _open_gpu(self) -> TelemetrySource:
        """In the poller's thread, on the first poll: NVML (or the recording) and the history."""
        if self.gpu_history is None:
            # numpy: off the first frame's path, and without a BLAS thread per core (the TUI never
            # multiplies matrices; gates started later get the engineer's own setting back).
            saved = os.environ.get("OPENBLAS_NUM_THREADS")
            os.environ["OPENBLAS_NUM_THREADS"] = "1"
            try:
                from cockpit.telemetry.history import History
            finally:
                if saved is None:
                    os.environ.pop("OPENBLAS_NUM_THREADS", None)
                else:
                    os.environ["OPENBLAS_NUM_THREADS"] = saved
            self.gpu_history = History()
        if self._telemetry is None:
            from cockpit.telemetry.nvml import Nvml
            from cockpit.telemetry.sampler import Sampler

            # The slow lane (ECC, energy: ~3 ms of NVML) every 10 s, the top of the 5-10 s:
            # it is most of the telemetry thread's cost at 1 Hz.
            self._telemetry = Sampler(Nvml(), self.clock, slow_every_s=10.0)
        return self._telemetry

    def _gpu_delivered(self, result: Snapshot | BaseException) -> None:
        """From the poller's thread: hand the result to the UI thread."""
        with contextlib.suppress(RuntimeError):  # the app is gone
            self._ui_loop.call_soon_threadsafe(self._on_gpu_result, result, context=self._thread_context)

    def _on_gpu_result(self, result: Snapshot | BaseException) -> None:
        try:
            if isinstance(result, BaseException):
                self._report_once(f"GPU telemetry stopped: {result}", "warning")
                self._rearm_gpu(max(10.0, self._gpu_every_s))
                return
            self._show_gpu(result)
        finally:
            self._gpu_settled.set()

    def _show_gpu(self, snapshot: Snapshot) -> None:
        if not self._trimmed:  # NVML and numpy are in: what startup freed goes back to the OS
            self._trimmed = True
            from cockpit.memory import release_free_memory

            self.call_after_refresh(release_free_memory)
        if self.gpu_history is not None:
            self.gpu_history.append(snapshot)
        self.gpu_panel.show(snapshot, self.gpu_history)
        self._tick_with_gpu_frame()
        for problem in snapshot.problems:
            self._report_once(problem.describe(), "warning")
        if snapshot.available:
            self._rearm_gpu(self._gpu_every_s)

    def _rearm_gpu(self, delay: float) -> None:
        # A plain loop timer: a Textual Timer is an asyncio task per re-arm.
        self._gpu_rearm = self._ui_loop.call_later(delay, self.poll_gpu, context=self._thread_context)

    async def gpu_polled(self) -> None:
        """Wait until the poll in flight (if any) has been rendered (tests, screenshots)."""
        await self._gpu_settled.wait()

    def _view(self, now: float) -> TimerView:
        assert self.live is not None
        return timer.timer_view(self.live.state, now, self.config.phase_warn_fraction)

    def _render(self, now: float) -> None:
        if self.live is None or not self.header.is_mounted:
            return
        state = self.live.state
        view = self._view(now)
        operational = sum(1 for p in self.patterns if p.status == "operational")
        self.header.show(state, view, now, operational)
        self.phase_panel.show(view)
        self.status_history.show(state.statuses)
        self.gates.refresh()

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
        if not self._append([ev.status(self.clock.now(), line, auto)]):
            return
        self.notify(line, title="Status" if auto else "Status (you)", markup=False)
        if not self.is_headless and self._driver is not None:
            self._driver.write(terminal_title(live.state, line))
        try:
            live.write_status_file(line)
        except CockpitError as exc:
            self._report_once(str(exc))
        self._render(self.clock.now())

    def _append(self, events: list[Event]) -> bool:
        if self.live is None:
            return False
        try:
            self.live.append(events)
        except CockpitError as exc:
            self.notify(str(exc), severity="error", markup=False, timeout=15)
            return False
        return True

    def _report_once(self, message: str, severity: SeverityLevel = "error") -> None:
        """A problem that may recur every tick is shown once."""
        if message not in self._reported:
            self._reported.add(message)
            self.notify(message, severity=severity, markup=False, timeout=15)

    def _current_phase_text(self) -> str:
        view = self._view(self.clock.now())
        return view.current.name if view.current else "no phase running"

    # Intents ------------------------------------------------------------------------------

    def _intent(self, make: Callable[[SessionState, float], list[Event]]) -> bool:
        if self.live is None:
            self.notify("No session is open: ctrl+n starts one.", severity="warning")
            return False
        run = self.live.state.current_run
        try:
            events = make(self.live.state, self.clock.now())
        except CockpitError as exc:
            self.notify(str(exc), severity="warning", markup=False)
            return False
        ok = self._append(events)
        ended = next((e for e in events if e["type"] == ev.PHASE_ENDED), None)
        if ended:
            self.editor.flush()  # a phase change is a natural checkpoint for the log
        if ok and ended and run is not None and self.gpu_history and self.gpu_history.indices:
            self._append([ev.gpu_summary(ended["t"], run.phase,
                                         self.gpu_history.phase_summary(run.started_t, ended["t"]))])
        self._render(self.clock.now())
        return ok

    def action_next_phase(self) -> None:
        if self._intent(timer.advance):
            self.notify(f"Now: {self._current_phase_text()}", markup=False)

    def action_skip_phase(self) -> None:
        if self._intent(timer.skip):
            self.notify(f"Skipped; now: {self._current_phase_text()}", markup=False)

    def action_toggle_pause(self) -> None:
        if self._intent(timer.toggle_pause) and self.live is not None:
            self.notify("Paused: the clock is stopped." if self.live.state.paused else "Resumed.")

    def action_goto_phase(self) -> None:
        if self.live is None:
            return
        state = self.live.state
        current = state.current_run.phase if state.current_run else None

        def chosen(phase: str | None) -> None:
            if phase and self._intent(lambda s, now: timer.goto(s, now, phase)):
                self.notify(f"Now: {phase}", markup=False)

        from cockpit.ui.dialogs import PhasePickerDialog

        self.push_screen(PhasePickerDialog([p.name for p in state.phases], current), chosen)

    def action_post_status(self) -> None:
        if self.live is None:
            return

        def posted(doing: str | None) -> None:
            if doing is not None:
                self.post_status(auto=False, doing=doing or None)

        from cockpit.ui.dialogs import StatusDialog

        self.push_screen(StatusDialog(self.status_line()), posted)

    def offer_bench_decision(self, result: dict[str, Any]) -> None:
        """After a bench run: confirm KEEP (commit csrc/) or REVERT (restore csrc/); then, below
        0.5x, offer to move the phase timer to Profile. Git is touched only on a yes."""
        from cockpit.analysis import keep as git_keep
        from cockpit.ui.dialogs import ConfirmDialog

        keep = result["keep"]
        repo = self.workspace.root
        critical = result.get("level") == "CRITICAL"

        def then_profile() -> None:
            state = self.live.state if self.live else None
            if not critical or state is None or "Profile" not in [p.name for p in state.phases]:
                return
            current = state.current_run.phase if state.current_run else None
            if current == "Profile":
                return

            def moved(yes: bool | None) -> None:
                if yes and self._intent(lambda s, now: timer.goto(s, now, "Profile")):
                    self.notify("Phase: Profile. Run the profile gate before changing code.")

            self.push_screen(ConfirmDialog(
                f"{result['geomean_speedup']:.2f}x vs SDPA is CRITICAL: profile before changing "
                "code. Move the phase timer to Profile?"), moved)

        if keep["action"] not in ("keep", "revert"):
            then_profile()
            return
        try:
            stat = git_keep.csrc_diff_stat(repo)
        except CockpitError as exc:
            stat = f"(no git diff: {exc})"
        if keep["action"] == "keep":
            question = (f"{keep['summary']}\n\nCommit csrc/ with this message?\n  "
                        f"{keep['commit_message']}\n\n{stat or 'csrc/ has no uncommitted change'}")
        else:
            question = (f"{keep['summary']}\n\nRestore csrc/ to the last kept version "
                        f"(HEAD)? This discards:\n{stat or 'nothing: csrc/ has no uncommitted change'}")

        def answered(yes: bool | None) -> None:
            details: dict[str, Any] = {"improvement": keep.get("improvement"),
                                       "reference": keep.get("reference")}
            if yes:
                try:
                    if keep["action"] == "keep":
                        details["commit"] = git_keep.commit_csrc(repo, keep["commit_message"])
                        self.notify(f"Kept: committed csrc/ as {details['commit']}.", markup=False)
                    else:
                        details["restored"] = git_keep.restore_csrc(repo)
                        self.notify("Reverted: csrc/ is back to the last kept version.")
                except CockpitError as exc:
                    self.notify(str(exc), severity="error", markup=False, timeout=15)
                    details["error"] = str(exc)
            self._append([ev.decision(self.clock.now(), keep["action"], keep["summary"],
                                      bool(yes) and "error" not in details, **details)])
            then_profile()

        self.push_screen(ConfirmDialog(question), answered)

    # The editor ------------------------------------------------------------------------------

    def on_session_editor_changed_on_disk(self, message: SessionEditor.ChangedOnDisk) -> None:
        from cockpit.ui.dialogs import ConfirmDialog

        unsaved = " Your unsaved text goes to SESSION.md.mine." if self.editor.dirty else ""

        def chosen(take_disk: bool | None) -> None:
            try:
                if take_disk:
                    kept = self.editor.take_disk()
                    mine = f" Yours is in {kept.name}." if kept else ""
                    self.notify("Loaded SESSION.md from disk." + mine, markup=False)
                else:
                    self.editor.keep_mine()
                    self.notify("Kept your SESSION.md and wrote it over the file on disk.")
            except CockpitError as exc:
                self.notify(str(exc), severity="error", markup=False)

        self.push_screen(ConfirmDialog(
            "SESSION.md was changed on disk by something else (git checkout, another editor)."
            f"\n\ny: load the version on disk.{unsaved}\nn: keep yours and write it over the file."),
            chosen)

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
        return gate_markdown(run) if run else None

    # Patterns ---------------------------------------------------------------------------------

    def load_patterns(self) -> None:
        from cockpit.patterns.library import load_library

        try:
            self.patterns, problems = load_library(self.workspace.patterns_dir)
        except CockpitError as exc:
            self.notify(str(exc), severity="warning", markup=False)
            return
        for problem in problems[:3]:
            self.notify(f"pattern skipped: {problem.path.name}:{problem.line}: {problem.message}",
                        severity="warning", markup=False)

    def open_patterns(self, select: int | None = None) -> None:
        from cockpit.ui.patterns import PatternBrowser

        applied = self.live.state.applied_patterns if self.live else ()
        if select is None:
            select = self.gates.matched_pattern_id()
        self.push_screen(PatternBrowser(self.patterns, applied,
                                        lambda p: self.mark_applied(p, "from the pattern browser"),
                                        select))

    def mark_applied(self, pattern: Pattern, why: str) -> None:
        if self._append([ev.pattern_applied(self.clock.now(), pattern.id, pattern.title, why)]):
            self.notify(f"Pattern {pattern.id:02d} marked applied.", markup=False)
            self._render(self.clock.now())

    def action_open_patterns(self) -> None:
        self.open_patterns()

    def action_apply_matched_pattern(self) -> None:
        match = self.gates.matched_pattern()
        if match is None:
            self.notify("No pattern matched the selected gate's last run.", severity="warning")
            return
        pattern, why = match
        self.mark_applied(pattern, why)

    def action_new_pattern(self) -> None:
        from cockpit.ui.patterns import NewPatternDialog

        def written(values: dict[str, str] | None) -> None:
            if not values:
                return
            from cockpit.patterns.library import new_pattern
            from cockpit.patterns.triggers import output_trigger

            try:
                triggers = [output_trigger(values["trigger"])] if values["trigger"] else []
                evidence = [self.live.state.id] if self.live else []
                path = new_pattern(self.workspace.patterns_dir, values["title"], values["problem"],
                                   values["when"], values["solution"],
                                   int(values["time_saved_min"] or 0), triggers, evidence)
            except CockpitError as exc:
                self.notify(str(exc), severity="error", markup=False)
                return
            self.load_patterns()
            self.notify(f"Wrote {path.name}.", markup=False)

        self.push_screen(NewPatternDialog(), written)

    def action_end_session(self) -> None:
        if self.live is None or not self.live.state.is_open:
            return

        def confirmed(yes: bool | None) -> None:
            if yes and self._intent(timer.end_session):
                self.notify("Session ended. ctrl+n starts the next one.")

        from cockpit.ui.dialogs import ConfirmDialog

        self.push_screen(ConfirmDialog(f"End session {self.live.state.id} for good?"), confirmed)

    def action_new_session(self) -> None:
        self._ask_new_session()

    def action_run_gate(self) -> None:
        if self.live is not None:
            self.gates.request(self.gate_panel.selected)

    def action_cancel_gate(self) -> None:
        self.gates.cancel()

    def action_rerun_gate(self) -> None:
        if self.live is not None and self.live.state.gate_runs:
            self.gates.request(self.live.state.gate_runs[-1].gate)

    def on_gate_panel_selected(self, message: GatePanel.Selected) -> None:
        self.gates.select(message.gate, live_run=self.gates.run is not None
                          and self.gates.run.gate.name == message.gate)

    async def action_quit(self) -> None:
        await self.gates.stop_for_quit()
        self._close_session("quit")
        self.exit(0)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        for command in COMMANDS:
            yield SystemCommand(f"{command.title}  [{command.key}]", command.help,
                                _action_callback(self, command.action))
        yield from super().get_system_commands(screen)

    # SSH drop -----------------------------------------------------------------------------

    def _install_signal_handlers(self) -> None:
        # Plain handlers, not loop.add_signal_handler: after a hangup Textual's output thread can
        # block the event loop for good (SIGCONT restarts it on the dead tty), and a plain
        # handler still runs in the main thread, even inside that blocked write.
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGHUP, signal.SIGTERM):
            signal.signal(sig, lambda signum, _frame: self.on_terminal_signal(signum, loop))

    def on_terminal_signal(self, signum: int, loop: asyncio.AbstractEventLoop) -> None:
        """SSH drop or kill: journal first, then leave (at once if the terminal is gone)."""
        name = signal.Signals(signum).name
        self.gates.abandon(f"the cockpit was closed by {name} while it ran")
        self._close_session(name)  # saves SESSION.md first
        if signum == signal.SIGHUP:
            os._exit(0)  # nothing to restore on a hung-up terminal; Textual's shutdown would block
        loop.call_soon_threadsafe(self.exit, 0)


def _action_callback(app: CockpitApp, action: str) -> Callable[[], object]:
    return lambda: app.run_action(action)
