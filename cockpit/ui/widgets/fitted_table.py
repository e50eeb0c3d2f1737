"""A gate's table at any width: the table where its columns fit, a card per row where they do not.

A bench table has seven numeric columns; in an 80x24 pane Rich cut every number to `0.…`, and at
120x40 it folded the config into a column two cells wide. A number is never cut here: where the
numbers at their full width and each text column at a readable width do not fit, each row becomes
a card (its text first, then `title value` pairs, wrapped between pairs, never inside a number).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

TEXT_AT_LEAST = 16
"""Cells a text column (a config, a check's value) needs to read in a table; under it, cards."""


class FittedTable:
    """`table` (its columns' minimum widths set) where it fits the width it is given, else a card per
    row. `rows`: each row's cells with the column titles (`header`) and whether the column is a
    number or an icon; `caption`: the table's notes, under the cards too."""

    def __init__(self, table: Table, header: tuple[tuple[str, str], ...],
                 rows: Iterable[tuple[Text, ...]], caption: Text | None = None,
                 at_least: Sequence[int] = ()) -> None:
        self.table = table
        self.header = header
        """(title, kind) per column: kind "text", "number" or "icon"."""
        self.rows = list(rows)
        self.caption = caption
        self._needed = sum(least_widths(header, self.rows, at_least)) + 2 * len(header)
        """The table's least width, a cell of padding either side of each column: known once, not
        measured again at each draw."""

    def fits(self, width: int) -> bool:
        """The numbers at their full width and each text column at TEXT_AT_LEAST (a long path in
        it folds) fit `width`, with a cell of padding either side of each column."""
        return self._needed <= width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        if self.fits(width):
            yield self.table
            return
        for row in self.rows:
            yield from card(row, self.header, width, console)
        if self.caption is not None:
            yield self.caption

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(options.max_width, TEXT_AT_LEAST), options.max_width)


def least_widths(header: tuple[tuple[str, str], ...], rows: Sequence[tuple[Text, ...]],
                 at_least: Sequence[int] = ()) -> list[int]:
    """Each column's least width in a table: an icon 1, a number its widest cell (never cut), a
    text column its widest cell up to TEXT_AT_LEAST, or up to its own `at_least` where it gives
    one (a path, a command: folded narrower, it read in pieces); titles count."""
    widths = []
    for i, (title, kind) in enumerate(header):
        widest = max([cell_len(title), *(row[i].cell_len for row in rows)])
        least = at_least[i] if i < len(at_least) and at_least[i] else TEXT_AT_LEAST
        widths.append(1 if kind == "icon" else min(widest, least) if kind == "text" else widest)
    return widths


INDENT = 2


def card(row: tuple[Text, ...], header: tuple[tuple[str, str], ...], width: int,
         console: Console) -> list[Text]:
    """One row as lines of `width` at most: its icon and first text cell, then `title value` pairs
    for the rest, as many to a line as fit (a pair wider than a line wraps at its spaces)."""
    lead: list[Text] = []
    pairs: list[Text] = []
    led = False  # the first text cell (a config, a check) leads the card
    for (title, kind), cell in zip(header, row, strict=True):
        if not cell.plain.strip():
            continue
        if kind == "icon" or (kind == "text" and not led):
            led = led or kind == "text"
            lead.append(cell)
        else:
            pairs.append(Text.assemble((title, "dim"), " ", cell) if title else cell)
    head = Text(" ").join(lead)
    head.stylize_before("bold")  # where each card starts, in a column of them
    lines = _wrapped(head, width, console) if lead else []
    line = Text(" " * INDENT)
    for pair in pairs:
        if pair.cell_len > width - INDENT:  # a long value (a fix to apply): on lines of its own
            if line.plain.strip():
                lines.append(line)
            lines += [Text(" " * INDENT) + part for part in _wrapped(pair, width - INDENT, console)]
            line = Text(" " * INDENT)
            continue
        gap = "  " if line.plain.strip() else ""
        if line.cell_len + len(gap) + pair.cell_len > width:
            lines.append(line)
            line, gap = Text(" " * INDENT), ""
        line.append(gap)
        line.append_text(pair)
    if line.plain.strip():
        lines.append(line)
    return lines


def _wrapped(text: Text, width: int, console: Console) -> list[Text]:
    return list(text.wrap(console, max(1, width), overflow="fold"))
