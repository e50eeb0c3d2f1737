"""The status history: every status line of the session, automatic and manual, newest last."""

from __future__ import annotations

import time

from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from cockpit.session.state import StatusEntry


def status_lines(statuses: tuple[StatusEntry, ...]) -> Table:
    """Time, who posted it, and the line; wrapped lines stay under their own column."""
    table = Table.grid(padding=(0, 1))
    table.add_column(style="dim", no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1)
    for entry in statuses:
        table.add_row(
            time.strftime("%H:%M:%S", time.localtime(entry.t)),
            Text("auto", style="dim") if entry.auto else Text("you", style="bold cyan"),
            Text(entry.text),  # plain text: never parsed as markup
        )
    return table


class StatusHistory(VerticalScroll):
    DEFAULT_CSS = """
    StatusHistory { border: round $primary; padding: 0 1; height: 1fr; }
    StatusHistory > Static { width: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Status history"
        self._shown = -1
        self._lines = Static("", id="status-lines")

    def compose(self):  # type: ignore[no-untyped-def]
        yield self._lines

    def show(self, statuses: tuple[StatusEntry, ...]) -> None:
        if len(statuses) == self._shown:
            return
        self._shown = len(statuses)
        self.border_subtitle = f"{len(statuses)} posted"
        self._lines.update(status_lines(statuses) if statuses else
                           Text("No status yet: one is posted every few minutes, or press s.",
                                style="dim"))
        self.scroll_end(animate=False)
