"""One line of markdown at a time, read as tree-sitter-markdown's block parser reads it: which
open blocks continue on the line, which new ones start, and the highlight marks that gives.

A mark is (start byte, end byte or None for the line's end, highlight name) in the line's UTF-8
bytes, with the names and ranges of Textual's markdown highlight query over tree-sitter's tree
(textual/tree-sitter/highlights/markdown.scm), its quirks kept: the prefix that continues open
containers is `punctuation.special` (zero width inside a fenced code block), a block's first
token takes the blanks before it, a list marker takes the blanks after it, and a block that
ends with its line's newline ends on the next line, after that line's prefix.

Known differences from tree-sitter-markdown, all rare in a session log (each is recorded in
tests/fixtures/markdown/highlights.json and checked by tests/test_markdown_marks.py):
- HTML blocks are not recognised: their lines read as markdown (tree-sitter leaves them plain).
- A link reference definition is recognised on one line only.
- A pipe table is found at its delimiter row; tree-sitter looks ahead from the header row, so a
  header indented 4 columns after a paragraph, or one that continues a list item lazily, differs.
- `[x]: <a b>` on the text's last line is a definition here; tree-sitter reads it as text.
"""

from __future__ import annotations

import re
from typing import NamedTuple

Mark = tuple[int, int | None, str]
Block = str | int  # on the stack of open blocks: see State
Fence = tuple[str, int, bool]  # the fence's character, its length, whether it holds content yet
SPECIAL, LITERAL, CONTENT = "punctuation.special", "text.literal", "none"


class State(NamedTuple):
    """What is open where a line starts."""

    stack: tuple[Block, ...] = ()  # ">" quote, int list item (its content's indent, < 0 while
    # it holds nothing), "f" fenced code, "i" indented code
    leaf: str = ""  # "p" paragraph, "t" table, "d" link definitions, "b" indented code over blanks
    fence: Fence | None = None
    ended: tuple[str, ...] = ()  # names of the blocks that ended with the last line's newline
    header: int = 0  # cells of the paragraph's last line read as a table's header row


Scanned = tuple[list[Mark], State, int | None]
"""A line's marks, the state after it, and the byte where a paragraph starts on it (see scan_line)."""

LIST = re.compile(r"([-+*]|(\d{1,9})[.)])(?=[ \t]|$)")
THEMATIC = re.compile(r"(?:\*[ \t]*){3,}$|(?:-[ \t]*){3,}$|(?:_[ \t]*){3,}$")
UNDERLINE = re.compile(r"(?:=+|-+)[ \t]*$")
ATX = re.compile(r"(#{1,6})(?:[ \t]+|$)")
FENCE = re.compile(r"(`{3,}(?!.*`)|~{3,})(.*)")
DELIMITER_CELL = re.compile(r"[ \t]*:?-+:?[ \t]*")
DEFINITION = re.compile(rb"(\[(?:[^\[\]\\]|\\.)+\]):[ \t]*(?:(<[^<>\n]*>)|([^\s<]\S*)(?:[ \t]+"
                        rb"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?)[ \t]*$")
ESCAPE = re.compile(r"\\[!-/:-@\[-`{-~]")


class Cursor:
    """A place in the line: `pos` its index, `col` its column (tabs stop every 4 columns) and
    `ind` the blank columns read but not yet taken by a block."""

    def __init__(self, line: str, pos: int = 0, col: int = 0, ind: int = 0) -> None:
        self.line, self.pos, self.col, self.ind = line, pos, col, ind

    def copy(self) -> Cursor:
        return Cursor(self.line, self.pos, self.col, self.ind)

    def blanks(self, upto: int = 99) -> Cursor:
        line = self.line
        while self.ind < upto and self.pos < len(line) and line[self.pos] in " \t":
            width = 4 - self.col % 4 if line[self.pos] == "\t" else 1
            self.pos, self.col, self.ind = self.pos + 1, self.col + width, self.ind + width
        return self

    def past_quote_marker(self) -> None:
        self.pos, self.col = self.pos + 1, self.col + 1
        self.ind = 0
        self.ind = max(self.blanks(1).ind - 1, 0)  # one blank belongs to the marker

    @property
    def rest(self) -> str:
        return self.line[self.pos:]

    def byte(self, pos: int) -> int:
        return pos if self.line.isascii() else len(self.line[:pos].encode())


def continues(block: Block, at: Cursor) -> bool:
    """Does an open block continue on this line? Takes its prefix (a quote's `>`, an item's
    indent); blanks read by a block that does not continue stay read, as tree-sitter's do."""
    if block == ">":
        if not at.blanks().rest.startswith(">"):
            return False
        at.past_quote_marker()
        return True
    if isinstance(block, int) or block == "i":
        need = abs(block) if isinstance(block, int) else 4
        if at.blanks(need).ind >= need and (block != "i" or at.rest):
            at.ind -= need
            return True
        if at.rest or block == "i":
            return False
        at.ind = 0
        return True  # a blank line stays in a list item
    return True  # a fenced code block continues with no prefix


def interrupts(at: Cursor, setext: bool, lazy: bool) -> bool:
    """Does the rest of the line start a block that ends an open paragraph (or table)?"""
    probe = at.copy()
    rest = probe.blanks().rest
    if probe.ind >= 4:  # tree-sitter checks no indent for these; the line is then indented code
        quirks = r"(?:_[ \t]*){3,}$|\*[ \t]+\S" + (r"|=+[ \t]*$" if setext else "")
        return rest.startswith(">") or bool(FENCE.match(rest) or re.match(quirks, rest))
    if (setext and UNDERLINE.match(rest)) or THEMATIC.match(rest) or ATX.match(rest) or FENCE.match(rest):
        return True
    item = LIST.match(rest)
    if item is None:
        return rest.startswith(">")
    return lazy or (bool(rest[item.end():].strip(" \t")) and len(item.group(2) or "1") == 1)


def scan_line(state: State, line: str) -> Scanned:
    """The marks of `line` read in `state`, the state after it, and the byte where a paragraph
    starts on it; -1 when the line is a setext underline, which makes the open paragraph a
    heading (the caller marks the paragraph's lines)."""
    stack, leaf, fence, ended, header = state
    at = Cursor(line)
    matched = continued_blocks(stack, at)
    # Blocks that ended with the last line's newline end after the prefix this line continues
    # (or at 0); a fence ends there too, with any blanks a container read before it did not go on.
    newline_end = at.pos if matched else 0
    marks = prefix_marks(ended, at.pos, newline_end, matched > 0)
    all_matched, blank = matched == len(stack), not at.rest.strip(" \t")
    stack = settled_item(stack, all_matched, blank)
    if fence and all_matched:
        return fenced_line(at, marks, state._replace(stack=stack))
    if fence:  # its container ended
        marks += fence_end_marks(fence, at.pos, newline_end)
    if stack[-1:] == ("i",) or leaf == "b":
        code = indented_code_line(at, marks, state, matched, newline_end)
        if code is not None:
            return code
        leaf = ""
    in_paragraph = leaf == "p" and all_matched
    taken = leaf_takes(at, marks, stack, leaf, header, in_paragraph, all_matched, blank, newline_end)
    if taken is not None:
        return taken
    return open_blocks(at, marks, list(stack[:matched]), in_paragraph)


def leaf_takes(at: Cursor, marks: list[Mark], stack: tuple[Block, ...], leaf: str, header: int,
               in_paragraph: bool, all_matched: bool, blank: bool, newline_end: int) -> Scanned | None:
    """The open paragraph, table or link definitions taking the line (a delimiter row makes the
    paragraph a table); None when the line starts blocks of its own."""
    if in_paragraph and header and header == delimiter_cells(at.rest):
        return marks, State(stack, "t"), None
    if blank or not leaf_goes_on(leaf, all_matched) or interrupts(at, in_paragraph, not all_matched):
        return None
    if leaf == "d":  # a lazy line after a link definition
        return after_definition(at, marks, stack, newline_end)
    return marks, State(stack, leaf, header=header_cells(at.rest) if leaf == "p" else 0), None


def prefix_marks(ended: tuple[str, ...], prefix_end: int, newline_end: int, continued: bool) -> list[Mark]:
    """The marks before the line's own blocks: those of the blocks that ended with the last line's
    newline, then the prefix that continues the open containers (when one does)."""
    marks: list[Mark] = [(0, prefix_end if name == LITERAL else newline_end, name) for name in ended]
    if continued:
        marks.append((0, prefix_end, SPECIAL))
    return marks


def continued_blocks(stack: tuple[Block, ...], at: Cursor) -> int:
    """How many of the open blocks, outermost first, continue on the line (their prefixes taken)."""
    matched = 0
    while matched < len(stack) and continues(stack[matched], at):
        matched += 1
    return matched


def fence_end_marks(fence: Fence, prefix_end: int, newline_end: int) -> list[Mark]:
    """A fenced code block whose container ended: it ends after the prefix, its content (if any)
    with the last line's newline."""
    marks: list[Mark] = [(0, prefix_end, LITERAL)]
    return marks + ([(0, newline_end, CONTENT)] if fence[2] else [])


def settled_item(stack: tuple[Block, ...], all_matched: bool, blank: bool) -> tuple[Block, ...]:
    """A list item begun empty (its indent < 0), its containers all continued, ends at a blank
    line and holds content after any other."""
    if not all_matched or not stack or not isinstance(stack[-1], int) or stack[-1] >= 0:
        return stack
    return stack[:-1] if blank else (*stack[:-1], -stack[-1])


def leaf_goes_on(leaf: str, all_matched: bool) -> bool:
    """Does the open leaf take the line if nothing interrupts it? A paragraph even lazily (its
    containers not all continued), a table only inside them all, link definitions only lazily."""
    if leaf == "p":
        return True
    if leaf == "t":
        return all_matched
    return leaf == "d" and not all_matched


def indented_code_line(at: Cursor, marks: list[Mark], state: State, matched: int,
                       newline_end: int) -> Scanned | None:
    """A line in or after an indented code block; None once the block has ended (its end marked)."""
    stack, blank, code = state.stack, not at.rest.strip(" \t"), state.stack[-1:] == ("i",)
    if code and matched == len(stack):
        return [*marks, (0, None, LITERAL)], state, None
    if blank and ((code and matched == len(stack) - 1) or (state.leaf == "b" and matched == len(stack))):
        return [*marks, (0, None, LITERAL)], State(stack[:matched], "b"), None  # blanks stay inside
    if state.leaf == "b" and matched == len(stack) and at.copy().blanks().ind >= 4:  # its next chunk
        return [*marks, (0, None, LITERAL)], State((*stack, "i")), None
    marks.append((0, at.pos if code else newline_end, LITERAL))
    return None


def after_definition(at: Cursor, marks: list[Mark], stack: tuple[Block, ...],
                     newline_end: int) -> Scanned:
    """A lazy line after a link definition: indented code, another definition or a paragraph."""
    if at.copy().blanks().ind >= 4:
        return [*marks, (newline_end, None, LITERAL)], State((*stack, "i")), None
    more = definition(at.copy().blanks())
    if more is not None:
        return marks + more, State(stack, "d"), None
    return marks, State(stack, "p", header=header_cells(at.rest)), newline_end


def fenced_line(at: Cursor, marks: list[Mark], state: State) -> Scanned:
    """A line inside a fenced code block: its content, or the closing fence."""
    assert state.fence is not None
    char, length, content = state.fence
    start = at.pos
    closing = re.match(rf"[ \t]*{re.escape(char)}{{{length},}}[ \t]*$", at.rest)
    if closing and at.blanks().ind < 4:
        marks += [(0, None, LITERAL), (start, len(at.line.rstrip(" \t")), "punctuation.delimiter")]
        marks += [(0, start, CONTENT)] if content else []
        return marks, State(state.stack[:-1], ended=(LITERAL,)), None  # it ends on the next line
    marks += [(0, None, LITERAL), (0 if content else start, None, CONTENT)]
    return marks, state._replace(fence=(char, length, True)), None


def open_blocks(at: Cursor, marks: list[Mark], stack: list[Block],
                in_paragraph: bool) -> Scanned:
    """The blocks that start on the line after the containers it continues."""
    line = at.line
    while True:
        start = at.pos
        rest = at.blanks().rest
        if not rest:
            return marks, State(tuple(stack)), None
        if at.ind >= 4:
            return [*marks, (start, None, LITERAL)], State((*stack, "i")), None
        if in_paragraph and UNDERLINE.match(rest):  # the paragraph ends here, after the prefix
            marks += [(0, start, "heading"), (start, len(line), "heading.marker")]
            return marks, State(tuple(stack)), -1
        if THEMATIC.match(rest):
            return [*marks, (start, None, "list.marker")], State(tuple(stack), ended=("list.marker",)), None
        if rest.startswith(">"):
            at.past_quote_marker()
            marks.append((start, at.pos, SPECIAL))
            stack.append(">")
            in_paragraph = False
            continue
        item = LIST.match(rest)
        if item:
            at, in_paragraph = open_list_item(at, item, start, marks, stack), False
            continue
        return open_leaf(at, marks, stack, start, rest)


def open_list_item(at: Cursor, item: re.Match[str], start: int, marks: list[Mark],
                   stack: list[Block]) -> Cursor:
    """A list item's marker, marked; its content's indent on the stack (the marker's, plus the
    blanks after it up to 4, else 1); the cursor where its content starts."""
    line = at.line
    after = Cursor(line, at.pos + item.end(), at.col + item.end()).blanks()
    gap = after.ind if after.rest else 1
    indent = at.ind + len(item.group(1)) + (gap if gap <= 4 else 1)
    stack.append(indent if after.rest else -indent)
    marks.append((start, after.pos, "list.marker"))
    return Cursor(line, after.pos, after.col, gap - 1 if gap > 4 else 0)


def open_leaf(at: Cursor, marks: list[Mark], stack: list[Block], start: int, rest: str) -> Scanned:
    """The leaf block the line opens after its containers: a heading, a code fence, link
    definitions, else a paragraph."""
    line = at.line
    heading = ATX.match(rest)
    if heading:
        marks.append((start, at.pos + len(heading.group(1)), "heading.marker"))
        if rest[heading.end():].strip(" \t"):
            marks.append((at.byte(at.pos + heading.end()), at.byte(len(line.rstrip(" \t"))), "heading"))
        return marks, State(tuple(stack)), None
    fenced = FENCE.match(rest)
    if fenced:
        info = at.pos + fenced.start(2)
        marks += [(start, None, LITERAL), (start, at.pos + fenced.end(1), "punctuation.delimiter")]
        marks += escapes(line, info, len(line))
        return marks, State((*stack, "f"), fence=(fenced[1][0], len(fenced[1]), False)), None
    found = definition(at)
    if found is not None:
        return marks + found, State(tuple(stack), "d"), None
    return marks, State(tuple(stack), "p", header=header_cells(rest)), at.byte(start)


def escapes(line: str, start: int, end: int) -> list[Mark]:
    """The backslash escapes (`\\*`) between two places in the line."""
    return [(Cursor(line).byte(e.start()), Cursor(line).byte(e.end()), "string.escape")
            for e in ESCAPE.finditer(line, start, end)]


def definition(at: Cursor) -> list[Mark] | None:
    """The marks of a link reference definition, `[label]: destination "title"`, at `at`."""
    found = DEFINITION.match(at.rest.encode())
    if found is None:
        return None
    base, marks = at.byte(at.pos), []
    for group, name in ((1, "link.label"), (2, "link.uri"), (3, "link.uri"), (4, LITERAL)):
        if found[group]:
            marks.append((base + found.start(group), base + found.end(group), name))
    return marks + escapes(at.line, at.pos, len(at.line))


def header_cells(text: str) -> int:
    """The cells of a line read as a pipe table's header row; 0 when it has no `|`."""
    row = ESCAPE.sub("x", text.strip(" \t"))
    row = row[1:] if row.startswith("|") else row
    return row.count("|") + (not row.endswith("|")) if "|" in row else 0


def delimiter_cells(text: str) -> int:
    """The cells of a pipe table's delimiter row (`|---|:--:|`); 0 when it is not one."""
    row = text.strip(" \t")
    row = row[1:] if row.startswith("|") else row
    cells = (row[:-1] if row.endswith("|") else row).split("|")
    return len(cells) if all(DELIMITER_CELL.fullmatch(cell) for cell in cells) else 0


def end_marks(state: State) -> list[Mark]:
    """The marks on the line after the last: blocks still open end with the text's last newline."""
    marks: list[Mark] = [(0, 0, name) for name in state.ended]
    if state.fence:
        marks += [(0, 0, LITERAL)] + ([(0, 0, CONTENT)] if state.fence[2] else [])
    if state.stack[-1:] == ("i",) or state.leaf == "b":
        marks.append((0, 0, LITERAL))
    return marks
