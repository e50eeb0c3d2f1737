"""The zoomed gate pane's reader: the run's result or its raw log with long lines wrapped, never cut,
and `/` search (each match highlighted, the current one scrolled into view, Enter or n the next, N
the one before), the search bar under it.

The pane's Log cuts a line at the pane's edge (it scrolls sideways, a line at a time): a compiler
error or a path is read in the zoom. The log's lines are folded to the width as they are drawn
(a row per width, breaking after the last space that fits: a word is cut only where it is longer
than a row), so a 10,000-line log costs one pass to count its rows, not a Rich layout of every line.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence

from rich.cells import cell_len, get_character_cell_size
from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Static

from cockpit.printable import printable

Match = tuple[int, int, int]
"""A search hit: its line, and its first and past-last characters in that line."""
MATCH = Style(color="black", bgcolor="yellow")
CURRENT = Style(color="black", bgcolor="bright_green", bold=True)


def find_matches(lines: Sequence[str], term: str) -> list[Match]:
    """Every occurrence of `term` in `lines`, any case, in reading order."""
    if not term:
        return []
    pattern = re.compile(re.escape(term), re.IGNORECASE)
    return [(i, m.start(), m.end()) for i, line in enumerate(lines) for m in pattern.finditer(line)]


def fold(line: str, width: int) -> list[int]:
    """Where each row of `line` starts when it is wrapped to `width` cells: after the last space
    that fits in the row (words stay whole; the spaces a row ends with are not drawn), at the edge
    only where a word is longer than a row (a long path)."""
    width = max(1, width)
    if line.isascii():
        if len(line) <= width:
            return [0]
        starts, start = [0], 0
        while len(line) - start > width:
            space = line.rfind(" ", start + 1, start + width + 1)  # one just past the edge ends the row too
            start = _past_spaces(line, space + 1) if space > start else start + width
            if start < len(line):
                starts.append(start)
        return starts
    if cell_len(line) <= width:
        return [0]
    starts, used, space = [0], 0, -1
    for i, char in enumerate(line):
        cells = get_character_cell_size(char)
        if char == " ":
            space = i
        elif used + cells > width and used:
            # the word since the row's last space goes on the next row, a longer one is cut
            starts.append(space + 1 if space > starts[-1] else i)
            used = cell_len(line[starts[-1]:i])
        used += cells
    return starts if starts[-1] < len(line) else starts[:-1]


def _past_spaces(line: str, at: int) -> int:
    while at < len(line) and line[at] == " ":
        at += 1
    return at


class PaneReader(ScrollView, can_focus=True):
    """Lines (a log's) folded to the width, or a renderable (a result) laid out at it; searchable."""

    # The scrollbar's column kept whether or not the text is long: a result is laid out once for a width.
    DEFAULT_CSS = """
    PaneReader { height: 1fr; overflow-x: hidden; scrollbar-gutter: stable; }
    """
    # Priority: before the main screen's typing guard, which takes every printable key it sees.
    BINDINGS = [
        Binding("slash", "search", "search", priority=True,
                tooltip="Search what the zoomed pane shows: Enter keeps the match, n the next, N the "
                        "one before, esc closes the search"),
        Binding("n", "step(1)", "next", priority=True, tooltip="The next match"),
        Binding("N", "step(-1)", "previous", priority=True, tooltip="The match before"),
        Binding("enter", "step(1)", "next", show=False, priority=True),
    ]

    class SearchAsked(Message):
        """`/`: the pane opens its search bar."""

    class Stepped(Message):
        """n or N moved to another match."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._texts: list[Text] = []
        self._renderable: RenderableType | None = None
        """A result: laid out again at each width (its lines are then the texts)."""
        self._width = -1
        self._starts: list[list[int]] = []
        """Per line, where each of its rows starts (characters)."""
        self._first_row: list[int] = []
        self._top_line = 0
        self.term = ""
        self.matches: list[Match] = []
        self.current = -1
        self._by_line: dict[int, list[tuple[int, int, int]]] = {}
        """line -> (start, end, index into matches)."""

    # What it shows ------------------------------------------------------------------------------

    def show_lines(self, lines: Iterable[str], top_line: int = 0) -> None:
        """A log's lines, folded to the width, line `top_line` at the top (where the pane's log was)."""
        self._renderable = None
        self._texts = [Text(printable(line)) for line in lines]
        self._top_line = top_line
        self._laid_out(force=True)

    def append_lines(self, lines: Iterable[str], keep: int) -> None:
        """A live run's new lines; the last `keep` lines are kept. Read at its end, it follows them."""
        if self._renderable is not None:
            return
        following = self.scroll_offset.y >= self.max_scroll_y
        self._texts += [Text(printable(line)) for line in lines]
        dropped = max(0, len(self._texts) - keep)
        del self._texts[:dropped]
        self._top_line = max(0, self._top_line - dropped)
        self._laid_out(force=True)
        if following and not self.term:
            self.scroll_end(animate=False, immediate=True)

    def show_renderable(self, renderable: RenderableType) -> None:
        """A result, laid out at the width as the pane draws it (its tables fitted, its words wrapped)."""
        self._renderable = renderable
        self._top_line = 0
        self._laid_out(force=True)

    @property
    def plain(self) -> list[str]:
        return [text.plain for text in self._texts]

    def _laid_out(self, force: bool = False) -> None:
        width = self.scrollable_content_region.width or 80
        if width == self._width and not force:
            return
        self._width = width
        top_line = self._top_line  # before the rows change (a clamped scroll would move it)
        if self._renderable is not None:
            console = self.app.console
            rendered = console.render_lines(self._renderable, console.options.update_width(width), pad=False)
            self._texts = [Text.assemble(*((s.text, s.style or "") for s in line if not s.control))
                           for line in rendered]
        self._starts = [fold(text.plain, width) for text in self._texts]
        self._first_row, rows = [], 0
        for starts in self._starts:
            self._first_row.append(rows)
            rows += len(starts)
        self.virtual_size = Size(width, rows)
        if self.term:
            self.search(self.term, keep=True)
        elif self._first_row:  # the same line at the top, however many rows the lines above now take
            self._top_line = min(top_line, len(self._first_row) - 1)
            self.scroll_to(y=self._first_row[self._top_line], animate=False, immediate=True)
        self.refresh()

    def on_resize(self) -> None:
        self._laid_out()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._first_row:  # the line at the top, kept when the width changes
            self._top_line = max(0, bisect_right(self._first_row, round(new_value)) - 1)

    # Search -------------------------------------------------------------------------------------

    def search(self, term: str, keep: bool = False) -> int:
        """Highlight every match of `term` and scroll to the first (`keep`: to the one that was
        current, the text laid out anew); the number of matches."""
        if bool(term) != bool(self.term):
            self.refresh_bindings()  # n and N are the search's now, or the cockpit's again
        self.term = term
        self.matches = find_matches(self.plain, term)
        self._by_line = {}
        for index, (line, start, end) in enumerate(self.matches):
            self._by_line.setdefault(line, []).append((start, end, index))
        was = self.current
        self.current = (min(max(was, 0), len(self.matches) - 1) if keep else 0) if self.matches else -1
        self._show_current()
        self.refresh()
        return len(self.matches)

    def action_search(self) -> None:
        self.post_message(self.SearchAsked())

    def action_step(self, by: int) -> None:
        if not self.matches:
            self.app.bell()
            return
        self.current = (self.current + by) % len(self.matches)
        self._show_current()
        self.refresh()
        self.post_message(self.Stepped())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """n, N and Enter are the search's while there is one, matches or none (the key bar shows
        them then); without one they are the cockpit's (n: next phase)."""
        return action != "step" or bool(self.term)

    def row_of(self, match: Match) -> int:
        """The row (from the top of the text) the start of `match` is drawn on."""
        line, start, _ = match
        return self._first_row[line] + bisect_right(self._starts[line], start) - 1

    def _show_current(self) -> None:
        if 0 <= self.current < len(self.matches):
            row = self.row_of(self.matches[self.current])
            if not self.scroll_offset.y <= row < self.scroll_offset.y + self.size.height:
                self.scroll_to(y=max(0, row - self.size.height // 3), animate=False, immediate=True)

    # Drawing ------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        row = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        line = bisect_right(self._first_row, row) - 1
        if line < 0 or line >= len(self._texts) or row - self._first_row[line] >= len(self._starts[line]):
            return Strip.blank(width, base)
        starts = self._starts[line]
        k = row - self._first_row[line]
        start = starts[k]
        end = starts[k + 1] if k + 1 < len(starts) else len(self._texts[line].plain)
        text = self._texts[line][start:end]
        for m_start, m_end, index in self._by_line.get(line, ()):
            if m_start < end and m_end > start:
                text.stylize(CURRENT if index == self.current else MATCH,
                             max(m_start, start) - start, min(m_end, end) - start)
        segments = [Segment(printable(s.text), s.style) for s in text.render(self.app.console)]
        return Strip(segments).apply_style(base).adjust_cell_length(width, base)


class SearchBar(Horizontal):
    """The zoomed pane's search: the term, and which match of how many is shown."""

    DEFAULT_CSS = """
    SearchBar { height: 1; display: none; }
    SearchBar > Input, SearchBar > Input:focus { border: none; height: 1; width: 1fr; padding: 0 1; }
    SearchBar > Static { width: auto; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        # Made here, not in compose: the bar is mounted at the first zoom, and its term is focused
        # in the same breath, before the bar has composed its children.
        self.term = Input(placeholder="search: Enter keeps it, then n next, N previous; esc closes",
                          id="search-term")
        self._found = Static("", id="search-count")

    def compose(self) -> ComposeResult:
        yield self.term
        yield self._found

    def count(self, current: int, found: int, term: str) -> None:
        said = f"{current + 1}/{found}" if found else "no match" if term else ""
        self._found.update(said)
