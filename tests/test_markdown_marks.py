"""The editor's markdown highlighting without tree-sitter draws what tree-sitter drew: the same
marks on every line of a session log, in the same order where they overlap, and an edit
re-reads only the lines it changed.

The reference maps were recorded from Textual's own tree-sitter highlighting
(tests/fixtures/markdown/record.py). Tree-sitter returns the marks of one name in no stable
order; those share a style, so only the order of the names within a line is compared (the later
name is drawn on top), and each name's ranges as a set.
"""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets.text_area import Document

from cockpit.ui.editor.markdown_marks import MarkdownMarks, highlight_map

FIXTURES = Path(__file__).parent / "fixtures" / "markdown"
RECORDED = json.loads((FIXTURES / "highlights.json").read_text(encoding="utf-8"))


def drawn(marks: list[list[object]] | list[tuple[int, int | None, str]]) -> list[tuple[str, list[str]]]:
    """A line's marks as they are drawn: the names in order, each with its ranges."""
    names: dict[str, list[str]] = {}
    for start, end, name in marks:
        names.setdefault(str(name), []).append(f"{start}-{end}")
    return [(name, sorted(ranges)) for name, ranges in names.items()]


def ours(text: str) -> dict[str, list[tuple[str, list[str]]]]:
    return {str(line): drawn(marks) for line, marks in highlight_map(Document(text).lines).items()}


def theirs(recorded: dict[str, list[list[object]]]) -> dict[str, list[tuple[str, list[str]]]]:
    return {line: drawn(marks) for line, marks in recorded.items()}


def test_a_session_log_is_highlighted_as_tree_sitter_highlighted_it() -> None:
    text = (FIXTURES / "session.md").read_text(encoding="utf-8")
    expected = theirs(RECORDED["session.md"])
    assert {name for line in expected.values() for name, _ in line} == {
        "heading", "heading.marker", "text.literal", "punctuation.delimiter", "none", "link.uri",
        "link.label", "list.marker", "punctuation.special", "string.escape"}  # every name in the query
    assert ours(text) == expected


def test_the_known_differences_are_on_the_lines_the_scanner_says() -> None:
    """cockpit/ui/editor/markdown_blocks.py lists these: HTML blocks, link definitions over two lines,
    table header rows that tree-sitter finds by looking at the next line, and an angle-bracket
    link destination on the last line, which tree-sitter reads one way or the other."""
    for name, case in RECORDED["differences"].items():
        mine, recorded = ours(case["text"]), theirs(case["tree_sitter"])
        differing = sorted(int(line) for line in set(mine) | set(recorded) if mine.get(line) != recorded.get(line))
        assert differing == case["lines"], name


def test_lines_inside_a_fence_are_neither_headings_nor_list_items() -> None:
    marks = highlight_map(["# Plan", "```", "# not a heading", "- not an item", "```", "# Log"])
    names = {line: {name for _, _, name in marks[line]} for line in marks}
    assert "heading.marker" in names[0] and "heading.marker" in names[5]
    assert names[2] == names[3] == {"text.literal", "punctuation.special", "none"}


def test_a_setext_underline_makes_the_paragraph_above_a_heading() -> None:
    marks = highlight_map(["Pin the arch", "and the compiler", "---", "text"])
    assert marks[0] == [(0, None, "heading")] and marks[1] == [(0, None, "heading")]
    assert marks[2] == [(0, 0, "heading"), (0, 3, "heading.marker")]
    assert 3 not in marks


def test_the_name_first_captured_in_the_document_is_drawn_first() -> None:
    """An underline carries the heading's zero-width end, drawn over the whole line: after an
    ATX heading the marker's grey comes first and the heading's blue covers it, as with tree-sitter."""
    atx_first = highlight_map(["# Session", "", "Plan", "===="])
    setext_first = highlight_map(["Plan", "====", "", "# Session"])
    assert [name for _, _, name in atx_first[3]] == ["heading.marker", "heading"]
    assert [name for _, _, name in setext_first[1]] == ["heading", "heading.marker"]


def test_front_matter_is_not_highlighted() -> None:
    marks = highlight_map(["---", "title: attention", "---", "# Session"])
    assert sorted(marks) == [3]


def test_an_edit_rereads_only_the_lines_it_changed() -> None:
    lines = (FIXTURES / "session.md").read_text(encoding="utf-8").split("\n")
    marks = MarkdownMarks()
    marks.update(lines)
    before = marks.read
    lines[-2] += " and 0.69× at S=4096"  # typing at the end of the log
    assert marks.update(lines).as_dict() == highlight_map(lines)
    assert marks.read - before == 1


def test_every_edit_agrees_with_reading_the_document_afresh() -> None:
    lines = (FIXTURES / "session.md").read_text(encoding="utf-8").split("\n")
    marks = MarkdownMarks()
    edits = [
        (10, 10, ["```"]),  # a fence opened in the plan: every line below changes
        (10, 11, []),  # and closed again
        (40, 41, ["Pin the arch, twice"]),  # a setext heading's text
        (39, 40, ["------------", "more text", "==="]),  # its underline, then a second underline
        (0, 1, ["---", "title: x", "---"]),  # front matter above everything
        (0, 3, []),
        (75, 75, ["    indented", "", "    code"]),
        (len(lines) - 1, len(lines), ["[ref]: /url 'title'", "~~~", "unclosed"]),
    ]
    marks.update(lines)
    for start, end, new in edits:
        lines[start:end] = new
        assert marks.update(lines).as_dict() == highlight_map(lines), (start, end, new)
