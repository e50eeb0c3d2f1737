"""The fix a gate run names first (a command, a URL), on a row of its own under the pane's head:
never wrapped and never cut, so it is copied whole. At 80x24 the env gate's fix (an `export
LD_LIBRARY_PATH=...` of 97 characters) came in pieces of 34 cells in the pane and of 25, between
other columns' cells, in the zoom: no selection in tmux gave it back as one line.

Longer than the pane, the row scrolls sideways (its scrollbar shows there is more); a double-click
selects all of it, beyond the edge too, and ctrl+c copies it. It takes no focus: the pane's keys
stay the result's and the log's.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import ScrollableContainer, Vertical
from textual.widgets import Static

from cockpit.gates.view import Fix
from cockpit.printable import printable


class FixLine(Vertical):
    """What the fix is for, then the fix itself on one row that scrolls sideways."""

    DEFAULT_CSS = """
    FixLine { height: auto; display: none; }
    FixLine > #fix-what { color: $text-muted; }
    FixLine > ScrollableContainer { height: auto; overflow-x: auto; overflow-y: hidden; }
    FixLine #fix-line { width: auto; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.fix: Fix | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="fix-what")
        with ScrollableContainer(can_focus=False):
            yield Static("", id="fix-line")

    def show(self, fix: Fix | None) -> None:
        """The run's first fix, its row scrolled back to its start; none: the row is not there."""
        if fix == self.fix:
            return
        self.fix = fix
        self.display = fix is not None
        if fix is None:
            return
        what = Text.assemble("fix first · ", (printable(fix.what), "bold"))
        self.query_one("#fix-what", Static).update(what)
        self.query_one("#fix-line", Static).update(Text(printable(fix.line), style="bold cyan", no_wrap=True))
        self.query_one(ScrollableContainer).scroll_home(animate=False, immediate=True)
