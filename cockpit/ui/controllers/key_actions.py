"""What each key does (screens/commands.py names them): the session's moves, the gates, the patterns, the
report, the History and Help screens, each one line into the desk that does it. A mixin of the
app, typed by what it uses of the app (`KeysHost`), so it never imports the app itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from cockpit.ui.controllers.host import CockpitHost
from cockpit.ui.controllers.key_states import KeyState, why_not

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.widget import Widget

    from cockpit.ui.controllers.gate_board import GateBoard
    from cockpit.ui.controllers.pattern_desk import PatternDesk
    from cockpit.ui.editor.pane import SessionEditor
    from cockpit.ui.widgets.gate_panel import GatePanel

# The session's moves (ui/controllers/session_actions.py) load at the first key that makes one: an
# idle cockpit never needs them. Besides those moves, these ask first: a key pressed by mistake
# must not kill a build or close the cockpit.
CONFIRM = {
    "cancel_gate": "Cancel {gate} (its process group is stopped) and drop the queue?",
    "quit": "Quit the cockpit? The session stays open for next time.",
}


class KeysHost(CockpitHost, Protocol):
    """The app as its keys see it: the helpers' view, plus the desks and screens the keys reach."""

    gates: GateBoard
    pattern_desk: PatternDesk
    editor: SessionEditor

    @property
    def screen(self) -> Screen[object]: ...

    @property
    def main_screen(self) -> Screen[object]: ...

    @property
    def focused(self) -> Widget | None: ...

    @property
    def read_only(self) -> bool: ...

    def run_action(self, action: str) -> Awaitable[bool]: ...

    def confirm(self, action: str, then: Callable[[], object], **words: str) -> None: ...

    def show_selected_gate(self, gate: str | None = None) -> None: ...

    def key_state(self) -> KeyState: ...

    def why_not(self, action: str) -> str | None: ...

    def follow_state(self) -> None: ...


class KeyActions:
    """The app's `action_*` methods behind the keys and the palette, and the gate list's choice."""

    def key_state(self: KeysHost) -> KeyState:
        """What the keys depend on now (key_states.py decides what each can do)."""
        from cockpit.gates.catalog import wanting_workload

        live, run = self.live, self.gates.run
        runs = live.state.gate_runs if live is not None else ()
        focused = self.focused
        return KeyState(session=live is not None, ended=self.read_only,
                        editing=focused is not None and self.editor in focused.ancestors_with_self,
                        running=run.gate.name if run is not None else None, queued=bool(self.gates.queue),
                        selected=self.gate_panel.selected, needs_workload=wanting_workload(self.config),
                        last_run=runs[-1].gate if runs else None)

    def why_not(self: KeysHost, action: str) -> str | None:
        """Why the key or command `action` cannot act now, in one line; None when it can."""
        return why_not(action, self.key_state())

    def try_action(self: KeysHost, action: str) -> Awaitable[bool] | None:
        """Run `action` (the palette's way in), or say in a toast why it cannot act now."""
        said = self.why_not(action)
        if said is not None:
            self.notify(said, severity="warning", markup=False, about="refused")
            return None
        return self.run_action(action)

    def confirm(self: KeysHost, action: str, then: Callable[[], object], **words: str) -> None:
        """Ask the CONFIRM question of `action` (its {words} filled in); run `then` on y."""
        from cockpit.ui.controllers import session_actions
        session_actions.confirm(self, CONFIRM[action].format(**words), then)

    def action_focus_editor(self: KeysHost) -> None:
        if self.screen is self.main_screen:
            self.editor.area.focus()

    def action_zoom(self: KeysHost) -> None:
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
        elif screen.focused is not None:
            screen.maximize(screen.focused)

    def action_search_gate(self: KeysHost) -> None:
        if self.screen is self.main_screen:
            self.gate_detail.search_zoomed()

    # The session --------------------------------------------------------------------------

    def action_next_phase(self: KeysHost) -> None:
        from cockpit.ui.controllers import session_actions
        session_actions.next_phase(self)

    def action_skip_phase(self: KeysHost) -> None:
        from cockpit.ui.controllers import session_actions
        session_actions.skip_phase(self)

    def action_toggle_pause(self: KeysHost) -> None:
        from cockpit.ui.controllers import session_actions
        session_actions.toggle_pause(self)

    def action_goto_phase(self: KeysHost) -> None:
        from cockpit.ui.controllers import session_actions
        session_actions.goto_phase(self)

    def action_post_status(self: KeysHost) -> None:
        from cockpit.ui.controllers import session_actions
        session_actions.ask_status(self)

    def action_end_session(self: KeysHost) -> None:
        from cockpit.ui.controllers import session_actions
        session_actions.end_session(self)

    def action_new_session(self: KeysHost) -> None:
        from cockpit.ui.controllers import session_actions
        session_actions.ask_new_session(self)

    def action_toggle_log(self: KeysHost) -> None:
        shown = self.gate_detail.toggle_raw_log()
        said = "The gate's raw log; l: its result again." if shown else "The gate's result; l: its raw log."
        self.notify(said, timeout=3)

    def action_export_report(self: KeysHost) -> None:
        from cockpit.ui.controllers.report_actions import export_report

        export_report(self, "Mid-session" if self.live is not None and self.live.state.is_open
                      else "The ended session")

    def action_open_history(self: KeysHost) -> None:
        from cockpit.ui.screens.history_screen import HistoryScreen

        self.push_screen(HistoryScreen(self.workspace, self.clock.now()))

    def action_help(self: KeysHost) -> None:
        from cockpit.ui.screens.help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    # Patterns -----------------------------------------------------------------------------

    def open_patterns(self: KeysHost, select: int | None = None) -> None:
        """The pattern browser, on pattern `select` if given (the palette's pattern search)."""
        self.pattern_desk.browse(select)

    def action_open_patterns(self: KeysHost) -> None:
        self.pattern_desk.browse()

    def action_apply_matched_pattern(self: KeysHost) -> None:
        self.pattern_desk.apply_matched()

    def action_new_pattern(self: KeysHost) -> None:
        self.pattern_desk.write_new()

    # Gates --------------------------------------------------------------------------------

    def action_run_gate(self: KeysHost) -> None:
        self.gates.request(self.gate_panel.selected)

    def action_cancel_gate(self: KeysHost) -> None:
        run = self.gates.run
        if run is None:
            self.gates.cancel()  # only drops the queue, if any
            return
        self.confirm("cancel_gate", self.gates.cancel, gate=run.gate.name)

    def action_rerun_gate(self: KeysHost) -> None:
        if self.live is not None and self.live.state.gate_runs:
            self.gates.request(self.live.state.gate_runs[-1].gate)

    def on_gate_panel_selected(self: KeysHost, message: GatePanel.Selected) -> None:
        self.show_selected_gate(message.gate)

    def show_selected_gate(self: KeysHost, gate: str | None = None) -> None:
        """The pane shows `gate` (the selected one): also after a zoom, laid out again for its height
        (its head whole zoomed, in one line in an 80x24 pane)."""
        gate = gate or self.gate_panel.selected
        self.gates.select(gate, live_run=self.gates.run is not None and self.gates.run.gate.name == gate)
        self.follow_state()  # r is offered on a gate that can run, not on one that needs a workload
