"""Front matter: a strict subset of YAML between two `---` lines, read and written without PyYAML.

The subset, and nothing else (anything outside it is an error naming the line):
- `key: value` lines at column 0; full-line `# comments` and blank lines;
- scalars: plain words, "double-quoted" (JSON escapes), 'single-quoted' ('' is a quote);
  whole numbers without leading zeros; the YAML words true/false/yes/no/on/off/null read
  as YAML reads them, so a text field holding one must be quoted;
- `key: >-` followed by indented lines of the same indentation: one paragraph folded into
  a single line (lines joined with one space);
- lists: `key: []`, `key: [a, "b"]`, or `- item` lines under the key, where an item is a
  scalar or a flat mapping written on one line: `- {regex: 'x', on: output}`.

Every value written this way means the same to any YAML 1.1 or 1.2 reader (values that
readers disagree on, such as 01, 1_000, 12:30 or 2025-10-12, must be quoted). One knowing
exception: keys are read literally, so `on:` is the key "on" (YAML 1.1 would read a boolean).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

Scalar = str | int | float | bool | None
Item = Scalar | Mapping[str, Scalar]


class FrontMatterError(Exception):
    """The front matter breaks the subset at `line` (1-based, counted in the whole file)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class ListItem:
    value: Item
    line: int


@dataclass(frozen=True)
class Field:
    key: str
    value: Scalar | tuple[ListItem, ...]
    line: int


@dataclass(frozen=True)
class Document:
    fields: Mapping[str, Field]
    body: str


FENCE = "---"
_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):(?:(\s+)(.*))?$")
_FLOW_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+\.[0-9]*)|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")
# Plain values that YAML 1.1 and 1.2 readers resolve differently: octal-looking, 1_000, 0x1f,
# exponents, sexagesimal 12:30, dates.
_AMBIGUOUS = re.compile(
    r"[-+]?0[0-9_]+|[-+]?[0-9][0-9_]*_[0-9_]*|[-+]?0[xXoObB][0-9a-fA-F_]+"
    r"|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+"
    r"|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?"
)
_TRUE = {"true", "True", "TRUE", "yes", "Yes", "YES", "y", "Y", "on", "On", "ON"}
_FALSE = {"false", "False", "FALSE", "no", "No", "NO", "n", "N", "off", "Off", "OFF"}
_NULL = {"", "~", "null", "Null", "NULL"}
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def split(text: str) -> Document:
    """The front matter's fields and the markdown body after the closing `---`."""
    lines = text.split("\n")
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines or lines[0].rstrip() != FENCE:
        raise FrontMatterError(1, "the file must start with a '---' line, then the front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip() == FENCE)
    except StopIteration:
        raise FrontMatterError(1, "the front matter has no closing '---' line") from None
    fields = _Parser(lines, end).fields()
    return Document(fields, "\n".join(lines[end + 1:]))


class _Parser:
    def __init__(self, lines: list[str], end: int) -> None:
        self.lines = lines
        self.end = end
        self.i = 1

    def fields(self) -> dict[str, Field]:
        out: dict[str, Field] = {}
        while self.i < self.end:
            number, line = self.i + 1, self.lines[self.i]
            self.i += 1
            if _is_blank_or_comment(line):
                continue
            if line[0] in " \t":
                raise FrontMatterError(number, "unexpected indentation; keys start at column 1")
            m = _KEY_LINE.match(line)
            if m is None:
                spaceless = re.match(r"^[A-Za-z_]\w*:\S", line)
                hint = "put a space after ':'" if spaceless else "expected 'key: value'"
                raise FrontMatterError(number, f"{hint}: {line.strip()[:60]!r}")
            key, rest = m.group(1), _strip_comment(m.group(3) or "")
            if key in out:
                raise FrontMatterError(number, f"{key}: given twice (first on line {out[key].line})")
            out[key] = Field(key, self.value(rest, number), number)
        return out

    def value(self, rest: str, number: int) -> Scalar | tuple[ListItem, ...]:
        if rest == "":
            items = self.block_list()
            return items if items else None
        if rest == ">-":
            return self.folded(number)
        if rest[0] in "|>":
            raise FrontMatterError(number, f"block style {rest!r} is not supported; "
                                           "use '>-' or a quoted string")
        if rest[0] == "[":
            return tuple(ListItem(v, number) for v in _flow_sequence(rest, number))
        if rest[0] == "{":
            raise FrontMatterError(number, "a {mapping} is only allowed as a list item ('- {...}')")
        return _scalar(rest, number)

    def block_list(self) -> tuple[ListItem, ...]:
        items: list[ListItem] = []
        indent: int | None = None
        while self.i < self.end:
            number, line = self.i + 1, self.lines[self.i]
            if _is_blank_or_comment(line):
                self.i += 1
                continue
            m = re.match(r"^( *)-(?: +(.*))?$", line)
            if m is None:
                if line[0] in " \t":
                    raise FrontMatterError(number, "expected a list item '- ...' (each item on one line)")
                break
            if "\t" in line[: len(m.group(1)) + 1]:
                raise FrontMatterError(number, "a tab in the indentation; indent with spaces")
            if indent is None:
                indent = len(m.group(1))
            elif len(m.group(1)) != indent:
                raise FrontMatterError(number, f"list items must line up ({indent} spaces before '-')")
            self.i += 1
            content = _strip_comment(m.group(2) or "")
            if content.startswith("{"):
                items.append(ListItem(_flow_mapping(content, number), number))
            elif re.match(r"^[A-Za-z_]\w*:(\s|$)", content):
                raise FrontMatterError(
                    number, "write a mapping item on one line in braces: - {key: value, key: value}")
            elif content.startswith("[") or content.startswith("- ") or content == "-":
                raise FrontMatterError(number, "nested lists are not supported")
            else:
                items.append(ListItem(_scalar(content, number), number))
        return tuple(items)

    def folded(self, number: int) -> str:
        words: list[str] = []
        indent: int | None = None
        while self.i < self.end:
            line = self.lines[self.i]
            if line.strip() == "":
                following = next((ln for ln in self.lines[self.i + 1:self.end] if ln.strip()), "")
                if indent is not None and following[:1] == " ":
                    raise FrontMatterError(self.i + 1, "a blank line inside a '>-' block; remove it")
                break
            if line[0] not in " \t":
                break
            lead = len(line) - len(line.lstrip(" \t"))
            if "\t" in line[:lead]:
                raise FrontMatterError(self.i + 1, "a tab in the indentation; indent with spaces")
            if indent is None:
                indent = lead
            elif lead != indent:
                raise FrontMatterError(self.i + 1, f"indent every line of a '>-' block by {indent} spaces")
            words.append(line[lead:])  # trailing spaces are content, as in YAML
            self.i += 1
        if not words:
            raise FrontMatterError(number, "'>-' must be followed by indented lines of text")
        return " ".join(words)


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return stripped == "" or stripped.startswith("#")


def _strip_comment(text: str) -> str:
    """`text` without a trailing ` # comment` (a `#` inside a quoted value is kept)."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        starts_value = i == 0 or text[i - 1] in " [{,"
        if ch == '"' and starts_value:
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == "'" and starts_value:
            i += 1
            while i < n and not (text[i] == "'" and text[i + 1:i + 2] != "'"):
                i += 2 if text[i] == "'" else 1
        elif ch == "#" and i > 0 and text[i - 1] in " \t":
            return text[:i].rstrip()
        i += 1
    return text.rstrip()


class _Cursor:
    """Reads one flow-style line: quoted strings, plain words, brackets."""

    def __init__(self, text: str, number: int) -> None:
        self.text = text
        self.pos = 0
        self.number = number

    def fail(self, message: str) -> FrontMatterError:
        return FrontMatterError(self.number, message)

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            found = repr(self.peek()) if self.peek() else "the end of the line"
            raise self.fail(f"expected {ch!r} at column {self.pos + 1}, found {found}")
        self.pos += 1

    def value(self, stops: str) -> Scalar:
        """A quoted value, or a plain one running up to the first character in `stops`."""
        ch = self.peek()
        if ch == '"':
            return self.double_quoted()
        if ch == "'":
            return self.single_quoted()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in stops:
            self.pos += 1
        return _plain(self.text[start:self.pos].strip(), self.number, flow=True)

    def double_quoted(self) -> str:
        self.pos += 1
        out: list[str] = []
        while True:
            if self.pos >= len(self.text):
                raise self.fail('a "quoted" value has no closing quote (values stay on one line)')
            ch = self.text[self.pos]
            self.pos += 1
            if ch == '"':
                return "".join(out)
            if ch != "\\":
                out.append(ch)
                continue
            esc = self.text[self.pos:self.pos + 1]
            self.pos += 1
            if esc in _ESCAPES:
                out.append(_ESCAPES[esc])
            elif esc == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.text[self.pos:self.pos + 4]):
                out.append(chr(int(self.text[self.pos:self.pos + 4], 16)))
                self.pos += 4
            else:
                raise self.fail(f"unknown escape '\\{esc}' in a \"quoted\" value; "
                                "use 'single quotes' to keep backslashes as they are")

    def single_quoted(self) -> str:
        self.pos += 1
        out: list[str] = []
        while True:
            end = self.text.find("'", self.pos)
            if end < 0:
                raise self.fail("a 'quoted' value has no closing quote (values stay on one line)")
            out.append(self.text[self.pos:end])
            if self.text[end + 1:end + 2] == "'":
                out.append("'")
                self.pos = end + 2
                continue
            self.pos = end + 1
            return "".join(out)

    def finish(self) -> None:
        self.skip_spaces()
        if self.pos != len(self.text):
            raise self.fail(f"unexpected text after the value: {self.text[self.pos:][:40]!r}")


def _scalar(text: str, number: int) -> Scalar:
    if text[0] in "'\"":
        cursor = _Cursor(text, number)
        value = cursor.value("")
        cursor.finish()
        return value
    return _plain(text, number, flow=False)


def _plain(text: str, number: int, flow: bool) -> Scalar:
    """A plain (unquoted) value, resolved the way every YAML reader resolves it."""
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _AMBIGUOUS.fullmatch(text):
        raise FrontMatterError(number, f"{text!r} means different things to different YAML readers; "
                                       "put it in quotes if it is text, or write the plain number")
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text[0] in _INDICATORS:
        raise FrontMatterError(number, f"{text[:40]!r} starts with {text[0]!r}, which YAML reads specially; "
                                       "put the value in quotes")
    if ": " in text or text.endswith(":"):
        raise FrontMatterError(number, f"{text[:40]!r} contains ': '; put the value in quotes")
    if flow and any(ch in text for ch in "[]{}"):
        raise FrontMatterError(number, f"{text[:40]!r} contains a bracket; put the value in quotes")
    return text


def _flow_sequence(text: str, number: int) -> list[Scalar]:
    cursor = _Cursor(text, number)
    cursor.expect("[")
    items: list[Scalar] = []
    cursor.skip_spaces()
    if cursor.peek() == "]":
        cursor.pos += 1
        cursor.finish()
        return items
    while True:
        cursor.skip_spaces()
        if cursor.peek() in "[{":
            raise cursor.fail("only plain values are allowed inside [ ]; use '- {...}' lines for mappings")
        items.append(cursor.value(",]"))
        cursor.skip_spaces()
        if cursor.peek() == "]":
            cursor.pos += 1
            cursor.finish()
            return items
        cursor.expect(",")


def _flow_mapping(text: str, number: int) -> dict[str, Scalar]:
    cursor = _Cursor(text, number)
    cursor.expect("{")
    out: dict[str, Scalar] = {}
    cursor.skip_spaces()
    if cursor.peek() == "}":
        raise cursor.fail("an empty mapping {}; remove the item or fill it in")
    while True:
        cursor.skip_spaces()
        m = _FLOW_KEY.match(cursor.text, cursor.pos)
        if m is None:
            raise cursor.fail(f"expected a key (letters, digits, _) at column {cursor.pos + 1}")
        key = m.group(0)
        cursor.pos = m.end()
        cursor.expect(":")
        if cursor.peek() not in (" ", ",", "}"):
            raise cursor.fail(f"put a space after '{key}:'")
        cursor.skip_spaces()
        if key in out:
            raise cursor.fail(f"'{key}' is given twice in one mapping")
        out[key] = cursor.value(",}")
        cursor.skip_spaces()
        if cursor.peek() == "}":
            cursor.pos += 1
            cursor.finish()
            return out
        cursor.expect(",")


# Writing ------------------------------------------------------------------------------------

FOLD_WIDTH = 92


def render_text(value: str) -> str:
    """A text value as it goes after `key: ` (plain when safe, else "double-quoted")."""
    if _plain_is_safe(value, flow=False):
        return value
    return json.dumps(value, ensure_ascii=False)


def render_paragraph(key: str, value: str) -> str:
    """`key: value` on one line, or `key: >-` and the text wrapped at FOLD_WIDTH columns."""
    one_line = f"{key}: {render_text(value)}"
    foldable = value == value.strip() and "  " not in value and "\n" not in value and "\t" not in value
    if len(one_line) <= FOLD_WIDTH or not foldable:
        return one_line
    wrapped = textwrap.wrap(value, FOLD_WIDTH - 2, break_long_words=False, break_on_hyphens=False)
    return "\n".join([f"{key}: >-", *(f"  {line}" for line in wrapped)])


def render_flow_value(value: str, quote_always: bool = False) -> str:
    """A value inside [ ] or { }: plain when safe, else 'single-quoted' (backslashes stay as is)."""
    if not quote_always and _plain_is_safe(value, flow=True):
        return value
    return "'" + value.replace("'", "''") + "'"


def render_list_item(value: str) -> str:
    return f"  - {render_text(value)}"


def render_mapping_item(pairs: Mapping[str, str], quoted: tuple[str, ...] = ()) -> str:
    inner = ", ".join(f"{k}: {render_flow_value(v, k in quoted)}" for k, v in pairs.items())
    return f"  - {{{inner}}}"


def _plain_is_safe(value: str, flow: bool) -> bool:
    if value != value.strip() or not value or any(ord(ch) < 32 or ch == "\x7f" for ch in value):
        return False
    if " #" in value or "\t" in value:
        return False
    try:
        return _plain(value, 0, flow) == value
    except FrontMatterError:
        return False
