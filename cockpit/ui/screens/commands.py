"""Every action the cockpit offers: one table feeds the key bindings, footer and command palette."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.markup import escape
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.keys import format_key

if TYPE_CHECKING:
    from textual.command import Provider


@dataclass(frozen=True)
class Command:
    action: str
    key: str
    title: str
    help: str
    footer: bool = True


COMMANDS: tuple[Command, ...] = (
    Command("next_phase", "n", "Next phase", "End the current phase as done and start the next"),
    Command("skip_phase", "K", "Skip phase", "End the current phase as skipped and start the next"),
    Command("goto_phase", "g", "Go to phase…", "Leave the current phase and enter any other one"),
    Command("toggle_pause", "p", "Pause/resume", "Stop the clock; paused time is not counted"),
    Command("post_status", "s", "Post status", "Post a status line now, saying what you are doing"),
    Command("run_gate", "r", "Run gate", "Run the selected gate (queued if another one runs)"),
    Command("cancel_gate", "x", "Cancel gate", "Stop the running gate and drop the queue"),
    Command("rerun_gate", "full_stop", "Rerun last", "Run the last gate again", footer=False),
    Command("toggle_log", "l", "Log/result", "The gate's raw log instead of its result, and back",
            footer=False),
    Command("search_gate", "slash", "Search the gate pane…",
            "Zoom the gate pane and search its result or log (Enter keeps a match, n next, N previous)",
            footer=False),
    Command("open_patterns", "o", "Patterns", "Browse the pattern library (fuzzy search)"),
    Command("apply_matched_pattern", "A", "Apply pattern",
            "Mark the pattern that matched the last gate run as applied", footer=False),
    Command("new_pattern", "N", "New pattern…", "Write down a lesson as a pattern", footer=False),
    Command("end_session", "E", "End session",
            "Close the session for good (asks first) and write its report"),
    Command("export_report", "R", "Report", "Write REPORT.md, report.html and report.json now"),
    Command("open_history", "H", "History", "Every session side by side, with the trend",
            footer=False),
    Command("new_session", "ctrl+n", "New session…", "Start a new session with an objective"),
    Command("quit", "q", "Quit", "Leave the cockpit; an open session stays open for next time"),
    Command("help", "question_mark", "Help", "Every key of every screen, and what it does"),
)



def key_label(key: str) -> str:
    """A key as the help and the palette spell it: `.` for full_stop, `?`, `ctrl+n`, `esc`, `↑`."""
    return format_key(key)


def bindings() -> list[BindingType]:
    """The main screen's keys (the History screen and the dialogs have their own): each runs
    the app's action of that name."""
    return [Binding(c.key, f"app.{c.action}", c.title, show=c.footer) for c in COMMANDS]


def palette_commands(run_action: Callable[[str], object]) -> Iterator[SystemCommand]:
    """Every command in the palette, its key beside its title (`[/]` escaped: it is not markup);
    `run_action` runs one, or says why it cannot act now."""
    for command in COMMANDS:
        yield SystemCommand(f"{command.title}  {escape(f'[{key_label(command.key)}]')}", command.help,
                            _runs(run_action, command.action))


def _runs(run_action: Callable[[str], object], action: str) -> Callable[[], object]:
    return lambda: run_action(action)


def pattern_provider() -> type[Provider]:
    """The palette's pattern search, loaded when the palette first opens."""
    from cockpit.ui.screens.patterns import PatternProvider

    return PatternProvider
