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
from cockpit.ui.lines import TextLines

SHOWN = 100
"""Status lines drawn (the latest; the rest are counted above them): a day of statuses
scrolls back far enough, and a frame never waits on a week of them."""
TIME_WIDTH = len("00:00:00")


def status_lines(statuses: tuple[StatusEntry, ...], width: int, console: Console) -> list[Text]:
    """Time, who posted it, and the line, one column each; a long line wraps under its own
    column (a word longer than the column is folded)."""
    who_width = 4 if any(entry.auto for entry in statuses) else 3
    indent = TIME_WIDTH + 1 + who_width + 1
    room = max(1, width - indent)
    lines: list[Text] = []
    for entry in statuses:
        # Styled as Rich's grid drew it: the time column's gap is dim, "you" is padded in its
        # own style, the gap before the text is plain.
        who = Text("auto".ljust(who_width), style="dim") if entry.auto else \
            Text("you".ljust(who_width), style="bold cyan")
        stamp = Text(time.strftime("%H:%M:%S ", time.localtime(entry.t)), style="dim")
        blank = Text.assemble((" " * (TIME_WIDTH + 1), "dim"), " " * (who_width + 1))
        for i, part in enumerate(wrap(Text(printable(entry.text)), room, console)):  # never markup
            lines.append((Text.assemble(stamp, who, " ") if i == 0 else blank) + part)
    return lines


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

    def build(self, width: int) -> list[Text]:
        if not self.statuses:
            return wrap(Text("No status yet: one is posted every few minutes, or press s.", style="dim"),
                        width, self.app.console)
        earlier = max(self.total, len(self.statuses)) - min(SHOWN, len(self.statuses))
        lines = [Text(f"{earlier} earlier: in the journal and the report (R)", style="dim")
                 ] if earlier > 0 else []
        return lines + status_lines(self.statuses[-SHOWN:], width, self.app.console)


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
