"""The main screen: its columns, a layout that follows the window's width, and typing outside the
editor that never fires the single-letter actions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.keys import format_key, key_to_character
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget

from cockpit.ui.editor.typing_guard import TYPING_GAP_S, HeldKey, KeyGuard, Typing
from cockpit.ui.screens.commands import COMMANDS, bindings
from cockpit.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from cockpit.session.live import LiveSession
    from cockpit.ui.editor.pane import SessionEditor
    from cockpit.ui.widgets.gate_panel import GateDetail, GatePanel
    from cockpit.ui.widgets.gpu_panel import GpuPanel
    from cockpit.ui.widgets.header import SessionHeader
    from cockpit.ui.widgets.phases import PhasePanel
    from cockpit.ui.widgets.status_history import StatusHistory
    from cockpit.ui.widgets.tune_feed import TuneFeed

# Below these widths the left column gives up room: "medium" narrows it, "narrow" halves the
# window, and in both the focused editor takes the whole width (it needs ~60 columns to read).
MEDIUM_BELOW = 140
NARROW_BELOW = 100
KEPT_NOTICE_S = 120  # seconds a notice naming where replaced text was kept stays up
LIST_KEYS = {"j": "move(1)", "k": "move(-1)"}
"""The focused list's own actions, as its down and up bindings name them."""


def width_class(width: int) -> str:
    return "narrow" if width < NARROW_BELOW else "medium" if width < MEDIUM_BELOW else "wide"


class ScreenColumn(Vertical):
    """A screen column: no border, no content of its own, so Textual paints it as blank lines
    instead of running its style cache over the full height on every frame."""

    BLANK = True


def typed_character(key: str) -> str | None:
    """The character a key types, if any: Textual's key_to_character knows no "slash" (whose
    Unicode name is SOLIDUS), which its format_key does spell."""
    char = key_to_character(key)
    if char is None and "+" not in key and len(shown := format_key(key)) == 1:
        return shown
    return char


def printable_actions() -> dict[str, str]:
    """The actions on keys that also type a character: the ones stray typing could fire."""
    return {c.key: c.action for c in COMMANDS if typed_character(c.key) is not None}


class ScreenHost(Protocol):
    """What the main screen uses of the app: the widgets it lays out (the app holds them, so
    updates never depend on which screen is on top), the open session, and the start."""

    header: SessionHeader
    gpu_panel: GpuPanel
    phase_panel: PhasePanel
    gate_panel: GatePanel
    gate_detail: GateDetail
    status_history: StatusHistory
    tune: TuneFeed
    editor: SessionEditor
    live: LiveSession | None

    def start(self) -> None:
        """The screen is up: open the session, start the clocks."""
        ...

    def show_selected_gate(self, gate: str | None = None) -> None:
        """The gate pane shows the selected gate's newest run again."""
        ...

    def why_not(self, action: str) -> str | None:
        """Why the key's action cannot act now; None when it can."""
        ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True, about: str | None = None) -> None: ...


class MainScreen(Screen[None]):
    """The cockpit's own screen (dialogs push theirs on top)."""

    BLANK = True  # covered by its columns: painted as blank lines, not from its style cache
    # A zoomed panel keeps the header (the session, the clock) and the key bar (ctrl+f: back).
    ALLOW_IN_MAXIMIZED_VIEW = "#top, #bottom"
    BINDINGS = [
        # Tab always reaches the editor, from any panel (priority: before a widget's own tab).
        Binding("tab", "app.focus_editor", "Editor", priority=True,
                tooltip="Into the editor (SESSION.md), from any panel; esc leaves it"),
        # Textual's own, named so the help says what it reaches: tab always goes to the editor.
        Binding("shift+tab", "app.focus_previous", "Previous panel", show=False,
                tooltip="Focus goes back a panel: from the gates to the gate's output (↑ ↓ PgUp "
                        "PgDn scroll it), then the editor, then the status history"),
        Binding("ctrl+f", "app.zoom", "Zoom panel",
                tooltip="The focused panel fills the window; again: back"),
        *bindings(),
    ]

    def __init__(self, cockpit: ScreenHost, typing_gap_s: float = TYPING_GAP_S) -> None:
        super().__init__()
        self.cockpit = cockpit
        self.typing_gap_s = typing_gap_s
        self.guard = KeyGuard(printable_actions(), typing_gap_s)
        self._hold_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        # The columns are the screen's own children (no wrapper): each frame Textual repaints
        # every container around a change, and the clock changes every second.
        app = self.cockpit
        with ScreenColumn(id="top"):  # in a column of its own, a frame below never repaints it
            yield app.header
        with ScreenColumn(id="left"):
            with ScreenColumn(id="live"):  # what changes every second, apart from what does not:
                yield app.gpu_panel  # a frame then repaints only the widgets in this column
                yield app.phase_panel
            with ScreenColumn(id="quiet"):
                yield app.gate_panel
                yield app.tune.panel  # shown once the session holds a search
                yield app.status_history
        with ScreenColumn(id="right"):
            yield app.editor
            yield app.gate_detail
        with ScreenColumn(id="bottom"):
            yield KeyBar()

    def on_mount(self) -> None:
        self.cockpit.start()

    def watch_maximized(self, previous: Widget | None, maximized: Widget | None) -> None:
        """The gate pane zoomed (ctrl+f, /) or back: its reader wraps and searches what it shows,
        and its head is laid out again for its height (one line in an 80x24 pane, whole zoomed)."""
        detail = self.cockpit.gate_detail
        detail.zoom(maximized is detail)
        if detail in (previous, maximized):
            self.call_after_refresh(self.cockpit.show_selected_gate)

    def on_resize(self, event: events.Resize) -> None:
        wanted = width_class(event.size.width)
        for name in ("wide", "medium", "narrow"):
            self.set_class(name == wanted, name)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.set_class(self.cockpit.editor in event.widget.ancestors_with_self, "editing")

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        if self.focused is None or self.cockpit.editor not in self.focused.ancestors_with_self:
            self.remove_class("editing")

    def on_session_editor_left(self, message: SessionEditor.Left) -> None:
        self.set_focus(None)  # at once: a key that comes before the refresh types nothing
        self.remove_class("editing")  # shows the left column again, so the gates can take focus
        self.call_after_refresh(self.cockpit.gate_panel.focus)
        if message.then is not None:  # a key right after the escape: the panels', once they have focus
            self.call_after_refresh(self.app.post_message, message.then)

    def on_session_editor_changed_on_disk(self, _message: object) -> None:
        from cockpit.errors import CockpitError
        from cockpit.ui.screens.dialogs import DiskChangedDialog

        editor, app = self.cockpit.editor, self.app

        def chosen(take_disk: bool | None) -> None:
            try:
                if take_disk:
                    dirty = editor.dirty
                    kept = editor.take_disk()
                    if kept is None:
                        app.notify("Loaded SESSION.md from disk.")
                    else:  # the only word of where that text went: long enough to read and copy
                        said = ("Loaded SESSION.md from disk; your unsaved text is in" if dirty else
                                "SESSION.md was replaced on disk; the text you had is in")
                        app.notify(f"{said} {kept}", severity="warning", timeout=KEPT_NOTICE_S)
                        editor.border_subtitle = f"yours: {kept.name}"
                else:
                    theirs = editor.keep_mine()
                    app.notify(f"Kept your SESSION.md; the version on disk is in {theirs}",
                               timeout=KEPT_NOTICE_S)
            except CockpitError as exc:
                app.notify(str(exc), severity="error")

        if not editor.dirty:  # nothing of yours to lose: follow the file, no question asked
            chosen(True)
            return
        app.push_screen(DiskChangedDialog(editor.type_key), chosen)

    # Typing ---------------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """A printable key the focused widget did not take (the editor takes its own): held if it
        is an action; typing outside the editor is refused with a hint, never typed as keys and
        never into SESSION.md (see typing_guard); a key nothing uses is ignored."""
        char = event.character
        if not event.is_printable or char is None or len(char) != 1:
            return
        event.stop()
        event.prevent_default()
        decision = self.guard.press(event.key, char, event.time, self._list_keys())
        if isinstance(decision, Typing):
            if self._hold_timer is not None:
                self._hold_timer.stop()
            self.refuse_text("Typing")
        elif isinstance(decision, HeldKey):
            if self.typing_gap_s <= 0:
                self._release(decision)
            else:
                self._hold_timer = self.set_timer(self.typing_gap_s, lambda: self._release(decision))

    def on_paste(self, event: events.Paste) -> None:
        """A bracketed paste the focused widget did not take: refused in one line (no letter of it
        is a key; a letter held just before it was the start of it)."""
        event.stop()
        event.prevent_default()
        if self._hold_timer is not None:
            self._hold_timer.stop()
        self.guard.held = None
        if event.text:
            self.refuse_text("A paste")

    def refuse_text(self, what: str) -> None:
        """Text arrived outside the editor: say where text goes (one toast for a whole burst)."""
        editor = self.cockpit.editor
        if self.cockpit.live is None:
            said = f"{what} was not taken: no session is open, so there is no SESSION.md (ctrl+n starts one)."
        elif self.focused is not None and editor in self.focused.ancestors_with_self:
            said = f"{what} was not taken: SESSION.md is {editor.border_subtitle}."  # read-only
        else:
            said = f"{what} goes into SESSION.md in the editor: tab, then type or paste (esc leaves it)."
        self.cockpit.notify(said, severity="warning", markup=False, about="typing")

    def _list_keys(self) -> dict[str, str]:
        """j and k move like the arrows where a list has focus (the gates), a vim habit; held and
        judged like every letter, so a word typed there moves nothing."""
        return LIST_KEYS if hasattr(self.focused, "action_move") else {}

    def _release(self, hold: HeldKey) -> None:
        if not self.guard.release(hold):
            return
        if hold.action in LIST_KEYS.values():
            # the list's own action, run from the app's queue as its arrow binding is: called inside
            # this key's handler, the panel's Selected message did not reach the app (measured)
            self.app.call_later(self.app.run_action, hold.action, self.focused)
        elif (said := self.cockpit.why_not(hold.action)) is not None:  # it cannot act now: say why
            self.cockpit.notify(said, severity="warning", markup=False, about="refused")
        else:
            self.call_next(self.app.run_action, hold.action)
