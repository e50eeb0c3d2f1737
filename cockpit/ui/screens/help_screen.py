"""`?`: every key of the cockpit and its screens, read from their bindings, so a key added to a
screen or a widget is in the help the moment it works."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingsMap
from textual.containers import ScrollableContainer, Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Label, Static

from cockpit.ui.screens.commands import COMMANDS, key_label


def _listed(bindings: BindingsMap | None) -> list[Binding]:
    return [] if bindings is None else [b for same in bindings.key_to_bindings.values() for b in same]


# Textual's own keys that every screen and widget inherits (and every scrolling one: the arrows, PgUp
# PgDn): listed once, with the main screen.
_INHERITED = {b for cls in (Screen, ModalScreen, Widget, ScrollableContainer)
              for b in _listed(cls._merged_bindings)}
_HELP = {c.action: c.help for c in COMMANDS}
# Textual's keys that come without words of their own: (title, what it does).
_WORDS = {"help_quit": ("Not quit", "ctrl+c copies a selection; q or ctrl+q quits")}


@dataclass(frozen=True)
class KeyHelp:
    """One line of the help: the keys (several when they do the same), what they are, what they do."""

    keys: str
    title: str
    does: str


def key_helps(bindings: Iterable[Binding]) -> list[KeyHelp]:
    """Bindings -> help lines, one per action (its keys together), in the bindings' order."""
    by_action: dict[str, list[Binding]] = {}
    for binding in bindings:
        by_action.setdefault(binding.action, []).append(binding)
    lines = []
    for action, same in by_action.items():
        name = action.removeprefix("app.").removeprefix("screen.")
        first = same[0]
        title, words = _WORDS.get(name, (first.description or name.replace("_", " "), ""))
        does = _HELP.get(name) or first.tooltip or words
        keys = " ".join(dict.fromkeys(key_label(b.key) for b in same))
        lines.append(KeyHelp(keys, title, does))
    return lines


def all_bindings(node: type[DOMNode] | DOMNode) -> list[Binding]:
    """Every binding a screen, widget or app has (its own and those it inherits)."""
    return _listed(node._bindings if isinstance(node, DOMNode) else node._merged_bindings)


def own_bindings(cls: type[DOMNode]) -> list[Binding]:
    """A cockpit class's bindings, without the ones every Textual screen and widget has."""
    return [b for b in all_bindings(cls) if b not in _INHERITED]


def help_sources() -> list[tuple[str, list[type[DOMNode]]]]:
    """Where keys work, and the classes whose bindings are the keys there (after the main screen
    the help puts the app's own, which work everywhere)."""
    from cockpit.ui.editor.pane import SessionEditor
    from cockpit.ui.screens.dialogs import (
        ConfirmDialog,
        DiskChangedDialog,
        NewSessionDialog,
        PhasePickerDialog,
        StatusDialog,
        TrustDialog,
    )
    from cockpit.ui.screens.history_screen import HistoryScreen
    from cockpit.ui.screens.main_screen import MainScreen
    from cockpit.ui.screens.patterns import NewPatternDialog, PatternBrowser
    from cockpit.ui.widgets.gate_panel import GateDetail, GatePanel, GateResultPane
    from cockpit.ui.widgets.pane_reader import PaneReader

    return [("Main screen", [MainScreen]),
            ("In the editor (tab; esc leaves)", [SessionEditor]),
            ("In the gate list", [GatePanel]),
            ("In the gate pane (shift+tab; ↑ ↓ PgUp PgDn scroll, ctrl+f zooms, / searches)",
             [GateResultPane, GateDetail]),
            ("In the zoomed gate pane", [PaneReader]),
            ("Pattern library (o)", [PatternBrowser]),
            ("New pattern (N)", [NewPatternDialog]),
            ("History (H)", [HistoryScreen]),
            ("A question (next/skip phase, cancel, end, quit)", [ConfirmDialog]),
            ("SESSION.md changed on disk", [DiskChangedDialog]),
            ("Trust this workspace? (before r first runs what its cockpit.toml names)", [TrustDialog]),
            ("Other dialogs", [NewSessionDialog, StatusDialog, PhasePickerDialog]),
            ("This help", [HelpScreen])]


def help_sections(app: App[object]) -> list[tuple[str, list[KeyHelp]]]:
    """What the help lists: the main screen's keys with the Textual ones it inherits, the app's,
    then each panel's, screen's and dialog's own, the gate list's marks after its keys."""
    from cockpit.ui.widgets.gate_panel import GatePanel

    (main_title, (main,)), *rest = help_sources()
    sections = [(main_title, key_helps(all_bindings(main))), ("Everywhere", key_helps(all_bindings(app)))]
    for title, classes in rest:  # per class: the same action means another thing in each
        lines = [line for cls in classes for line in key_helps(own_bindings(cls))]
        sections.append((title, list(dict.fromkeys(lines))))
        if classes == [GatePanel]:
            sections.append(marks_section())
    return sections


def marks_section() -> tuple[str, list[KeyHelp]]:
    """What each mark of the gate list says, read from the marks the list draws."""
    from cockpit.ui.widgets.gate_marks import ICON, MEANS, said_state

    return "Marks in the gate list", [KeyHelp(mark, said_state(state), MEANS[state])
                                      for state, (mark, _) in ICON.items()]


def help_renderable(sections: list[tuple[str, list[KeyHelp]]]) -> RenderableType:
    parts: list[RenderableType] = []
    for title, lines in sections:
        table = Table(box=None, show_header=False, expand=True, padding=(0, 1))
        table.add_column(no_wrap=True, style="bold", min_width=10)
        table.add_column(ratio=1)
        for line in lines:
            words = Text(line.title, style="bold")
            if line.does and line.does != line.title:
                words.append(f"  {line.does}", style="dim")
            table.add_row(line.keys, words)
        parts += [Text(title, style="bold underline"), table, Text()]
    return Group(*parts)


def help_plain(sections: list[tuple[str, list[KeyHelp]]]) -> str:
    """The help as plain lines (tests, and anyone who wants to grep it)."""
    out = []
    for title, lines in sections:
        out.append(title)
        out += [f"  {line.keys}  {line.title}  {line.does}".rstrip() for line in lines]
    return "\n".join(out)


class HelpScreen(ModalScreen[None]):
    """Every key, by where it works."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical {
        width: 100; max-width: 100%; height: 100%; max-height: 100%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    HelpScreen Label { width: 1fr; color: $text-muted; }
    HelpScreen VerticalScroll { height: 1fr; }
    """
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[tuple[str, list[KeyHelp]]] = []

    def compose(self) -> ComposeResult:
        self.sections = help_sections(self.app)
        with Vertical():
            yield Label("[b]Keys[/b]  —  esc, q or ? closes; ↑ ↓ PgUp PgDn scroll")
            with VerticalScroll():
                yield Static(help_renderable(self.sections))

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    @property
    def plain(self) -> str:
        return help_plain(self.sections)

    def action_close(self) -> None:
        self.dismiss()
