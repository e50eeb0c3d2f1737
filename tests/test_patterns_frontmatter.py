"""The front-matter reader: the YAML subset the library writes, read strictly, every refusal
naming the line and what to write instead."""

from __future__ import annotations

import pytest

from cockpit.patterns.frontmatter import FrontMatterError, ListItem, split


def fields(front: str) -> dict[str, object]:
    doc = split(f"---\n{front}---\nbody\n")
    return {k: f.value for k, f in doc.fields.items()}


def test_scalars_resolve_as_yaml_resolves_them() -> None:
    got = fields(
        "a: plain text, with commas and C# and [brackets]\n"
        "b: \"quoted: \\\"escapes\\\" \\u00e9 \\\\ \\n\"\n"
        "c: 'single ''quoted'' \\d+ stays'\n"
        "d: 42\n"
        "e: -3\n"
        "f: 0.5\n"
        "g: yes\n"
        "h: Off\n"
        "i: ~\n"
        "j:\n"
        "k: text  # a comment\n"
        "l: \"# not a comment\"  # but this is\n"
    )
    assert got == {
        "a": "plain text, with commas and C# and [brackets]",
        "b": 'quoted: "escapes" é \\ \n',
        "c": "single 'quoted' \\d+ stays",
        "d": 42, "e": -3, "f": 0.5, "g": True, "h": False, "i": None, "j": None,
        "k": "text", "l": "# not a comment",
    }


def test_folded_paragraphs_and_lists() -> None:
    doc = split(
        "---\n"
        "# a comment line\n"
        "problem: >-\n"
        "  first line of a paragraph\n"
        "  and its second line: colons, # hashes and 'quotes' are text here\n"
        "empty: []\n"
        "flow: [a, 'b, c', 3]\n"
        "items:\n"
        "  - one\n"
        "\n"
        "  - {regex: 'x{2,3}', on: output, gate: build}\n"
        "zero_indent:\n"
        "- z\n"
        "---\n"
    )
    f = doc.fields
    assert f["problem"].value == ("first line of a paragraph and its second line: colons, "
                                  "# hashes and 'quotes' are text here")
    assert f["problem"].line == 3
    assert f["empty"].value == ()
    assert [i.value for i in f["flow"].value] == ["a", "b, c", 3]  # type: ignore[union-attr]
    assert f["items"].value == (ListItem("one", 9), ListItem({"regex": "x{2,3}", "on": "output", "gate": "build"}, 11))
    assert f["zero_indent"].value == (ListItem("z", 13),)
    assert doc.body == ""


def test_the_body_is_everything_after_the_closing_line() -> None:
    doc = split("---\na: 1\n---\n# Title\n\n---\nmore\n")
    assert doc.body == "# Title\n\n---\nmore\n"


def test_windows_line_endings_are_read_too() -> None:
    doc = split("---\r\na: text\r\nb:\r\n  - x\r\n---\r\nbody\r\n")
    assert doc.fields["a"].value == "text"
    assert doc.fields["b"].value == (ListItem("x", 4),)


@pytest.mark.parametrize(("text", "line", "says"), [
    ("title: x\n---\n", 1, "must start with a '---' line"),
    ("---\ntitle: x\n", 1, "no closing '---' line"),
    ("---\n  title: x\n---\n", 2, "unexpected indentation"),
    ("---\ntitle:x\n---\n", 2, "put a space after ':'"),
    ("---\njust words\n---\n", 2, "expected 'key: value'"),
    ("---\na: 1\nb: 2\na: 3\n---\n", 4, "a: given twice (first on line 2)"),
    ("---\na: |\n  text\n---\n", 2, "block style '|' is not supported"),
    ("---\na: >-\nb: 1\n---\n", 2, "'>-' must be followed by indented lines"),
    ("---\na: >-\n  one\n    two\n---\n", 4, "indent every line of a '>-' block by 2 spaces"),
    ("---\na: >-\n  one\n\n  two\n---\n", 4, "a blank line inside a '>-' block"),
    ("---\na: \"open\n---\n", 2, "no closing quote"),
    ("---\na: 'open\n---\n", 2, "no closing quote"),
    ("---\na: \"bad \\q escape\"\n---\n", 2, "unknown escape '\\q'"),
    ("---\na: \"x\" trailing\n---\n", 2, "unexpected text after the value"),
    ("---\na: key: value\n---\n", 2, "contains ': '; put the value in quotes"),
    ("---\na: *alias\n---\n", 2, "starts with '*', which YAML reads specially"),
    ("---\na: 2025-10-12\n---\n", 2, "means different things to different YAML readers"),
    ("---\na: 12:30\n---\n", 2, "means different things to different YAML readers"),
    ("---\na: 1e3\n---\n", 2, "means different things to different YAML readers"),
    ("---\na: {k: v}\n---\n", 2, "only allowed as a list item"),
    ("---\na:\n  - x\n    more text\n---\n", 4, "expected a list item"),
    ("---\na:\n  - x\n - y\n---\n", 4, "list items must line up"),
    ("---\na:\n  - k: v\n---\n", 3, "write a mapping item on one line in braces"),
    ("---\na:\n  - - x\n---\n", 3, "nested lists are not supported"),
    ("---\na:\n  - {k: v, k: w}\n---\n", 3, "'k' is given twice"),
    ("---\na:\n  - {k:v}\n---\n", 3, "put a space after 'k:'"),
    ("---\na:\n  - {k: v\n---\n", 3, "expected ',' at column"),
    ("---\na:\n  - {}\n---\n", 3, "an empty mapping"),
    ("---\na:\n  - {k: a[x]}\n---\n", 3, "contains a bracket; put the value in quotes"),
    ("---\na:\n  - {k: [x]}\n---\n", 3, "starts with '[', which YAML reads specially"),
    ("---\na: [x, {k: v}]\n---\n", 2, "only plain values are allowed inside [ ]"),
    ("---\n\ta: 1\n---\n", 2, "unexpected indentation"),
])
def test_anything_outside_the_subset_is_refused_with_its_line(text: str, line: int, says: str) -> None:
    with pytest.raises(FrontMatterError) as caught:
        split(text)
    assert caught.value.line == line
    assert says in caught.value.message
