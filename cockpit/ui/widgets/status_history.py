"""The status history: the session's status lines, automatic and manual, newest last.

Drawn line by line (only the rows in view are rendered) from the newest SHOWN statuses: a Rich
Table of every status, re-laid out whole for each new one, grew the TUI's memory and its frame
time with the length of the day. The journal and the report keep every status.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.text import Text
from textual.containers import VerticalScroll

from cockpit.printable import printable
from cockpit.session.state import StatusEntry
from cockpit.ui.widgets.lines import TextLines

SHOWN = 100
"""Status lines drawn (the latest; the rest are counted above them): a day of statuses
scrolls back far enough, and a frame never waits on a week of them."""
TIME_WIDTH = len("00:00:00")
TEXT_AT_LEAST = 24
"""Cells the text column keeps beside the time and who; in a narrower pane (80 columns) a long
line wraps under the time instead, so a status takes fewer rows."""


def status_lines(statuses: tuple[StatusEntry, ...], width: int, console: Console) -> list[Text]:
    """Time, who posted it, and the line, one column each; a long line wraps under its own
    column (a word longer than the column is folded), or under the time where that column would be
    narrower than TEXT_AT_LEAST."""
    return [line for lines in each_status(statuses, width, console) for line in lines]


def each_status(statuses: tuple[StatusEntry, ...], width: int, console: Console) -> list[list[Text]]:
    """`status_lines`, each status's lines apart."""
    who_width = 4 if any(entry.auto for entry in statuses) else 3
    indent = TIME_WIDTH + 1 + who_width + 1
    under_time = width - indent < TEXT_AT_LEAST
    blank = Text.assemble((" " * (TIME_WIDTH + 1), "dim"), " " * (who_width + 1))
    out = []
    for entry in statuses:
        # Styled as Rich's grid drew it: the time column's gap is dim, "you" is padded in its
        # own style, the gap before the text is plain.
        who = Text("auto".ljust(who_width), style="dim") if entry.auto else \
            Text("you".ljust(who_width), style="bold cyan")
        posted = Text(time.strftime("%H:%M:%S ", time.localtime(entry.t)), style="dim")
        stamp = Text.assemble(posted, who, " ")
        text = Text(printable(entry.text))  # never markup
        if under_time:
            out.append(wrap(stamp + text, width, console))
        else:
            out.append([(stamp if i == 0 else blank) + part
                        for i, part in enumerate(wrap(text, max(1, width - indent), console))])
    return out


def cut_to_rows(lines: list[Text], rows: int, width: int) -> list[Text]:
    """A status's lines cut to `rows`, the last ending in "…": a pane shorter than the newest
    status shows its start, the time it was posted, rather than its end alone."""
    if rows <= 0 or len(lines) <= rows:
        return lines
    end = lines[rows - 1].copy()
    if end.cell_len > width - 2:
        end.truncate(max(0, width - 2))
    end.append(" …", style="dim")
    return [*lines[:rows - 1], end]


def wrap(text: Text, width: int, console: Console) -> list[Text]:
    """`text` in lines of at most `width` cells, broken between words (a longer word is folded),
    without the spaces the break leaves at a line's end."""
    lines = list(text.wrap(console, width, overflow="fold")) or [Text("")]
    for line in lines:
        line.rstrip()
    return lines


class StatusLines(TextLines):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.statuses: tuple[StatusEntry, ...] = ()
        self.total = 0
        self.rows = 0
        """The rows in view (the pane's height): the latest status is cut to them."""

    def build(self, width: int) -> list[Text]:
        if not self.statuses:
            return wrap(Text("No status yet: one is posted every few minutes, or press s.", style="dim"),
                        width, self.app.console)
        earlier = max(self.total, len(self.statuses)) - min(SHOWN, len(self.statuses))
        lines = [Text(f"{earlier} earlier: in the journal and the report (R)", style="dim")
                 ] if earlier > 0 else []
        statuses = each_status(self.statuses[-SHOWN:], width, self.app.console)
        statuses[-1] = cut_to_rows(statuses[-1], self.rows, width)
        return lines + [line for status in statuses for line in status]


class StatusHistory(VerticalScroll):
    DEFAULT_CSS = """
    StatusHistory { border: round $primary; padding: 0 1; height: 1fr; }
    StatusHistory > StatusLines { width: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Status history"
        self._shown = -1
        self._lines = StatusLines(id="status-lines")

    def compose(self):  # type: ignore[no-untyped-def]
        yield self._lines

    def on_resize(self) -> None:
        if self.size.height != self._lines.rows:
            self._lines.rows = self.size.height
            self._lines.rebuild()

    def show(self, statuses: tuple[StatusEntry, ...], total: int | None = None) -> None:
        """`statuses`: the latest ones (a bounded fold's); `total`: how many the journal holds."""
        total = max(len(statuses), total or 0)
        if total == self._shown:
            return
        self._shown = total
        self.border_subtitle = f"{total} posted"
        self._lines.statuses, self._lines.total = statuses, total
        self._lines.rebuild()
        # Anchored to the newest line (Textual keeps an anchored view at the end whenever the
        # content grows, until the engineer scrolls up): scrolling once, before the layout that
        # gives the new lines their height, stopped a few lines short on a faster machine.
        self.anchor(bool(statuses))  # an empty history keeps its hint at the top
        if statuses:
            self.scroll_end(animate=False)
