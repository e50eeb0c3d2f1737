"""Markdown highlighting for the editor pane without tree-sitter: the map Textual's TextArea
draws from, `{line index: [(start byte, end byte or None, highlight name), ...]}`, as its
tree-sitter markdown highlighting fills it (markdown_blocks.py reads each line).

Textual rebuilds the map after every edit, so a rebuild reads only what changed: a line's marks
depend on its text and the state it starts in, both cached, and reading stops once a line starts
in the same state as before the edit. Two things reach past a line: a setext underline makes
the paragraph above it a heading, and within a line the names come in the order tree-sitter
returns its captures, the order of each name's first capture in the document (where two marks
overlap, the later is drawn on top, so that order is part of what the user sees).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cockpit.ui.editor.markdown_blocks import LITERAL, SPECIAL, Mark, State, end_marks, scan_line

NAMES = ("heading", LITERAL, SPECIAL, "heading.marker", "punctuation.delimiter", "none", "link.label",
         "link.uri", "list.marker", "string.escape")  # the outer node first where two start together
SETEXT, PARAGRAPH, MULTI = 1, 2, 4  # an entry's flags; then a bit per name (<< 3); a paragraph's byte << 16
NAME_BITS = ((1 << len(NAMES)) - 1) << 3


class Lines(dict[str, "Entry"]):
    """The lines read from one starting state: text -> (marks, the table of the state after, flags)."""

    def __init__(self, state: State) -> None:
        super().__init__()
        self.state = state


Entry = tuple[list[Mark], Lines, int]


class LineMarks(dict[int, list[Mark]]):
    """The highlight map as Textual reads it (`map[line]`, one line at a time), kept as a list
    of each line's marks so that an edit splices it instead of renumbering every line."""

    def __init__(self, per_line: list[list[Mark]]) -> None:
        super().__init__()
        self.per_line = per_line

    def __missing__(self, line: int) -> list[Mark]:
        return self.per_line[line] if 0 <= line < len(self.per_line) else []

    def __bool__(self) -> bool:
        return True

    def as_dict(self) -> dict[int, list[Mark]]:
        return {line: marks for line, marks in enumerate(self.per_line) if marks}


class MarkdownMarks:
    """One document's highlighting, updated edit by edit: `update(document.lines)`."""

    def __init__(self) -> None:
        self.reset(0)

    def reset(self, front: int) -> None:
        self.tables: dict[State, Lines] = {}
        self.read = 0  # lines read into the tables
        self.front = front  # lines of front matter at the top
        self.lines: list[str] = []
        self.starts: list[Lines] = []  # the table each line starts in
        self.end = self.table(State())  # the table after the last line
        self.per_line: list[list[Mark]] = [[]]  # each line's marks, and the line after the last's
        self.first: dict[str, tuple[int, int, int]] = {}  # each name's first mark: line, byte, tie

    def table(self, state: State) -> Lines:
        if state not in self.tables:
            self.tables[state] = Lines(state)
        return self.tables[state]

    def entry(self, table: Lines, line: str) -> Entry:
        found = table.get(line)
        if found is None:
            marks, after, paragraph = scan_line(table.state, line)
            names = {NAMES.index(name) for _, _, name in marks}
            flags = sum(1 << (3 + name) for name in names) | (MULTI if len(names) > 1 else 0)
            if paragraph is not None:
                flags |= SETEXT if paragraph < 0 else PARAGRAPH | paragraph << 16
            found = table[line] = (marks, self.table(after), flags)
            self.read += 1
        return found

    def start(self, line: int) -> Lines:
        return self.starts[line] if line < len(self.starts) else self.end

    def update(self, lines: Sequence[str]) -> LineMarks:
        """The map for the document now, reading again only the lines an edit changed."""
        new = list(lines)
        front = _front_matter(new)
        if self.read > 4 * len(new) + 1000 or front != self.front:  # lines typed and gone since
            self.reset(front)
        old = self.lines
        top = _common_prefix(old, new)
        if top == len(old) == len(new):
            return LineMarks(self.per_line)
        while top > 0 and self.start(top).state.leaf == "p":
            top -= 1  # from the paragraph's first line: an underline below may make it a heading
        shift, unchanged = len(new) - len(old), len(new) - _common_suffix(old, new, top)
        table, starts, per_line = self.start(top), [], []
        firsts: dict[str, tuple[int, int, int]] = {}
        unseen = NAME_BITS
        index = top
        while index < len(new):
            if index >= unchanged and table is self.starts[index - shift] and table.state.leaf != "p":
                break  # in step with the last reading again: the rest is as it was
            starts.append(table)
            marks, table, flags = self.entry(table, new[index]) if index >= front else ([], table, 0)
            per_line.append(marks)
            if flags & unseen:
                for start, _, name in marks:
                    place = (index, start, NAMES.index(name))
                    firsts[name] = min(firsts.get(name, place), place)
                unseen &= ~flags
            if flags & SETEXT:
                self.setext_heading(new, top, index, starts, per_line, firsts)
            index += 1
        end = index - shift  # where the tail that is as it was starts, numbered before the edit
        if index == len(new):
            self.end = table
            per_line.append(end_marks(table.state))
            end = len(old) + 1
        self.lines, self.starts[top:end], self.per_line[top:end] = new, starts, per_line
        self.reorder(top, end, shift, firsts, range(top, top + len(per_line)))
        return LineMarks(self.per_line)

    def setext_heading(self, lines: list[str], top: int, underline: int, starts: list[Lines],
                       per_line: list[list[Mark]], firsts: dict[str, tuple[int, int, int]]) -> None:
        """Make the paragraph above a setext underline a heading: its lines get `heading`."""
        start = underline - 1
        while start > top and not self.entry(starts[start - top], lines[start])[2] & PARAGRAPH:
            start -= 1
        column = self.entry(starts[start - top], lines[start])[2] >> 16
        for index in range(start, underline):
            heading = (column if index == start else 0, None, "heading")
            per_line[index - top] = [*per_line[index - top], heading]
        firsts["heading"] = min(firsts.get("heading", (start, column, 0)), (start, column, 0))

    def reorder(self, top: int, end: int, shift: int, firsts: dict[str, tuple[int, int, int]],
                read: range) -> None:
        """Keep each name's first mark, now that the lines `read` replaced [top, end) (numbered
        before the edit), and put each line's marks in the order of those, as tree-sitter does."""
        first = {name: (line + shift if line >= end else line, byte, tie)
                 for name, (line, byte, tie) in self.first.items() if not top <= line < end}
        for name, place in firsts.items():
            first[name] = min(first.get(name, place), place)
        for name in set(self.first) - set(first):  # its first mark was edited away: find the next
            for line in range(read.stop, len(self.per_line)):
                starts = [start for start, _, named in self.per_line[line] if named == name]
                if starts:
                    first[name] = (line, min(starts), NAMES.index(name))
                    break
        order = sorted(first, key=first.__getitem__)
        kept = [name for name in sorted(self.first, key=self.first.__getitem__) if name in first]
        self.first, rank = first, {name: place for place, name in enumerate(order)}
        for line in read if [name for name in order if name in kept] == kept else range(len(self.per_line)):
            marks = self.per_line[line]
            if len(marks) > 1:
                self.per_line[line] = sorted(marks, key=lambda mark: rank[mark[2]])


def highlight_map(lines: Sequence[str]) -> dict[int, list[Mark]]:
    """The highlight map of a markdown document given as its lines (Textual's Document.lines)."""
    return MarkdownMarks().update(lines).as_dict()


def _common_prefix(old: list[str], new: list[str]) -> int:
    """How many lines the two lists share at the top: blocks compared in C, then lines."""
    top, size = 0, min(len(old), len(new))
    for step in (4096, 64, 1):
        while top + step <= size and old[top:top + step] == new[top:top + step]:
            top += step
    return top


def _common_suffix(old: list[str], new: list[str], top: int) -> int:
    """How many lines the two lists share at the bottom, below line `top`."""
    count, size = 0, min(len(old), len(new)) - top
    for step in (4096, 64, 1):
        while count + step <= size and (old[len(old) - count - step:len(old) - count]
                                        == new[len(new) - count - step:len(new) - count]):
            count += step
    return count


def _front_matter(lines: Sequence[str]) -> int:
    """How many lines a YAML (`---`) or TOML (`+++`) front matter block takes at the top."""
    opening = re.match(r" {0,3}(---|\+\+\+)[ \t]*$", lines[0]) if lines else None
    if opening:
        for index in range(1, len(lines)):
            if lines[index].rstrip(" \t") == opening[1]:
                return index + 1
    return 0
