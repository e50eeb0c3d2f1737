"""Text from journals, notes and gate output made safe to carry into a report: escape sequences
and control characters out, invalid UTF-8 already replaced; each format then escapes it its way."""

from __future__ import annotations

from cockpit.printable import printable


def clean_line(text: str) -> str:
    """One line: escape sequences dropped, tabs and newlines become spaces, other control
    characters become U+FFFD so something visible says a byte was there."""
    return printable(text, mark="\ufffd").replace("\t", " ").replace("\r\n", " ").replace("\n", " ")


def clean_value(value: object) -> str:
    """A value read from a journal or a result as one clean line; a missing one (None) as empty
    text, so a report never shows the word None where a fact was not recorded."""
    return clean_line(str(value)) if value is not None else ""


def clean_block(text: str) -> str:
    """Several lines (SESSION.md): as `clean_line`, but newlines kept and CRLF made LF."""
    return printable(text, mark="\ufffd").replace("\r\n", "\n").replace("\t", "    ")


def decode(data: bytes) -> str:
    """Bytes from disk as text; invalid UTF-8 shows as U+FFFD instead of failing the report."""
    return data.decode("utf-8", errors="replace")
